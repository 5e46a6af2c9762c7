/* MSVC's <intrin.h> declares the compiler's intrinsics.  Under the clang
 * MSVC-mode pass neither stand-in fits: mingw-w64's copy (Debian sid's)
 * redeclares _mm_stream_ps against clang 21's xmmintrin.h, clang's own
 * copy redeclares _setjmp against mingw-w64's setjmp.h.  tpheal includes it
 * in harness/sim/os_sim.c only, for the Interlocked* functions, which
 * mingw-w64's winnt.h declares: this empty header stands in.  An intrinsic
 * used from <intrin.h> alone is reported undeclared by the pass -- a false
 * alarm to resolve here, never a silent pass. */

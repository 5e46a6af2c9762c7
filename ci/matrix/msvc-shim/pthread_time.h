/* mingw-w64's time.h pulls in winpthreads' pthread_time.h (clock_gettime,
 * nanosleep as static inline functions that newer mingw-w64 headers, e.g.
 * Debian sid's, declare in a way clang's MSVC mode rejects).  MSVC's UCRT
 * time.h has neither: the clang MSVC-mode pass sees this empty header in
 * its place, as MSVC would see no such functions. */

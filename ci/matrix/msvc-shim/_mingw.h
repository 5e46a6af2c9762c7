/* The clang MSVC-mode pass (ci/matrix/msvc-mode.sh) borrows mingw-w64's
 * Windows headers; their _mingw.h, seen by a compiler that is not GCC,
 * defines __attribute__ away and breaks clang's own intrinsic headers.
 * Only this header is read as by GCC (its macros then use __attribute__,
 * which clang knows); every other header and all of tpheal's code see the
 * MSVC-mode compiler: _MSC_VER set, __GNUC__ not. */
#ifndef __GNUC__
#define __GNUC__ 4
#define __GNUC_MINOR__ 2
#define TPHEAL_MSVC_SHIM_GNUC 1
#endif
#include_next <_mingw.h>
/* ... which, for GCC, defines these only where __declspec is a macro (GCC's
 * is; clang's is a keyword). */
#ifndef __MINGW_IMPORT
#define __MINGW_IMPORT __declspec(dllimport)
#endif
#ifndef _CRTIMP
#define _CRTIMP __declspec(dllimport)
#endif
#ifdef TPHEAL_MSVC_SHIM_GNUC
#undef __GNUC__
#undef __GNUC_MINOR__
#undef TPHEAL_MSVC_SHIM_GNUC
#endif

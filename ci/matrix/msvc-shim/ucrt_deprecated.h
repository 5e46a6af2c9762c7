/* Force-included by the clang MSVC-mode pass: the POSIX names the UCRT
 * declares deprecated (C4996 under /W4, "use _popen"), redeclared so here
 * because mingw-w64's headers do not mark them.  A call to one is then a
 * -Wdeprecated-declarations error, as it is under MSVC /W4 /WX. */
#include <stdio.h>
#include <string.h>
/* mingw-w64 maps some of them to the _ names by macro: the POSIX names are
 * the ones to mark. */
#undef popen
#undef pclose
#undef fileno
#undef strdup
#define TPHEAL_UCRT_POSIX_NAME __declspec(deprecated("C4996: MSVC deprecates this POSIX name; use the _-prefixed one"))
TPHEAL_UCRT_POSIX_NAME FILE *__cdecl popen(const char *, const char *);
TPHEAL_UCRT_POSIX_NAME int __cdecl pclose(FILE *);
TPHEAL_UCRT_POSIX_NAME int __cdecl fileno(FILE *);
TPHEAL_UCRT_POSIX_NAME char *__cdecl strdup(const char *);
#undef TPHEAL_UCRT_POSIX_NAME

/* Built on Windows only (CMakeLists.txt): on any other host no build
 * compiles it, so its mutants change nothing a test runs there. */
int fx_win32_only(int x)
{
    return x + 1;
}

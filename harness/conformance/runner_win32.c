/* The conformance runner on the real Windows thread pool (os_win32.c).
 * Each case runs directly in this process; objects it leaves behind would
 * leak into the next case, so every case drains and closes what it made. */
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <stdio.h>

#include "conf.h"

static void exec_direct(const conf_case *k, conf_ctx *ctx) { k->run(ctx); }

int main(int argc, char **argv) {
    /* Wine exports wine_get_version from ntdll; Windows does not. */
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    bool wine = ntdll && GetProcAddress(ntdll, "wine_get_version") != NULL;
    printf("conformance[win32]: running on %s\n", wine ? "Wine" : "Windows");
    return conf_run_all("win32", exec_direct, argc, argv);
}

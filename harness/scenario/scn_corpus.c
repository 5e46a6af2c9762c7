/* A directory's scenario files by name: `tpheal-harness list` and the tests
 * that walk the corpus read the same set in the same order. */
#ifndef _WIN32
#define _POSIX_C_SOURCE 200809L /* dirent */
#include <dirent.h>
#else
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "scn_ast.h"
#include "scn_text.h"

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool add_name(char ***names, size_t *n, size_t *cap, const char *name) {
    size_t l = strlen(name);
    if (l < 5 || strcmp(name + l - 4, ".scn") != 0) return true;
    if (*n == *cap) {
        char **nn = realloc(*names, (*cap = *cap ? *cap * 2 : 32) * sizeof **names);
        if (!nn) return false;
        *names = nn;
    }
    (*names)[(*n)++] = scn_strdup(name);
    return true;
}

bool scn_scenario_names(const char *dir, char ***names, size_t *n) {
    size_t cap = 0;
    *names = NULL;
    *n = 0;
#ifndef _WIN32
    DIR *d = opendir(dir);
    struct dirent *de;
    if (!d) return false;
    while ((de = readdir(d)) != NULL)
        if (!add_name(names, n, &cap, de->d_name)) break;
    closedir(d);
#else
    WIN32_FIND_DATAA fd;
    scn_text pattern = {0};
    HANDLE h;
    scn_text_printf(&pattern, "%s\\*.scn", dir);
    h = FindFirstFileA(pattern.s, &fd);
    scn_text_free(&pattern);
    if (h == INVALID_HANDLE_VALUE) return GetLastError() == ERROR_FILE_NOT_FOUND;
    do {
        if (!add_name(names, n, &cap, fd.cFileName)) break;
    } while (FindNextFileA(h, &fd));
    FindClose(h);
#endif
    if (*n) qsort(*names, *n, sizeof **names, cmp_str);
    return true;
}

void scn_scenario_names_free(char **names, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) free(names[i]);
    free(names);
}

/* The I/O fixture on Windows: the server end of a named pipe, opened
 * FILE_FLAG_OVERLAPPED and bound to the pool; an overlapped ReadFile is
 * issued and stays pending until the case writes that many bytes into the
 * client end -- so a completion arrives exactly when the case says. */
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>

#include "conf.h"

#define CONF_IO_SLOTS 8

struct conf_io {
    HANDLE server, client;
    OVERLAPPED ov[CONF_IO_SLOTS];
    char buf[CONF_IO_SLOTS][64];
    unsigned issued, finished;
};

conf_io *conf_io_open(void) {
    static volatile LONG serial;
    wchar_t name[96];
    conf_io *f = (conf_io *)calloc(1, sizeof *f);
    if (!f) return NULL;
    (void)swprintf(name, sizeof name / sizeof name[0], L"\\\\.\\pipe\\tpheal-conf-%lu-%ld",
                   (unsigned long)GetCurrentProcessId(), (long)InterlockedIncrement(&serial));
    f->server = CreateNamedPipeW(name, PIPE_ACCESS_INBOUND | FILE_FLAG_OVERLAPPED,
                                 PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT, 1, 4096, 4096,
                                 0, NULL);
    if (f->server == INVALID_HANDLE_VALUE) {
        free(f);
        return NULL;
    }
    f->client = CreateFileW(name, GENERIC_WRITE, 0, NULL, OPEN_EXISTING, 0, NULL);
    if (f->client == INVALID_HANDLE_VALUE) {
        CloseHandle(f->server);
        free(f);
        return NULL;
    }
    return f;
}

void *conf_io_handle(conf_io *f) { return f->server; }

void *conf_io_begin(conf_io *f) {
    if (f->issued - f->finished >= CONF_IO_SLOTS) return NULL;
    unsigned slot = f->issued % CONF_IO_SLOTS;
    OVERLAPPED *ov = &f->ov[slot];
    ZeroMemory(ov, sizeof *ov);
    /* One byte-exact read per finish: the read asks for what will be written. */
    if (ReadFile(f->server, f->buf[slot], (DWORD)sizeof f->buf[slot], NULL, ov) ||
        GetLastError() != ERROR_IO_PENDING) {
        /* Completed at once (or failed): the case expects a pending read. */
        return NULL;
    }
    f->issued++;
    return ov;
}

bool conf_io_finish(conf_io *f, uint32_t bytes) {
    char data[64] = {0};
    DWORD written = 0;
    if (f->finished == f->issued || bytes > sizeof data) return false;
    f->finished++;
    return WriteFile(f->client, data, bytes, &written, NULL) && written == bytes;
}

void conf_io_close(conf_io *f) {
    CloseHandle(f->client);
    CloseHandle(f->server);
    free(f);
}

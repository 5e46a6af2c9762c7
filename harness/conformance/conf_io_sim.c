/* The I/O fixture on the simulated pool: a sim file, completions posted with
 * sim_io_complete -- what a driver finishing an overlapped read would do. */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "sim.h"

#define CONF_IO_SLOTS 8

struct conf_io {
    void *file;
    int overlapped[CONF_IO_SLOTS]; /* stand-ins: only their addresses matter */
    unsigned issued, finished;
};

conf_io *conf_io_open(void) {
    conf_io *f = (conf_io *)calloc(1, sizeof *f);
    if (!f) return NULL;
    f->file = sim_file_create();
    if (!f->file) {
        free(f);
        return NULL;
    }
    return f;
}

void *conf_io_handle(conf_io *f) { return f->file; }

void *conf_io_begin(conf_io *f) {
    if (f->issued - f->finished >= CONF_IO_SLOTS) return NULL;
    return &f->overlapped[f->issued++ % CONF_IO_SLOTS];
}

bool conf_io_finish(conf_io *f, uint32_t bytes) {
    if (f->finished == f->issued) return false;
    void *ov = &f->overlapped[f->finished++ % CONF_IO_SLOTS];
    return sim_io_complete(f->file, ov, 0, bytes);
}

void conf_io_close(conf_io *f) { free(f); }

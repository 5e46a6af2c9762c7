#ifndef TPHEAL_ERROR_H
#define TPHEAL_ERROR_H
#include <tpheal/config.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every fallible call returns one of these; nothing in tpheal aborts on a bad
 * argument (fail-fast, when built in, is reserved for broken obligations). */
typedef enum tph_err {
    TPH_OK = 0,
    TPH_EINVAL = 1,  /* bad argument: NULL object, out-of-range value, wrong state */
    TPH_ENOMEM = 2,  /* an allocation or an OS object creation failed */
    TPH_EBUSY = 3,   /* the operation conflicts with the object's state (e.g. closed) */
} tph_err;

const char *tph_err_name(tph_err);

#endif

#ifndef TPHEAL_ERROR_H
#define TPHEAL_ERROR_H
#include <tpheal/config.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every fallible call returns one of these; nothing in tpheal aborts on a bad
 * argument (fail-fast, when built in, is reserved for broken obligations).
 * The list is written once: X(name, value, meaning) for each, read by the
 * enum, by tph_err_name and by the harness's result words (`=> EBUSY`). */
#define TPH_ERR_MAP(X)                                                                      \
    X(OK, 0, "success")                                                                     \
    X(EINVAL, 1, "bad argument: NULL object, out-of-range value, wrong state")              \
    X(ENOMEM, 2, "an allocation or an OS object creation failed")                           \
    X(EBUSY, 3, "the operation conflicts with the object's state (e.g. closed)")

typedef enum tph_err {
#define TPH_ERR_ENUM_(name, value, meaning) TPH_##name = value,
    TPH_ERR_MAP(TPH_ERR_ENUM_)
#undef TPH_ERR_ENUM_
} tph_err;

/* "TPH_OK", "TPH_EINVAL", ...; "TPH_E?" for a value outside the list. */
const char *tph_err_name(tph_err);

#endif

/* Names of the error values, for messages and test output. */
#include <tpheal/error.h>

const char *tph_err_name(tph_err e) {
    switch (e) {
    case TPH_OK: return "TPH_OK";
    case TPH_EINVAL: return "TPH_EINVAL";
    case TPH_ENOMEM: return "TPH_ENOMEM";
    case TPH_EBUSY: return "TPH_EBUSY";
    }
    return "TPH_E?";
}

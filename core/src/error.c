/* Names of the error values, for messages and test output. */
#include <tpheal/error.h>

const char *tph_err_name(tph_err e) {
    switch (e) {
#define TPH_ERR_CASE_(name, value, meaning) \
    case TPH_##name: return "TPH_" #name;
        TPH_ERR_MAP(TPH_ERR_CASE_)
#undef TPH_ERR_CASE_
    }
    return "TPH_E?";
}

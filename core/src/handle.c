/* Waitable handles: events tpheal makes, and handles adopted from the caller
 * together with the function that closes them. */
#include <tpheal/handle.h>

#include "object.h"

struct tph_handle {
    tph_os_event *os;
    void (*close_fn)(void *raw); /* NULL for an event tpheal created */
};

tph_err tph_event_create(tph_handle **out, bool manual_reset, bool initially_set) {
    tph_handle *h;
    if (out == NULL) return TPH_EINVAL;
    *out = NULL;
    h = (tph_handle *)tph_os_alloc(sizeof *h);
    if (h == NULL) return TPH_ENOMEM;
    h->close_fn = NULL;
    h->os = tph_os_event_create(manual_reset, initially_set);
    if (h->os == NULL) {
        tph_os_free(h);
        return TPH_ENOMEM;
    }
    *out = h;
    return TPH_OK;
}

tph_err tph_event_set(tph_handle *h) {
    /* Only our own events: an adopted handle may be any waitable object. */
    if (h == NULL || h->close_fn != NULL) return TPH_EINVAL;
    tph_os_event_set(h->os);
    return TPH_OK;
}

tph_err tph_event_reset(tph_handle *h) {
    if (h == NULL || h->close_fn != NULL) return TPH_EINVAL;
    tph_os_event_reset(h->os);
    return TPH_OK;
}

tph_err tph_handle_adopt(tph_handle **out, void *raw, void (*close_fn)(void *raw)) {
    tph_handle *h;
    if (out == NULL) return TPH_EINVAL;
    *out = NULL;
    if (raw == NULL || close_fn == NULL) return TPH_EINVAL;
    h = (tph_handle *)tph_os_alloc(sizeof *h);
    if (h == NULL) return TPH_ENOMEM;
    h->os = (tph_os_event *)raw;
    h->close_fn = close_fn;
    *out = h;
    return TPH_OK;
}

tph_err tph_handle_wait(tph_handle *h, uint32_t timeout_ms, bool *signalled) {
    uint32_t r;
    if (h == NULL) return TPH_EINVAL;
    r = tph_os_event_wait(h->os, timeout_ms);
    if (signalled) *signalled = r == TPH_OS_WAIT_SIGNALED;
    return TPH_OK;
}

tph_err tph_handle_close(tph_handle *h) {
    if (h == NULL) return TPH_EINVAL;
    if (h->close_fn)
        h->close_fn((void *)h->os);
    else
        tph_os_event_close(h->os);
    tph_os_free(h);
    return TPH_OK;
}

tph_os_event *tph_handle_os(const tph_handle *h) { return h ? h->os : NULL; }

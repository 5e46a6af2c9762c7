/* A run's failures as data (scn_failure.h): the kind table's expansions and
 * the failure list. */
#include "scn_failure.h"

#include <stdlib.h>
#include <string.h>

#include "scn_json.h"
#include "scn_text.h"

typedef struct kind_row {
    const char *name;
    bool fault_may_cause;
} kind_row;

static const kind_row KINDS[SCN_FAILURE_KIND_COUNT] = {
    {"none", false},
#define SCN_FAILURE_ROW(id, name, ok) {name, ok},
    SCN_FAILURE_KIND_MAP(SCN_FAILURE_ROW)
#undef SCN_FAILURE_ROW
};

const char *scn_failure_kind_name(scn_failure_kind k) {
    return (unsigned)k < SCN_FAILURE_KIND_COUNT ? KINDS[k].name : "?";
}

bool scn_failure_fault_may_cause(scn_failure_kind k) {
    return (unsigned)k < SCN_FAILURE_KIND_COUNT && KINDS[k].fault_may_cause;
}

bool scn_failure_same(const scn_failure *a, const scn_failure *b) {
    return a->kind == b->kind && a->line == b->line && a->subject == b->subject;
}

bool scn_failures_add(scn_failures *l, scn_failure_kind kind, int line, int subject, const char *message) {
    scn_failure *f;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        scn_failure *v = realloc(l->v, cap * sizeof *v);
        if (!v) return false;
        l->v = v;
        l->cap = cap;
    }
    f = &l->v[l->n];
    f->kind = kind;
    f->line = line;
    f->subject = subject;
    f->message = scn_strdup(message ? message : "");
    if (!f->message) return false;
    l->n++;
    return true;
}

bool scn_failures_copy(scn_failures *to, const scn_failures *from) {
    size_t i;
    for (i = 0; i < from->n; i++) {
        const scn_failure *f = &from->v[i];
        if (!scn_failures_add(to, f->kind, f->line, f->subject, f->message)) return false;
    }
    to->unshown += from->unshown;
    return true;
}

void scn_failures_append(scn_failures *to, scn_failures *from) {
    scn_failures_copy(to, from);
    scn_failures_free(from);
}

char *scn_failures_text(const scn_failures *l) {
    scn_text t = {0};
    size_t i;
    for (i = 0; i < l->n; i++) scn_text_printf(&t, "%s", l->v[i].message);
    if (l->unshown) scn_text_printf(&t, "(more failures not shown)\n");
    return scn_text_take(&t);
}

bool scn_failures_same(const scn_failures *a, const scn_failures *b) {
    size_t i;
    if (a->n != b->n || a->unshown != b->unshown) return false;
    for (i = 0; i < a->n; i++)
        if (!scn_failure_same(&a->v[i], &b->v[i])) return false;
    return true;
}

const scn_failure *scn_failures_first_not_fault_caused(const scn_failures *l) {
    size_t i;
    for (i = 0; i < l->n; i++)
        if (!scn_failure_fault_may_cause(l->v[i].kind)) return &l->v[i];
    return NULL;
}

void scn_failures_free(scn_failures *l) {
    size_t i;
    for (i = 0; i < l->n; i++) free(l->v[i].message);
    free(l->v);
    memset(l, 0, sizeof *l);
}

void scn_failures_json(struct scn_json *j, const scn_failures *l) {
    size_t i;
    scn_json_str(j, "kind", scn_failure_kind_name(l->n ? l->v[0].kind : SCN_FAILURE_NONE));
    scn_json_array(j, "kinds");
    for (i = 0; i < l->n; i++) scn_json_item_str(j, scn_failure_kind_name(l->v[i].kind));
    scn_json_close(j);
}

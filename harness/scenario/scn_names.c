/* The names the scenario language knows: trace points, operations, object
 * kinds, entry fields, faults.  One table each, shared by the parser, the
 * runner and `tpheal-harness list`, so a name is defined exactly once. */
#include <stdio.h>
#include <string.h>

#include <tpheal/error.h>

#include "scn_ast.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

bool scn_word_eq(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char x = (*a == '-') ? '_' : *a, y = (*b == '-') ? '_' : *b;
        if (x != y) return false;
    }
    return *a == *b;
}

/* ---- trace points ---------------------------------------------------------- */

typedef struct trace_point {
    const char *target;
    const char *name;
    bool has_pool; /* the record's first operand is the pool key */
    int b_unit;    /* SCN_B_* */
} trace_point;

static const trace_point points[] = {
#define SCN_POINT_ROW_(target, name, has_pool, b_unit) {target, name, has_pool, b_unit},
    SCN_TRACE_POINT_MAP(SCN_POINT_ROW_)
#undef SCN_POINT_ROW_
};

size_t scn_trace_point_count(void) { return COUNT(points); }

const char *scn_trace_point_name(int i) {
    return (i >= 0 && (size_t)i < COUNT(points)) ? points[i].name : "?";
}

const char *scn_trace_point_target(int i) {
    return (i >= 0 && (size_t)i < COUNT(points)) ? points[i].target : "?";
}

bool scn_trace_point_has_pool(int i) {
    return i >= 0 && (size_t)i < COUNT(points) && points[i].has_pool;
}

int scn_trace_point_b_unit(int i) {
    return (i >= 0 && (size_t)i < COUNT(points)) ? points[i].b_unit : SCN_B_PLAIN;
}

int scn_trace_point_find(const char *name) {
    size_t i;
    for (i = 0; i < COUNT(points); i++)
        if (strcmp(points[i].name, name) == 0) return (int)i;
    return -1;
}

/* ---- operations ------------------------------------------------------------ */

static const struct {
    const char *word;
    unsigned operand_kinds;
} ops[SCN_OP_KIND_COUNT] = {
#define SCN_OP_ROW_(op, word, kinds) {word, kinds},
    SCN_OP_MAP(SCN_OP_ROW_)
#undef SCN_OP_ROW_
};

static const struct {
    const char *word;
    scn_op_kind op;
} op_aliases[] = {
#define SCN_OP_ALIAS_ROW_(word, op) {word, SCN_OP_##op},
    SCN_OP_ALIAS_MAP(SCN_OP_ALIAS_ROW_)
#undef SCN_OP_ALIAS_ROW_
};

const char *scn_op_name(scn_op_kind k) {
    return ((unsigned)k < SCN_OP_KIND_COUNT) ? ops[k].word : "?";
}

unsigned scn_op_operand_kinds(scn_op_kind k) {
    return ((unsigned)k < SCN_OP_KIND_COUNT) ? ops[k].operand_kinds : 0;
}

int scn_op_find(const char *word) {
    size_t i;
    for (i = 0; i < SCN_OP_KIND_COUNT; i++)
        if (scn_word_eq(word, ops[i].word)) return (int)i;
    for (i = 0; i < COUNT(op_aliases); i++)
        if (scn_word_eq(word, op_aliases[i].word)) return (int)op_aliases[i].op;
    return -1;
}

/* ---- object kinds and fields ----------------------------------------------- */

static const char *const kind_names[SCN_OBJ_KIND_COUNT] = {
#define SCN_KIND_ROW_(kind, word) word,
    SCN_OBJ_KIND_MAP(SCN_KIND_ROW_)
#undef SCN_KIND_ROW_
};

const char *scn_obj_kind_name(scn_obj_kind k) {
    return ((unsigned)k < SCN_OBJ_KIND_COUNT) ? kind_names[k] : "?";
}

static const char *const field_names[SCN_FIELD_COUNT] = {
#define SCN_FIELD_ROW_(field, word) word,
    SCN_FIELD_MAP(SCN_FIELD_ROW_)
#undef SCN_FIELD_ROW_
};

const char *scn_field_name(scn_field f) {
    return ((unsigned)f < SCN_FIELD_COUNT) ? field_names[f] : "?";
}

/* ---- faults ---------------------------------------------------------------- */

static const struct {
    const char *word;
    bool takes_pool;
} faults[SCN_FAULT_KIND_COUNT] = {
#define SCN_FAULT_ROW_(fault, word, site, takes_pool) {word, takes_pool},
    SCN_FAULT_MAP(SCN_FAULT_ROW_)
#undef SCN_FAULT_ROW_
};

const char *scn_fault_name(scn_fault_kind k) {
    return ((unsigned)k < SCN_FAULT_KIND_COUNT) ? faults[k].word : "?";
}

int scn_fault_find(const char *word) {
    int k;
    for (k = 0; k < SCN_FAULT_KIND_COUNT; k++)
        if (scn_word_eq(word, faults[k].word)) return k;
    return -1;
}

bool scn_fault_takes_pool(scn_fault_kind k) {
    return (unsigned)k < SCN_FAULT_KIND_COUNT && faults[k].takes_pool;
}

/* ---- results --------------------------------------------------------------- */

/* The language writes success as `ok`, like its other words, and an error
 * by the core's name for it without the TPH_ prefix. */
static const struct {
    const char *word;
    int value;
} results[] = {
#define SCN_RESULT_ROW_(name, value, meaning) {#name, value},
    TPH_ERR_MAP(SCN_RESULT_ROW_)
#undef SCN_RESULT_ROW_
};

static const char *result_word(size_t i) { return results[i].value == TPH_OK ? "ok" : results[i].word; }

const char *scn_result_name(int result) {
    size_t i;
    for (i = 0; i < COUNT(results); i++)
        if (results[i].value == result) return result_word(i);
    return "any";
}

int scn_result_find(const char *word, int *result) {
    size_t i;
    for (i = 0; i < COUNT(results); i++)
        if (scn_word_eq(word, result_word(i))) {
            *result = results[i].value;
            return 1;
        }
    if (scn_word_eq(word, "any")) {
        *result = SCN_RESULT_ANY;
        return 1;
    }
    return 0;
}

void scn_result_words(char *buf, size_t size) {
    size_t i, n = 0;
    if (size == 0) return;
    buf[0] = '\0';
    for (i = 0; i < COUNT(results) && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s, ", result_word(i));
    if (n < size) snprintf(buf + n, size - n, "any");
}

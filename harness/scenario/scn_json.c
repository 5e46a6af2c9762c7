/* The harness's one JSON writer (scn_json.h). */
#include "scn_json.h"

#include <assert.h>

/* A quoted JSON string: `"` and `\` escaped, newline as \n, other control
 * bytes as \u00XX, everything else (UTF-8 included) as it is. */
static void json_string(FILE *f, const char *s) {
    const unsigned char *p;
    fputc('"', f);
    for (p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') {
            fputc('\\', f);
            fputc(*p, f);
        } else if (*p == '\n') {
            fputs("\\n", f);
        } else if (*p < 0x20) {
            fprintf(f, "\\u%04x", (unsigned)*p);
        } else {
            fputc(*p, f);
        }
    }
    fputc('"', f);
}

void scn_json_begin(scn_json *j, FILE *f, const char *type) {
    j->f = f;
    j->depth = 0;
    j->close[0] = '}';
    j->empty[0] = false; /* "v" and "type" are in it */
    fprintf(f, "{\"v\":%d,\"type\":", SCN_JSON_VERSION);
    json_string(f, type);
}

/* The comma before the next member of the innermost container, unless it is
 * the first. */
static void next_member(scn_json *j) {
    if (!j->empty[j->depth]) fputc(',', j->f);
    j->empty[j->depth] = false;
}

static void key(scn_json *j, const char *k) {
    assert(j->close[j->depth] == '}'); /* a field belongs to an object */
    next_member(j);
    json_string(j->f, k);
    fputc(':', j->f);
}

static void open_container(scn_json *j, char open_c, char close_c) {
    assert(j->depth < SCN_JSON_MAX_DEPTH);
    fputc(open_c, j->f);
    j->depth++;
    j->close[j->depth] = close_c;
    j->empty[j->depth] = true;
}

void scn_json_array(scn_json *j, const char *k) {
    key(j, k);
    open_container(j, '[', ']');
}

void scn_json_object(scn_json *j, const char *k) {
    key(j, k);
    open_container(j, '{', '}');
}

void scn_json_item_object(scn_json *j) {
    assert(j->close[j->depth] == ']'); /* an element belongs to an array */
    next_member(j);
    open_container(j, '{', '}');
}

void scn_json_item_str(scn_json *j, const char *s) {
    assert(j->close[j->depth] == ']');
    next_member(j);
    json_string(j->f, s);
}

void scn_json_item_u64(scn_json *j, uint64_t v) {
    assert(j->close[j->depth] == ']');
    next_member(j);
    fprintf(j->f, "%llu", (unsigned long long)v);
}

void scn_json_close(scn_json *j) {
    assert(j->depth > 0); /* the line's own object ends with scn_json_end */
    fputc(j->close[j->depth], j->f);
    j->depth--;
}

void scn_json_str(scn_json *j, const char *k, const char *s) {
    key(j, k);
    json_string(j->f, s);
}

void scn_json_u64(scn_json *j, const char *k, uint64_t v) {
    key(j, k);
    fprintf(j->f, "%llu", (unsigned long long)v);
}

void scn_json_hex(scn_json *j, const char *k, uint64_t v) {
    key(j, k);
    fprintf(j->f, "\"0x%016llx\"", (unsigned long long)v);
}

void scn_json_bool(scn_json *j, const char *k, bool v) {
    key(j, k);
    fputs(v ? "true" : "false", j->f);
}

void scn_json_fixed(scn_json *j, const char *k, int decimals, double v) {
    key(j, k);
    fprintf(j->f, "%.*f", decimals, v);
}

void scn_json_pair(scn_json *j, const char *k, uint64_t a, uint64_t b) {
    key(j, k);
    fprintf(j->f, "[%llu,%llu]", (unsigned long long)a, (unsigned long long)b);
}

void scn_json_end(scn_json *j) {
    assert(j->depth == 0);
    fputs("}\n", j->f);
    fflush(j->f);
}

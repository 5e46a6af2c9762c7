/* The harness's one JSON writer (scn_json.h). */
#include "scn_json.h"

void scn_json_string(FILE *f, const char *s) {
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
    fprintf(f, "{\"v\":%d,\"type\":", SCN_JSON_VERSION);
    scn_json_string(f, type);
}

void scn_json_key(scn_json *j, const char *key) {
    fputc(',', j->f);
    scn_json_string(j->f, key);
    fputc(':', j->f);
}

void scn_json_str(scn_json *j, const char *key, const char *s) {
    scn_json_key(j, key);
    scn_json_string(j->f, s);
}

void scn_json_u64(scn_json *j, const char *key, uint64_t v) {
    scn_json_key(j, key);
    fprintf(j->f, "%llu", (unsigned long long)v);
}

void scn_json_hex(scn_json *j, const char *key, uint64_t v) {
    scn_json_key(j, key);
    fprintf(j->f, "\"0x%016llx\"", (unsigned long long)v);
}

void scn_json_bool(scn_json *j, const char *key, bool v) {
    scn_json_key(j, key);
    fputs(v ? "true" : "false", j->f);
}

void scn_json_fixed(scn_json *j, const char *key, int decimals, double v) {
    scn_json_key(j, key);
    fprintf(j->f, "%.*f", decimals, v);
}

void scn_json_pair(scn_json *j, const char *key, uint64_t a, uint64_t b) {
    scn_json_key(j, key);
    fprintf(j->f, "[%llu,%llu]", (unsigned long long)a, (unsigned long long)b);
}

void scn_json_end(scn_json *j) {
    fputs("}\n", j->f);
    fflush(j->f);
}

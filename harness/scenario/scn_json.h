/* The harness's one JSON writer.  Every object tpheal-harness prints on
 * stdout (run/verify --json, stress-batch, stress-faultloop) is one line that
 * begins with the contract's version and the object's type:
 *     {"v":1,"type":"failure",...}
 * harness/json-schema.json says which fields each type carries; ci/ reads
 * these lines through ci/harness_json.py, which refuses another version.
 * Bump SCN_JSON_VERSION when a field changes meaning or goes away (adding
 * one does not), and the schema with it. */
#ifndef TPH_SCN_JSON_H
#define TPH_SCN_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SCN_JSON_VERSION 1

typedef struct scn_json {
    FILE *f;
} scn_json;

/* {"v":1,"type":"<type>" -- the fields follow, each with its leading comma. */
void scn_json_begin(scn_json *j, FILE *f, const char *type);
void scn_json_str(scn_json *j, const char *key, const char *s); /* NULL prints "" */
void scn_json_u64(scn_json *j, const char *key, uint64_t v);
void scn_json_hex(scn_json *j, const char *key, uint64_t v); /* "0x%016llx", a string */
void scn_json_bool(scn_json *j, const char *key, bool v);
void scn_json_fixed(scn_json *j, const char *key, int decimals, double v);
void scn_json_pair(scn_json *j, const char *key, uint64_t a, uint64_t b); /* [a,b] */
/* ,"key": with the value left to the caller (an array or an object). */
void scn_json_key(scn_json *j, const char *key);
/* }, a newline, and a flush: a line is out before anything that may crash. */
void scn_json_end(scn_json *j);

/* A quoted JSON string: `"` and `\` escaped, newline as \n, other control
 * bytes as \u00XX, everything else (UTF-8 included) as it is. */
void scn_json_string(FILE *f, const char *s);

#endif

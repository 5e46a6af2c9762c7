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

/* Arrays and objects nest inside the line's object up to this depth (a batch
 * uses two: its failures array and each failure in it). */
#define SCN_JSON_MAX_DEPTH 4

typedef struct scn_json {
    FILE *f;
    int depth;                             /* containers open inside the line's object */
    char close[SCN_JSON_MAX_DEPTH + 1];    /* what ends each: ']' or '}' */
    bool empty[SCN_JSON_MAX_DEPTH + 1];    /* nothing in it yet: no comma before the next */
} scn_json;

/* {"v":1,"type":"<type>" -- the fields follow.  Every call below writes one
 * field of the innermost open object (or, for the _item calls, one element
 * of the innermost open array) with the comma it needs. */
void scn_json_begin(scn_json *j, FILE *f, const char *type);
void scn_json_str(scn_json *j, const char *key, const char *s); /* NULL prints "" */
void scn_json_u64(scn_json *j, const char *key, uint64_t v);
void scn_json_hex(scn_json *j, const char *key, uint64_t v); /* "0x%016llx", a string */
void scn_json_bool(scn_json *j, const char *key, bool v);
void scn_json_fixed(scn_json *j, const char *key, int decimals, double v);
void scn_json_pair(scn_json *j, const char *key, uint64_t a, uint64_t b); /* [a,b] */
/* Nested values: "key":[ and "key":{ open a field's array or object;
 * scn_json_item_object opens an object as the next element of the open
 * array; scn_json_item_str writes a string element; scn_json_close ends the
 * innermost open one.  Fields and elements of the nested ones are written
 * with the same calls as the line's own. */
void scn_json_array(scn_json *j, const char *key);
void scn_json_object(scn_json *j, const char *key);
void scn_json_item_object(scn_json *j);
void scn_json_item_str(scn_json *j, const char *s);
void scn_json_item_u64(scn_json *j, uint64_t v);
void scn_json_close(scn_json *j);
/* }, a newline, and a flush: a line is out before anything that may crash.
 * Every nested array and object must have been closed. */
void scn_json_end(scn_json *j);

#endif

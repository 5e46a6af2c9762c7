/* The harness's JSON writer (scn_json.c), byte for byte: ci/ parses these
 * lines with a JSON parser, which accepts many spellings of one string, so
 * a change of spelling (a space written as \u0020) would pass every pytest
 * file and still change what a user diffs or greps.  Each case writes one
 * line through the public calls and compares the whole of it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "scn_json.h"

/* What `write` printed, in buf (NUL-terminated). */
static void written(void (*write)(scn_json *j), char *buf, size_t size) {
    FILE *f = tmpfile();
    scn_json j;
    size_t n;
    assert_non_null(f);
    scn_json_begin(&j, f, "t");
    write(&j);
    scn_json_end(&j);
    rewind(f);
    n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void expect_written(void (*write)(scn_json *j), const char *want) {
    char got[1024];
    written(write, got, sizeof got);
    if (strcmp(got, want) != 0) fail_msg("wrote\n  %s\nexpected\n  %s", got, want);
}

/* Every byte class of a string: the two escaped by a backslash, newline,
 * the other control bytes (the first, tab, the last: 0x1f), and what is
 * written as it is -- space (0x20, the first byte that is not a control),
 * DEL, UTF-8. */
static void strings(scn_json *j) {
    scn_json_str(j, "q", "a\"b\\c");
    scn_json_str(j, "nl", "x\ny");
    scn_json_str(j, "ctl", "\x01\t\x1f");
    scn_json_str(j, "plain", "a b\x7f\xc3\xa9~");
    scn_json_str(j, "null", NULL);
}
static void a_string_is_escaped_where_json_requires_and_nowhere_else(void **state) {
    (void)state;
    expect_written(strings, "{\"v\":1,\"type\":\"t\",\"q\":\"a\\\"b\\\\c\",\"nl\":\"x\\ny\","
                            "\"ctl\":\"\\u0001\\u0009\\u001f\",\"plain\":\"a b\x7f\xc3\xa9~\",\"null\":\"\"}\n");
}

static void numbers(scn_json *j) {
    scn_json_u64(j, "u", UINT64_MAX);
    scn_json_hex(j, "h", 0xabcull);
    scn_json_bool(j, "t", true);
    scn_json_bool(j, "f", false);
    scn_json_fixed(j, "x", 2, 2.0 / 3.0);
    scn_json_fixed(j, "y", 0, 2.75);
    scn_json_pair(j, "p", 0, 7);
}
static void numbers_are_written_in_full(void **state) {
    (void)state;
    expect_written(numbers, "{\"v\":1,\"type\":\"t\",\"u\":18446744073709551615,\"h\":\"0x0000000000000abc\","
                            "\"t\":true,\"f\":false,\"x\":0.67,\"y\":3,\"p\":[0,7]}\n");
}

/* Commas: none before the first member of a container, one before each
 * other; empty containers; the deepest nesting the header allows (4). */
static void nested(scn_json *j) {
    scn_json_array(j, "e");
    scn_json_close(j);
    scn_json_object(j, "o");
    scn_json_close(j);
    scn_json_array(j, "a");
    scn_json_item_str(j, "s");
    scn_json_item_object(j);
    scn_json_u64(j, "n", 1);
    scn_json_array(j, "b");
    scn_json_item_object(j);
    scn_json_close(j);
    scn_json_item_str(j, "z");
    scn_json_close(j);
    scn_json_close(j);
    scn_json_item_str(j, "t");
    scn_json_close(j);
    scn_json_u64(j, "last", 2);
}
static void containers_nest_with_their_commas(void **state) {
    (void)state;
    expect_written(nested, "{\"v\":1,\"type\":\"t\",\"e\":[],\"o\":{},\"a\":[\"s\",{\"n\":1,\"b\":[{},\"z\"]},\"t\"],"
                           "\"last\":2}\n");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_string_is_escaped_where_json_requires_and_nowhere_else),
        cmocka_unit_test(numbers_are_written_in_full),
        cmocka_unit_test(containers_nest_with_their_commas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

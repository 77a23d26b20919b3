/*
 * test_json.c: nvq's JSON writer (nvq/json.c), table-driven: how strings
 * are escaped (what JSON requires and what a terminal would act on), how
 * numbers are written, and objects and arrays in the order they were built.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "json.h"

/* v as json_print writes it, v freed; the caller frees the text. */
static char *
test_text(struct json *v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	assert_non_null(fp);
	json_print(fp, v);
	fclose(fp);
	json_free(v);
	return buf;
}

static void
test_strings(void **state)
{
	static const struct { const char *in, *out; } t[] = {
		{ "", "\"\"" },
		{ "plain", "\"plain\"" },
		{ "a\"b\\c", "\"a\\\"b\\\\c\"" },
		{ "\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"" },
		/* other C0 controls, ESC among them, and DEL */
		{ "\x01\x1b[31m\x1f\x7f", "\"\\u0001\\u001b[31m\\u001f\\u007f\"" },
		/* C1 controls in UTF-8 (U+009B is the CSI a terminal acts on) */
		{ "x\xc2\x9b" "2J\xc2\x80", "\"x\\u009b2J\\u0080\"" },
		/* the rest of UTF-8 goes through: U+00A0, U+00E9, U+20AC */
		{ "\xc2\xa0\xc3\xa9\xe2\x82\xac", "\"\xc2\xa0\xc3\xa9\xe2\x82\xac\"" },
		/* a lone 0xc2 at the end is not read past; it is not UTF-8: U+FFFD */
		{ "z\xc2", "\"z\\ufffd\"" },
		/* a raw 0x9b (a CSI on 8-bit terminals), and U+202E (right-to-left override) */
		{ "a\x9b" "2J\xe2\x80\xae" "b", "\"a\\ufffd2J\\u202eb\"" },
	};
	size_t i;
	char *s;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		s = test_text(json_string(t[i].in));
		assert_string_equal(s, t[i].out);
		free(s);
	}
}

static void
test_numbers(void **state)
{
	static const struct { double in; const char *out; } t[] = {
		{ 0, "0" }, { -2, "-2" }, { 42, "42" }, { 1700000000, "1700000000" },
		{ 9007199254740991.0, "9007199254740991" },
		{ 0.5, "0.5" }, { -1.25, "-1.25" }, { 0.1, "0.1" },
		/* needs 17 digits to come back the same */
		{ 0.30000000000000004, "0.30000000000000004" },
		{ 1e300, "1e+300" },
	};
	size_t i;
	char *s;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		s = test_text(json_number(t[i].in));
		assert_string_equal(s, t[i].out);
		assert_true(strtod(s, NULL) == t[i].in);
		free(s);
	}
	/* JSON has no infinity nor NaN */
	s = test_text(json_number(INFINITY));
	assert_string_equal(s, "null");
	free(s);
	s = test_text(json_number(NAN));
	assert_string_equal(s, "null");
	free(s);
}

static void
test_tree(void **state)
{
	struct json *o = json_object(), *a = json_array(), *inner = json_object();
	char *s;

	(void)state;
	json_add(o, "id", json_number(7));
	json_add(o, "name", json_string("x\ny"));
	json_add(o, "at", json_raw("1700000000.500"));
	json_add(o, "held", json_bool(1));
	json_add(o, "done", json_bool(0));
	json_add(o, "user", json_null());
	json_add(a, NULL, json_number(1));
	json_add(a, NULL, json_string("two"));
	json_add(inner, "k\"ey", json_array());
	json_add(a, NULL, inner);
	json_add(o, "list", a);
	s = test_text(o);
	assert_string_equal(s, "{\"id\":7,\"name\":\"x\\ny\",\"at\":1700000000.500,\"held\":true,"
	    "\"done\":false,\"user\":null,\"list\":[1,\"two\",{\"k\\\"ey\":[]}]}");
	free(s);
	s = test_text(json_object());
	assert_string_equal(s, "{}");
	free(s);
	s = test_text(NULL);
	assert_string_equal(s, "null");
	free(s);
}

/* What json_add cannot place it frees (ASan's leak check sees it), and the tree stays as it was. */
static void
test_add_misuse(void **state)
{
	struct json *o = json_object(), *a = json_array(), *n = json_number(1);
	char *s;

	(void)state;
	json_add(o, NULL, json_string("no key"));	/* an object's member needs a key */
	json_add(n, "k", json_string("in a number"));	/* a scalar holds nothing */
	json_add(NULL, "k", json_string("nowhere"));
	json_add(o, "k", NULL);				/* nothing to add */
	json_add(a, NULL, json_number(2));
	json_add(o, "a", a);
	s = test_text(o);
	assert_string_equal(s, "{\"a\":[2]}");
	free(s);
	s = test_text(n);
	assert_string_equal(s, "1");
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_add_misuse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_intr.c: nvq/intr.c, the double Ctrl-C of nvq run on a terminal: a
 * table of reads (bytes, time, the job's VINTR or none) and where each
 * says to cancel.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "intr.h"

struct step {
	const char	*bytes;
	double		at;
	int		vintr;		/* -1: ISIG off */
	int		cancel_at;	/* -1: none */
};

static const struct {
	const char	*name;
	struct step	steps[4];
} intr_cases[] = {
	{ "one Ctrl-C reaches the job, no cancel", { { "\x03", 10, 3, -1 } } },
	{ "two in one read", { { "ab\x03" "c\x03" "d", 10, 3, 4 } } },
	{ "two reads 0.5 s apart", { { "\x03", 10, 3, -1 }, { "x\x03", 10.5, 3, 1 } } },
	{ "exactly a second apart still counts", { { "\x03", 10, 3, -1 }, { "\x03", 11, 3, 0 } } },
	{ "1.5 s apart: each reaches the job", { { "\x03", 10, 3, -1 }, { "\x03", 11.5, 3, -1 },
	    { "\x03", 13, 3, -1 } } },
	{ "the second of a later pair", { { "\x03", 10, 3, -1 }, { "\x03", 12, 3, -1 },
	    { "\x03", 12.9, 3, 0 } } },
	{ "ISIG off (an editor): bytes, never a cancel", { { "\x03\x03\x03", 10, -1, -1 } } },
	{ "another VINTR (stty intr ^G)", { { "\x03\x03", 10, 7, -1 }, { "\x07\x07", 10.1, 7, 1 } } },
	{ "a clock that went back: no cancel", { { "\x03", 10, 3, -1 }, { "\x03", 9, 3, -1 } } },
	{ "plain typing", { { "print(1)\r", 10, 3, -1 } } },
};

static void
test_intr_table(void **state)
{
	size_t c, k, n, got;

	(void)state;
	for (c = 0; c < sizeof(intr_cases) / sizeof(intr_cases[0]); c++) {
		struct intr in = { 0 };

		for (k = 0; k < 4 && intr_cases[c].steps[k].bytes != NULL; k++) {
			const struct step *s = &intr_cases[c].steps[k];

			n = strlen(s->bytes);
			got = intr_scan(&in, (const unsigned char *)s->bytes, n, s->at, s->vintr);
			if ((s->cancel_at < 0 && got != n) ||
			    (s->cancel_at >= 0 && got != (size_t)s->cancel_at))
				fail_msg("%s, read %zu: cancel at %zu of %zu, want %d",
				    intr_cases[c].name, k, got, n, s->cancel_at);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intr_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

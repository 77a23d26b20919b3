/*
 * test_ctl_check.c: who may send a request (nvqd/front/ctl_check.c): a row of
 * each kind of ctl.c's table (anyone, the job's owner or an admin, the
 * owner only, an admin, root), the callers each lets in and the exact
 * refusal the others read; and who is an admin.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ctl_check.h"

/* The rows as ctl.c's table has them, one of each kind. */
static const struct ctl_rule rule_list = { CTL_ANYONE, NULL, NULL };
static const struct ctl_rule rule_cancel = { CTL_OWNER, "cancel", NULL };
static const struct ctl_rule rule_attach = { CTL_SELF, "attach to", NULL };
static const struct ctl_rule rule_restart = { CTL_SELF, "restart",
    "it runs again with the environment of who restarts it" };
static const struct ctl_rule rule_drain = { CTL_ADMIN, "drain a GPU", NULL };
static const struct ctl_rule rule_adopt = { CTL_ROOT, "hand nvqd a Slurm step",
    "slurmstepd's SPANK plugin" };

/*
 * A row, a caller (uid, admin, [security] admin_group), the job (its
 * owner's uid and name, NULL for Slurm's; no job for the rows that name
 * none), and what ctl_check must say: "" lets it in.
 */
static const struct {
	const struct ctl_rule	*rule;
	uint32_t		uid;
	int			admin, has_group;
	const char		*group;
	int			job;
	uint32_t		owner;
	const char		*user, *want;
} T[] = {
	/* anyone */
	{ &rule_list, 1000, 0, 0, "", 0, 0, NULL, "" },
	{ &rule_list, 65534, 0, 1, "gpuadm", 0, 0, NULL, "" },
	/* the job's owner or an admin */
	{ &rule_cancel, 1000, 0, 0, "", 1, 1000, "alice", "" },
	{ &rule_cancel, 0, 1, 0, "", 1, 1000, "alice", "" },
	{ &rule_cancel, 1001, 1, 1, "gpuadm", 1, 1000, "alice", "" },
	{ &rule_cancel, 1001, 0, 0, "", 1, 1000, "alice",
	    "job 42 belongs to alice; only its owner or root may cancel it" },
	{ &rule_cancel, 1001, 0, 1, "gpuadm", 1, 1000, "alice",
	    "job 42 belongs to alice; only its owner, root or members of gpuadm may cancel it" },
	{ &rule_cancel, 1000, 0, 0, "", 1, 1000, NULL, "" },	/* Slurm's job, its owner */
	{ &rule_cancel, 1001, 0, 0, "", 1, 1000, NULL,
	    "job 42 belongs to another user; only its owner, root may cancel it" },
	{ &rule_cancel, 1001, 0, 1, "gpuadm", 1, 1000, NULL, "job 42 belongs to another user; "
	    "only its owner, root or members of [security] admin_group may cancel it" },
	{ &rule_cancel, 1000, 0, 0, "", 0, 0, NULL, "no job given" },	/* never let in */
	/* the owner only: an admin may act on the job, but what it passes is not the owner's */
	{ &rule_attach, 1000, 0, 0, "", 1, 1000, "alice", "" },
	{ &rule_attach, 0, 1, 0, "", 1, 1000, "alice", "job 42 is not yours" },
	{ &rule_attach, 1001, 1, 1, "gpuadm", 1, 1000, "alice", "job 42 is not yours" },
	{ &rule_attach, 1001, 0, 0, "", 1, 1000, "alice",
	    "job 42 belongs to alice; only its owner or root may attach to it" },
	{ &rule_restart, 1000, 0, 0, "", 1, 1000, "alice", "" },
	{ &rule_restart, 0, 1, 0, "", 1, 1000, "alice", "job 42 is not yours: only its owner "
	    "may restart it (it runs again with the environment of who restarts it)" },
	/* an admin */
	{ &rule_drain, 0, 1, 0, "", 0, 0, NULL, "" },
	{ &rule_drain, 1001, 1, 1, "gpuadm", 0, 0, NULL, "" },
	{ &rule_drain, 1001, 0, 0, "", 0, 0, NULL, "only root may drain a GPU" },
	{ &rule_drain, 1001, 0, 1, "gpuadm", 0, 0, NULL,
	    "only root and members of gpuadm may drain a GPU" },
	/* root: an admin is not */
	{ &rule_adopt, 0, 1, 0, "", 0, 0, NULL, "" },
	{ &rule_adopt, 1001, 1, 1, "gpuadm", 0, 0, NULL,
	    "only root (slurmstepd's SPANK plugin) may hand nvqd a Slurm step" },
};

static void
test_rules(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(T) / sizeof(T[0]); i++) {
		struct ctl_caller c = { T[i].uid, T[i].admin, T[i].has_group, T[i].group };
		struct ctl_owner o = { 42, T[i].owner, T[i].user };
		char err[512] = "";
		int rc = ctl_check(T[i].rule, &c, T[i].job ? &o : NULL, err, sizeof(err));

		if (rc != (T[i].want[0] == '\0' ? 0 : -1) || strcmp(err, T[i].want) != 0)
			print_message("case %zu (%s): %d \"%s\"\n", i, T[i].rule->verb ?
			    T[i].rule->verb : "anyone", rc, err);
		assert_int_equal(rc, T[i].want[0] == '\0' ? 0 : -1);
		assert_string_equal(err, T[i].want);
	}
}

static void
test_is_admin(void **state)
{
	static const gid_t groups[] = { 10, 20, 30 };
	static const struct {
		uint32_t	uid, gid;
		const gid_t	*groups;
		int		n, has_gid;
		uint32_t	admin_gid;
		int		want;
	} t[] = {
		{ 0, 0, NULL, 0, 0, 0, 1 },		/* root, with no admin_group */
		{ 1000, 30, NULL, 0, 0, 30, 0 },	/* no admin_group: no one else */
		{ 1000, 30, NULL, 0, 1, 30, 1 },	/* its primary group */
		{ 1000, 5, groups, 3, 1, 30, 1 },	/* a supplementary group */
		{ 1000, 5, groups, 2, 1, 30, 0 },	/* only the groups it has */
		{ 1000, 5, NULL, 3, 1, 30, 0 },		/* groups unknown */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(ctl_check_admin(t[i].uid, t[i].gid, t[i].groups, t[i].n,
		    t[i].has_gid, t[i].admin_gid), t[i].want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_is_admin),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

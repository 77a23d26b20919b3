/*
 * slurmopt.c: a submit's Slurm options that nvqd checks itself (see
 * slurmopt.h).  nvq checks their form too, so that a #SBATCH line is named
 * at fault; these checks are what nvqd relies on, whatever sent them.
 */
#include <signal.h>
#include <stdio.h>

#include "parse.h"
#include "slurmopt.h"

int
slurmopt_take(const struct proto_msg *m, int slurm, int64_t limit, struct store_job_new *j,
    char *err, size_t errlen)
{
	int64_t sig, secs;

	/* Slurm's own: passed on under [cluster] engine = slurm, refused on one server */
	if ((j->partition = proto_str(m, "partition")) != NULL && !slurm) {
		snprintf(err, errlen, "--partition %.64s: this is one server: partitions are "
		    "Slurm's (under nvqd's [cluster] engine = slurm, --partition or [cluster] "
		    "partition picks it); nothing was queued", j->partition);
		return -1;
	}
	if ((j->account = proto_str(m, "account")) != NULL && !slurm) {
		snprintf(err, errlen, "--account %.64s: this is one server: accounts are Slurm's "
		    "(under nvqd's [cluster] engine = slurm, it is passed on); nvq's fair share "
		    "is per user; nothing was queued", j->account);
		return -1;
	}
	if ((j->partition != NULL && !parse_slurm_name(j->partition)) ||
	    (j->account != NULL && !parse_slurm_name(j->account))) {
		snprintf(err, errlen, "--partition and --account: 1 to %d letters, digits, "
		    "_ . , -; nothing was queued", PARSE_MAX_SLURM_NAME);
		return -1;
	}
	/* Slurm's --signal [B:]SIG@TIME: a warning TIME seconds before the time limit */
	if ((sig = proto_int(m, "warn_signal", 0)) == 0)
		return 0;
	secs = proto_int(m, "warn_time", PARSE_WARN_DEFAULT);
	if (sig < 1 || sig > 64 || sig == SIGKILL || sig == SIGSTOP || secs < 0 ||
	    secs > PARSE_WARN_MAX) {
		snprintf(err, errlen, "--signal SIG@TIME: SIG from 1 to 64 other than KILL and "
		    "STOP, TIME from 0 to %d seconds; nothing was queued", PARSE_WARN_MAX);
		return -1;
	}
	if (limit == 0) {
		snprintf(err, errlen, "--signal %s%lld@%lld: the job has no time limit (--time) "
		    "to be warned before; nothing was queued", proto_int(m, "warn_batch", 0) ?
		    "B:" : "", (long long)sig, (long long)secs);
		return -1;
	}
	j->warn_sig = (int)sig;
	j->warn_time = (int)secs;
	j->warn_batch = proto_int(m, "warn_batch", 0) != 0;
	return 0;
}

/*
 * config.c: the key table, INI parsing through inih, and defaults.
 *
 * Paths that depend on who runs nvqd (socket, database, spool) default to
 * system paths for root and to XDG paths for anyone else.  An unknown
 * section or key, or a bad value, is an error naming the file and line.
 */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <ini.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "config.h"
#include "roff.h"
#include "parse.h"
#include "paths.h"
#include "rlimits.h"

enum config_type {
	CT_PATH, CT_LIBRARY, CT_NAME, CT_SECONDS, CT_VIRTUAL, CT_MODE, CT_RESERVE, CT_DOUBLE,
	CT_INT, CT_COMPUTE, CT_GROUP, CT_UMASK, CT_RLIMITS, CT_TURN, CT_PERCENT, CT_SIZE,
	CT_LISTEN,
	CT_COMMAND, CT_WORD
};

/* The names of CT_NAME keys' values; a value is its name's index. */
static const char *const config_level_names[] = { "error", "warn", "info", "debug", NULL };
static const char *const config_switch_names[] = { "off", "auto", NULL };
static const char *const config_sync_names[] = { "normal", "full", NULL };
static const char *const config_onoff_names[] = { "off", "on", NULL };
/* enum sched_mode, enum sched_preempt_mode and enum compute_mode, in their order */
static const char *const config_mode_names[] = { "auto", "serial", "timeslice", NULL };
static const char *const config_preempt_names[] = { "off", "suspend", "requeue", NULL };
static const char *const config_compute_names[] = { "shared", "timeslice", NULL };
static const char *const config_placement_names[] = { "pack", "spread", NULL };
static const char *const config_engine_names[] = { "local", "slurm", NULL };
static const char *const config_class_names[] = { "be", "lc", NULL };

/*
 * A key.  Its value goes to off in struct config (size bytes: a string, or
 * an integer of 4 or 8 bytes, or with real a double), so that adding a key
 * is one row; AT_OWN marks the few types whose value spans several fields,
 * each written by a function of its own (one key each).
 */
struct config_key {
	const char	*section;
	const char	*key;
	int		type;
	size_t		off, size;
	int		real;
	const char *const *names;	/* CT_NAME */
	long long	min, max;
	const char	*dflt;		/* as it would be written in the file */
	const char	*help;
};

#define AT(f)		offsetof(struct config, f), sizeof(((struct config *)0)->f), 0
#define AT_REAL(f)	offsetof(struct config, f), sizeof(((struct config *)0)->f), 1
#define AT_OWN		0, 0, 0

static const struct config_key config_keys[] = {
	{ "daemon", "socket", CT_PATH, AT(socket), NULL, 0, 0, "",
	  "Unix socket nvq talks to. Empty: /run/nvq/nvqd.sock as root,\n"
	  "$XDG_RUNTIME_DIR/nvq/nvqd.sock otherwise (restart to change)." },
	{ "daemon", "database", CT_PATH, AT(database), NULL, 0, 0, "",
	  "SQLite database of jobs and runs (environments: FILE.private, 0600).\n"
	  "Empty: /var/lib/nvq/nvq.db as root,\n"
	  "$XDG_STATE_HOME/nvq/nvq.db otherwise (restart to change)." },
	{ "daemon", "spool", CT_PATH, AT(spool), NULL, 0, 0, "",
	  "Job files: <uid>/<id>.out and <uid>/<id>.err (default output),\n"
	  ".status/<id> (exit status).\n"
	  "Empty: /var/spool/nvq as root, $XDG_STATE_HOME/nvq/spool otherwise." },
	{ "daemon", "log_level", CT_NAME, AT(log_level), config_level_names, 0, 0, "info",
	  "error, warn, info or debug; nvqd logs to stderr." },
	{ "daemon", "cgroups", CT_NAME, AT(cgroups), config_switch_names, 0, 0, "auto",
	  "auto: each job runs in a cgroup v2 of its own, under nvqd's, so that\n"
	  "ending it ends every process it started, also those that left its\n"
	  "process group (as root, where cgroup v2 is mounted); off: process groups." },
	{ "daemon", "sync", CT_NAME, AT(sync_full), config_sync_names, 0, 0, "full",
	  "full: whatever nvqd acknowledges (a submit, a job's end) is on disk\n"
	  "first and survives power loss (one flush per submit, and one per job\n"
	  "that ends as the next starts); normal: survives a crash of nvqd, may\n"
	  "lose the last commits on power loss." },
	{ "daemon", "on_finish", CT_COMMAND, AT(on_finish), NULL, 0, 0, "",
	  "A shell command run for every job that ends, as the job's owner, in the\n"
	  "job's directory, with NVQ_JOB_ID, NVQ_JOB_NAME, NVQ_JOB_STATE,\n"
	  "NVQ_EXIT_CODE, NVQ_JOB_REASON, NVQ_STDOUT, NVQ_STDERR in its\n"
	  "environment (as nvq submit --notify's). How it ended is an event of\n"
	  "the job (NOTIFY); the job's state is never changed by it. Empty: none." },
	{ "daemon", "notify_timeout", CT_SECONDS, AT(notify_timeout), NULL, 1, 3600, "1m",
	  "How long a notifier (on_finish, --notify, --mail-user) may run before\n"
	  "it is killed, with every process it started. At most 16 run at once;\n"
	  "the others wait their turn." },
	{ "daemon", "sendmail", CT_PATH, AT(sendmail), NULL, 0, 0, "/usr/sbin/sendmail",
	  "The program --mail-user mails through (sendmail -i -- ADDRESS, the\n"
	  "message on its standard input), run as the job's owner. Where it is\n"
	  "missing, --mail-user is refused at submit." },
	{ "gpus", "virtual", CT_VIRTUAL, AT_OWN, NULL, 0, 0, "",
	  "Virtual GPUs instead of NVML, e.g. 2x80G or 80G,40G. Empty: the GPUs\n"
	  "NVML finds (none where there is no NVML)." },
	{ "gpus", "nvml_library", CT_LIBRARY, AT(nvml_library), NULL, 0, 0, "libnvidia-ml.so.1",
	  "The NVML library nvqd opens with dlopen." },
	{ "gpus", "cuda_library", CT_LIBRARY, AT(cuda_library), NULL, 0, 0, "libcuda.so.1",
	  "The CUDA driver nvq-ckpt opens with dlopen to suspend and resume jobs\n"
	  "(its checkpoint API needs driver 570 or later)." },
	{ "gpus", "poll", CT_SECONDS, AT(gpu_poll), NULL, 1, 3600, "5s",
	  "How often NVML is read again: memory used outside the queue, and each\n"
	  "GPU's energy counter, whose delta goes to the jobs that held the GPU\n"
	  "(also read at each job's start and end; saved every poll)." },
	{ "scheduler", "mode", CT_MODE, AT_OWN, NULL, 0, 0, "auto",
	  "auto: jobs share a GPU while their memory fits; serial: one job per GPU;\n"
	  "timeslice: they share while they fit, else take turns: at the end of\n"
	  "its turn a job is suspended (its GPU memory moved to host memory) and\n"
	  "the one that waited longest runs. Per GPU: a default, then INDEX:MODE,\n"
	  "e.g. auto,1:serial." },
	{ "scheduler", "preempt", CT_NAME, AT(sched.preempt), config_preempt_names, 0, 0, "suspend",
	  "When a pending job cannot fit and running jobs it may preempt hold the\n"
	  "memory (its own user's jobs of lower priority; jobs of a class its class\n"
	  "preempts, [qos NAME] below; for root's jobs, any of lower priority;\n"
	  "never another user's job for a higher -p alone): off (it waits), suspend (the fewest, lowest-priority, most\n"
	  "recently started of them are suspended, and resume on their own when\n"
	  "they fit again) or requeue (they are stopped, with the job's --signal,\n"
	  "SIGUSR1 unless it said, then SIGKILL after kill_grace, and queued again;\n"
	  "only jobs submitted with --requeue).  Under suspend, a job that cannot be\n"
	  "suspended (its processes share memory nvq cannot move, or say they do)\n"
	  "is stopped the same way, then queued again if it was submitted with\n"
	  "--requeue, else cancelled (Slurm's PreemptMode REQUEUE and CANCEL)." },
	{ "scheduler", "placement", CT_NAME, AT(sched.spread), config_placement_names, 0, 0, "pack",
	  "Which GPUs a job starts on, of those where it fits: pack (the ones with\n"
	  "the least room left, keeping large holes for large jobs) or spread (the\n"
	  "least loaded: the least memory demanded, then the fewest jobs)." },
	{ "scheduler", "default_qos", CT_WORD, AT(qos.default_name), NULL, 0, 0, "normal",
	  "The class (a [qos NAME] section, below) of jobs submitted without --qos.\n"
	  "\"normal\" needs no section: priority 0, preempts nothing, everyone." },
	{ "scheduler", "default_class", CT_NAME, AT(lcbe.default_lc), config_class_names, 0, 0, "be",
	  "The class of jobs submitted without --class: be (best-effort) or lc\n"
	  "(latency-critical, [class lc] below). With lc, the jobs of users who\n"
	  "may not submit lc are be: a default never refuses a submit." },
	{ "scheduler", "preempt_min_runtime", CT_SECONDS, AT_REAL(sched.preempt_min_runtime), NULL, 0, 86400, "1m",
	  "How long a job runs, after it starts or resumes, before it may be preempted." },
	{ "scheduler", "turn", CT_TURN, AT_REAL(turn), NULL, 0, 0, "auto",
	  "How long a job runs on a timeslice GPU before another takes its turn:\n"
	  "auto (long enough that switching costs at most switch_overhead of the\n"
	  "time, from the switches measured) or a duration (e.g. 30s)." },
	{ "scheduler", "switch_overhead", CT_PERCENT, AT_REAL(switch_overhead), NULL, 1, 50, "5%",
	  "The share of time a timeslice GPU may lose to suspending and resuming\n"
	  "jobs, with turn = auto." },
	{ "scheduler", "offload", CT_NAME, AT(offload), config_onoff_names, 0, 0, "on",
	  "on: the hook makes a job's large allocations through the CUDA VMM API,\n"
	  "and on a suspend copies them to page-locked host memory itself and\n"
	  "back to the same addresses (about 20x faster than the driver's\n"
	  "checkpoint, which then moves only the rest); off: the driver's\n"
	  "checkpoint moves everything. Off for jobs that pass their memory to\n"
	  "other processes with CUDA IPC (cuIpcGetMemHandle), which VMM memory\n"
	  "does not support." },
	{ "scheduler", "staging", CT_SIZE, AT(staging), NULL, 0, 0, "0",
	  "Host memory the jobs' processes may keep page-locked between switches,\n"
	  "all of them together (with offload = on): each process that links to\n"
	  "nvqd gets a share, up to what its job may hold on its GPUs, while there\n"
	  "is some left; it fills it in the background as its memory grows, so a\n"
	  "suspend pays only the copy (30 GiB on an H100: the hook's part 0.7 s\n"
	  "instead of 1.9 to 4.9 s), and keeps it after a resume.  0: each suspend\n"
	  "makes its staging and frees it after the resume." },
	{ "scheduler", "compute", CT_COMPUTE, AT_OWN, NULL, 0, 0, "shared",
	  "Who may launch work on a GPU. shared: every job on it, at once;\n"
	  "timeslice: one job at a time for quantum, passed on early when the\n"
	  "holder launches nothing for half a second (no interference between\n"
	  "jobs; jobs must run with the hook). Per GPU like mode, e.g. shared,0:timeslice." },
	{ "scheduler", "quantum", CT_SECONDS, AT(quantum), NULL, 1, 3600, "30s",
	  "How long a job holds a timeslice GPU while others wait for it." },
	{ "scheduler", "revoke_timeout", CT_SECONDS, AT(revoke_timeout), NULL, 1, 3600, "10s",
	  "How long a job has to acknowledge that its GPU lock was taken back\n"
	  "(nvq hold, timeslice) before nvqd stops its processes with SIGSTOP.\n"
	  "Ranks of an NCCL job that reported where they are but could not reach\n"
	  "the same collective in that time are not stopped: the lock goes back\n"
	  "to the job, and the hold, turn or suspend fails with the reason; twice\n"
	  "in a row at most: the third such revoke stops the job with SIGSTOP." },
	{ "scheduler", "switch_timeout", CT_SECONDS, AT(switch_timeout), NULL, 1, 86400, "2m",
	  "How long the driver's checkpoint (nvq-ckpt) may take to suspend or\n"
	  "resume a job, plus a second per 256 MiB it holds. Past it, nvq-ckpt is\n"
	  "killed and the switch undone: a suspend's job runs on; a resume's stays\n"
	  "suspended until nvq resume tries again." },
	{ "scheduler", "reserve", CT_RESERVE, AT_OWN, NULL, 0, 0, "5%",
	  "Memory kept free on each GPU, as a percentage (5%) or a size (2G)." },
	{ "scheduler", "aging", CT_DOUBLE, AT_REAL(sched.aging), NULL, 0, 1000000, "1",
	  "Priority points a pending job gains per hour it waits, so that\n"
	  "nothing starves. 0 turns aging off." },
	{ "scheduler", "auto_margin", CT_PERCENT, AT_REAL(auto_margin), NULL, 0, 300, "10%",
	  "nvq submit -m auto asks for the largest peak on one GPU of the last 5\n"
	  "runs of the user's job of that name (or command) that completed, and\n"
	  "this much more; a job that failed after the hook refused it memory is\n"
	  "told the -m that would have held it, with this margin too." },
	{ "scheduler", "fairshare", CT_NAME, AT(fairshare), config_onoff_names, 0, 0, "off",
	  "on: users share the GPUs equally over time. The users with jobs in the\n"
	  "queue each get fairshare_weight * 2^(-U * N) priority points, where N\n"
	  "is how many they are and U the part of their GPU use, counted together,\n"
	  "that is the user's: all of fairshare_weight for a user who used nothing\n"
	  "lately, half for one who used exactly a share, a quarter for one who\n"
	  "used twice a share (Slurm's fair-share factor). Use is GPU time: a job\n"
	  "holding M of a GPU of T counts M/T of it (a whole GPU 1) while it runs\n"
	  "and is not suspended; it is counted even while this is off." },
	{ "scheduler", "fairshare_halflife", CT_SECONDS, AT(fs_halflife), NULL, 60, 31536000, "7d",
	  "How fast use is forgotten: GPU time used this long ago counts half." },
	{ "scheduler", "fairshare_weight", CT_DOUBLE, AT_REAL(fs_weight), NULL, 0, 1000000, "100",
	  "The priority points fair share gives a user who used nothing lately." },
	{ "scheduler", "kill_grace", CT_SECONDS, AT(kill_grace), NULL, 0, 3600, "30s",
	  "Between SIGTERM and SIGKILL when a job is cancelled or times out." },
	{ "limits", "max_running_jobs", CT_INT, AT(sched.max_running_jobs), NULL, 0, 1000000, "0",
	  "Running jobs per user; 0 for no limit." },
	{ "limits", "max_gpus", CT_INT, AT(sched.max_gpus), NULL, 0, SCHED_MAX_GPUS, "0",
	  "GPUs held at once per user; 0 for no limit." },
	{ "limits", "max_pending", CT_INT, AT(max_pending), NULL, 0, 100000000, "10000",
	  "Pending jobs per user; a submit past it is refused. 0 for no limit." },
	{ "limits", "max_procs", CT_INT, AT(max_procs), NULL, 0, 4194304, "8192",
	  "Processes and threads per job (its cgroup's pids.max; without cgroups,\n"
	  "RLIMIT_NPROC, which counts all of the user's processes), so that a fork\n"
	  "bomb in a job cannot take the machine. 0 for no limit." },
	{ "limits", "max_env", CT_SIZE, AT(max_env), NULL, 0, 0, "1M",
	  "The largest environment a job may be submitted with (its variables\n"
	  "and values together); 0 for no limit." },
	{ "limits", "max_stored", CT_SIZE, AT(max_stored), NULL, 0, 0, "64M",
	  "The bytes a user's active jobs may keep in nvqd's files: their\n"
	  "environments, commands and paths (an array's tasks share one copy of\n"
	  "its environment and command). A submit past it is refused; root is\n"
	  "exempt, to clean up. 0 for no limit." },
	{ "limits", "max_priority", CT_INT, AT(max_priority), NULL, 0, 1000000, "0",
	  "The highest priority (-p) a user may give a job; root and members of\n"
	  "[security] admin_group may go to 1000000. Anyone may go down to -1000000.\n"
	  "At 0, users only lower their jobs (as Slurm's --nice): a user's -p then\n"
	  "orders that user's own jobs, and passes nobody else's. Whatever it is, a\n"
	  "job preempts another user's only as its class allows ([qos NAME]), or\n"
	  "as root's." },
	{ "limits", "umask", CT_UMASK, AT(job_umask), NULL, 0, 0777, "022",
	  "The umask jobs start with (octal), whatever nvqd's own is." },
	{ "limits", "rlimits", CT_RLIMITS, AT(rlimits), NULL, 0, 0, "core=0,nofile=1024:524288",
	  "Resource limits jobs start with, as NAME=SOFT[:HARD] entries: as, core,\n"
	  "cpu, data, fsize, memlock, nofile, nproc, stack; numbers, sizes (4G)\n"
	  "or unlimited (a hard limit above what nvqd may set is lowered to that).\n"
	  "Limits not named are those nvqd was started with." },
	{ "resources", "cpus", CT_INT, AT(sched.cpus), NULL, 0, 65536, "0",
	  "The CPUs jobs share: a job starts only while its CPUs (nvq submit -c,\n"
	  "Slurm's --cpus-per-task) fit beside the running jobs'; its cgroup gets a\n"
	  "quota of that many CPUs (cpu.max; no pinning). 0: the CPUs nvqd may run\n"
	  "on (sched_getaffinity)." },
	{ "resources", "memory", CT_SIZE, AT(sched.host_mem), NULL, 0, 0, "0",
	  "The host memory jobs share: a job that asks some (--mem, --mem-per-cpu)\n"
	  "starts only while it fits beside the running jobs', and its cgroup's\n"
	  "memory limit is what it asked (memory.max, no swap): past it the\n"
	  "kernel kills it, FAILED \"killed: over its --mem\". 0: the machine's\n"
	  "MemTotal less 5% of it (at least 1G), kept for the system and nvqd." },
	{ "resources", "cpus_per_gpu", CT_INT, AT(cpus_per_gpu), NULL, 0, 65536, "0",
	  "The CPUs a job of GPUs takes per GPU unless it says (-c), and a part\n"
	  "of them for a part of a GPU (-m 8G of 80G: a tenth, at least 1); a job\n"
	  "of no GPU takes 1. 0: cpus divided by the GPUs, at least 1, so that GPU\n"
	  "jobs keep their share for their data loaders while CPU jobs fill the rest." },
	{ "resources", "default_mem", CT_SIZE, AT(default_mem), NULL, 0, 0, "0",
	  "The host memory a job takes unless it says (--mem). 0: none, that is\n"
	  "no limit of its own and nothing counted for it, as before." },
	{ "web", "listen", CT_LISTEN, AT(web_listen), NULL, 0, 0, "",
	  "The dashboard and /metrics (Prometheus): ADDRESS:PORT, e.g.\n"
	  "127.0.0.1:8080, a loopback address unless remote = on. Read-only. Who\n"
	  "opens it with the link nvq web-token gives sees their own jobs'\n"
	  "commands and everyone's user names; without one, neither. Empty: off\n"
	  "(restart to change)." },
	{ "web", "remote", CT_NAME, AT(web_remote), config_onoff_names, 0, 0, "off",
	  "on: listen may be an address other machines reach (put TLS in front of\n"
	  "it: the tokens travel in the links)." },
	{ "web", "timeout", CT_SECONDS, AT(web_timeout), NULL, 1, 3600, "10s",
	  "How long a connection to the dashboard may stay idle, and how long\n"
	  "a request's head may take to arrive however it trickles in, before\n"
	  "nvqd closes the connection, so that clients holding connections\n"
	  "cannot keep others out for long (restart to change)." },
	{ "web", "per_address", CT_INT, AT(web_per_address), NULL, 1, 1000, "16",
	  "Connections one client address may hold at once (of 128 in all);\n"
	  "past it, a new one is closed at once (restart to change)." },
	{ "web", "rate", CT_INT, AT(web_rate), NULL, 1, 100000, "10",
	  "Requests a second one client address may make for /metrics and the\n"
	  "dashboard's data (/api/...), in bursts of as many; past it, they\n"
	  "are answered 429 Too Many Requests." },
	{ "cluster", "engine", CT_NAME, AT(slurm), config_engine_names, 0, 0, "local",
	  "local: nvqd runs the jobs on this machine's GPUs. slurm: nvq submit\n"
	  "hands each job to Slurm (sbatch, run as the job's user) with\n"
	  "--gres=shard:N for -m on one GPU (N = -m / shard_size, rounded up),\n"
	  "--gres=gpu:N for more GPUs or whole ones, and --gpu-mem=-m for nvq's\n"
	  "SPANK plugin on the nodes; nvq list, show, log, wait, cancel, hold,\n"
	  "release and history work on those jobs, and their runs, events and\n"
	  "peak GPU memory land in this database (contrib/slurm/README.md).\n"
	  "Restart nvqd to change it, with no job active." },
	{ "cluster", "partition", CT_WORD, AT(slurm_partition), NULL, 0, 0, "",
	  "engine = slurm: the partition jobs go to (sbatch -p); empty: Slurm's\n"
	  "default." },
	{ "cluster", "shard_size", CT_SIZE, AT(shard_size), NULL, 0, 0, "1G",
	  "engine = slurm: the GPU memory one GRES shard stands for, as the\n"
	  "SPANK plugin's shard_size on the nodes says." },
	{ "cluster", "poll", CT_SECONDS, AT(slurm_poll), NULL, 1, 3600, "1s",
	  "engine = slurm: how often nvqd asks Slurm (one squeue for all the\n"
	  "jobs it follows) how its jobs are doing." },
	{ "cluster", "peaks", CT_PATH, AT(slurm_peaks), NULL, 0, 0, "/var/spool/nvq/slurm",
	  "engine = slurm: the folder where the SPANK plugin on the nodes writes\n"
	  "each job's peak GPU memory (its peaks= argument): shared with the\n"
	  "nodes, or this machine's own when it is the node." },
	{ "cluster", "slurm_bin", CT_PATH, AT(slurm_bin), NULL, 0, 0, "/usr/bin",
	  "engine = slurm: the folder of sbatch, squeue, scontrol and scancel." },
	{ "cluster", "name", CT_WORD, AT(cluster_name), NULL, 0, 0, "",
	  "The cluster's name that jobs see in SLURM_CLUSTER_NAME (Slurm's\n"
	  "ClusterName); empty: this machine's host name (Slurm has no default).\n"
	  "Under engine = slurm, Slurm sets it." },
	{ "class lc", "users", CT_COMMAND, AT(lcbe.users), NULL, 0, 0, "",
	  "Who may submit latency-critical jobs (nvq submit --class lc): users'\n"
	  "names or uids, by commas; * for everyone. Empty, with groups empty too:\n"
	  "root alone. An lc job is admitted by memory as any other; on its GPUs,\n"
	  "the launches of best-effort jobs (--class be, the default) wait while\n"
	  "it has work queued or running. Not --qos: a class there orders the\n"
	  "queue and preempts, this decides who yields on a shared GPU." },
	{ "class lc", "groups", CT_COMMAND, AT(lcbe.groups), NULL, 0, 0, "",
	  "Groups (names or gids, by commas) whose members may submit lc jobs." },
	{ "class lc", "max_jobs_per_user", CT_INT, AT(lcbe.max_jobs_per_user), NULL, 0, 1000000, "0",
	  "Active (pending, running, suspended) lc jobs one user may have; 0: no\n"
	  "limit. Root is exempt." },
	{ "class lc", "be_max_wait", CT_INT, AT(lcbe.be_max_wait), NULL, 1, 60000, "1000",
	  "Milliseconds one launch of a best-effort job waits at most while an lc\n"
	  "job on its GPUs is busy, after which it goes on: a bound, so that a\n"
	  "rank of a multi-GPU job never waits while its peers spin in a\n"
	  "collective for longer than this, and an lc job that never idles\n"
	  "cannot stop others outright." },
	{ "security", "admin_group", CT_GROUP, AT_OWN, NULL, 0, 0, "",
	  "Members of this group may cancel, hold and release anyone's jobs and\n"
	  "give priorities above max_priority, as root may. Empty: root alone." },
};
#define CONFIG_NKEYS (sizeof(config_keys) / sizeof(config_keys[0]))

struct config_ctx {
	struct config	*cfg;
	FILE		*fp;
	int		line;
	int		errline;	/* 0: no error yet */
	char		msg[256];
};

static int
config_virtual(struct config *c, const char *v)
{
	char buf[512], *tok, *save, *x;
	long long n;
	uint64_t mem;

	c->nvirtual = 0;
	if (*v == '\0')
		return 0;
	if (strlen(v) >= sizeof(buf))
		return -1;
	strcpy(buf, v);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		n = 1;
		if ((x = strchr(tok, 'x')) != NULL) {
			*x = '\0';
			if (parse_int(tok, 1, CONFIG_MAX_VIRTUAL, &n) == -1)
				return -1;
			tok = x + 1;
		}
		if (parse_size(tok, &mem) == -1 || mem == 0)
			return -1;
		while (n-- > 0) {
			if (c->nvirtual == CONFIG_MAX_VIRTUAL)
				return -1;
			c->virtual_mem[c->nvirtual++] = mem;
		}
	}
	return c->nvirtual > 0 ? 0 : -1;
}

/* *m = the index of s among names; -1 if it is not one of them. */
int
config_listen(const char *v, struct sockaddr_in *sa)
{
	char host[64], *colon, *end;
	struct sockaddr_in a;
	long port;

	if (strlen(v) >= sizeof(host))
		return -1;
	snprintf(host, sizeof(host), "%s", v);
	if ((colon = strrchr(host, ':')) == NULL)
		return -1;
	*colon = '\0';
	port = strtol(colon + 1, &end, 10);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	if (*end != '\0' || colon[1] == '\0' || port < 1 || port > 65535 ||
	    inet_pton(AF_INET, host, &a.sin_addr) != 1)
		return -1;
	a.sin_port = htons((uint16_t)port);
	if (sa != NULL)
		*sa = a;
	return 0;
}

static int
config_name(const char *const *names, const char *s, int *m)
{
	int i;

	for (i = 0; names[i] != NULL; i++)
		if (strcmp(names[i], s) == 0) {
			*m = i;
			return 0;
		}
	return -1;
}

/* "DEFAULT[,INDEX:NAME...]" into dflt and per (-1: the default). */
static int
config_modes(const char *v, int *dflt, int *per, const char *const *names)
{
	char buf[512], *tok, *save, *colon;
	long long idx;
	int m, i, first = 1;

	if (strlen(v) >= sizeof(buf))
		return -1;
	strcpy(buf, v);
	for (i = 0; i < SCHED_MAX_GPUS; i++)
		per[i] = -1;
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if ((colon = strchr(tok, ':')) == NULL) {
			if (!first || config_name(names, tok, dflt) == -1)
				return -1;
		} else {
			*colon = '\0';
			if (parse_int(tok, 0, SCHED_MAX_GPUS - 1, &idx) == -1 ||
			    config_name(names, colon + 1, &m) == -1)
				return -1;
			per[idx] = m;
		}
		first = 0;
	}
	return first ? -1 : 0;
}

/* Stores a number where k's value goes: n, or d where that is a double. */
static void
config_put(struct config *c, const struct config_key *k, long long n, double d)
{
	char *dst = (char *)c + k->off;
	int32_t i32 = (int32_t)n;
	int64_t i64 = n;

	if (k->real)
		memcpy(dst, &d, sizeof(d));
	else if (k->size == sizeof(i32))
		memcpy(dst, &i32, sizeof(i32));
	else
		memcpy(dst, &i64, sizeof(i64));
}

/* "A, B or C" from a list of names. */
static void
config_list(const char *const *names, char *out, size_t len)
{
	size_t off = 0;
	int i;

	out[0] = '\0';
	for (i = 0; names[i] != NULL && off < len; i++)
		off += (size_t)snprintf(out + off, len - off, "%s%s", i == 0 ? "" :
		    names[i + 1] == NULL ? " or " : ", ", names[i]);
}

/*
 * Whether the table holds together: each value the right size for its
 * type, and no two keys writing the same bytes.  0, or -1 with msg.
 */
static int
config_check_table(char *msg, size_t len)
{
	const struct config_key *k, *o;
	size_t i, j;
	int bad;

	for (i = 0; i < CONFIG_NKEYS; i++) {
		k = &config_keys[i];
		if (k->size == 0)
			continue;	/* AT_OWN */
		switch (k->type) {
		case CT_PATH: case CT_LIBRARY: case CT_RLIMITS: case CT_COMMAND: case CT_LISTEN:
		case CT_WORD:
			bad = k->real || k->size < 2;
			break;
		default:
			bad = k->real ? k->size != sizeof(double) :
			    k->size != sizeof(int32_t) && k->size != sizeof(int64_t);
			break;
		}
		if (bad || (k->type == CT_NAME) != (k->names != NULL)) {
			snprintf(msg, len, "key %s: its field does not fit its type", k->key);
			return -1;
		}
		for (j = 0; j < i; j++) {
			o = &config_keys[j];
			if (o->size != 0 && k->off < o->off + o->size && o->off < k->off + k->size) {
				snprintf(msg, len, "keys %s and %s write the same field", o->key,
				    k->key);
				return -1;
			}
		}
	}
	return 0;
}

/* Sets one key from its text; returns 0 or -1 with a message in msg. */
static int
config_set(struct config *c, const struct config_key *k, const char *v, char *msg,
    size_t len)
{
	char *dst = (char *)c + k->off, list[128];
	long long n;
	int64_t secs;
	char *end;
	double d;
	int i;

	switch (k->type) {
	case CT_LISTEN:
		/* IPv4ADDRESS:PORT; "" for none.  Whether it may be other than loopback:
		 * config_load, once [web] remote is known */
		if (*v != '\0' && config_listen(v, NULL) == -1) {
			snprintf(msg, len, "%s: \"%s\" is not ADDRESS:PORT (an IPv4 address, e.g. "
			    "127.0.0.1:8080)", k->key, v);
			return -1;
		}
		snprintf(dst, k->size, "%s", v);
		return 0;
	case CT_COMMAND:
		if (strlen(v) >= k->size) {
			snprintf(msg, len, "%s: command too long (at most %zu bytes)", k->key,
			    k->size - 1);
			return -1;
		}
		strcpy(dst, v);
		return 0;
	case CT_WORD:
		if (strlen(v) >= k->size || strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789_.,-") != strlen(v)) {
			snprintf(msg, len, "%s: \"%s\" is not a name (letters, digits, _ . , -; at "
			    "most %zu)", k->key, v, k->size - 1);
			return -1;
		}
		strcpy(dst, v);
		return 0;
	case CT_PATH:
	case CT_LIBRARY:
		if (strlen(v) >= k->size) {
			snprintf(msg, len, "%s: path too long", k->key);
			return -1;
		}
		/* a library may be a name the loader searches for */
		if (k->type == CT_PATH && *v != '\0' && *v != '/') {
			snprintf(msg, len, "%s: \"%s\" is not an absolute path", k->key, v);
			return -1;
		}
		strcpy(dst, v);
		return 0;
	case CT_NAME:
		for (i = 0; k->names[i] != NULL; i++)
			if (strcmp(v, k->names[i]) == 0) {
				config_put(c, k, i, 0);
				return 0;
			}
		config_list(k->names, list, sizeof(list));
		snprintf(msg, len, "%s: \"%s\" is not %s", k->key, v, list);
		return -1;
	case CT_SECONDS:
		if (parse_duration(v, &secs) == -1 || secs < k->min || secs > k->max) {
			snprintf(msg, len, "%s: \"%s\" is not a duration from %llds to %llds "
			    "(e.g. 30s, 5m)", k->key, v, k->min, k->max);
			return -1;
		}
		config_put(c, k, secs, (double)secs);
		return 0;
	case CT_VIRTUAL:
		if (config_virtual(c, v) == -1) {
			snprintf(msg, len, "%s: \"%s\" is not a list of GPU sizes (e.g. 2x80G or "
			    "80G,40G; at most %d)", k->key, v, CONFIG_MAX_VIRTUAL);
			return -1;
		}
		return 0;
	case CT_MODE:
		if (config_modes(v, &c->mode_default, c->mode, config_mode_names) == -1) {
			snprintf(msg, len, "%s: \"%s\" is not auto, serial or timeslice, optionally "
			    "followed by INDEX:MODE entries (e.g. auto,1:serial)", k->key, v);
			return -1;
		}
		return 0;
	case CT_COMPUTE:
		if (config_modes(v, &c->compute_default, c->compute, config_compute_names) == -1) {
			snprintf(msg, len, "%s: \"%s\" is not shared or timeslice, optionally "
			    "followed by INDEX:MODE entries (e.g. shared,0:timeslice)", k->key, v);
			return -1;
		}
		return 0;
	case CT_RESERVE:
		if (parse_reserve(v, &c->sched.reserve_pct, &c->sched.reserve_bytes) == -1) {
			snprintf(msg, len, "%s: \"%s\" is not a percentage below 100%% or a size "
			    "(e.g. 5%% or 2G)", k->key, v);
			return -1;
		}
		return 0;
	case CT_DOUBLE:
		errno = 0;
		d = strtod(v, &end);
		if (*v == '\0' || *end != '\0' || errno != 0 || d < (double)k->min ||
		    d > (double)k->max) {
			snprintf(msg, len, "%s: \"%s\" is not a number from %lld to %lld", k->key,
			    v, k->min, k->max);
			return -1;
		}
		config_put(c, k, 0, d);
		return 0;
	case CT_INT:
		if (parse_int(v, k->min, k->max, &n) == -1) {
			snprintf(msg, len, "%s: \"%s\" is not a whole number from %lld to %lld",
			    k->key, v, k->min, k->max);
			return -1;
		}
		config_put(c, k, n, (double)n);
		return 0;
	case CT_SIZE: {
		uint64_t bytes;

		if (parse_size(v, &bytes) == -1 || bytes > INT64_MAX) {
			snprintf(msg, len, "%s: \"%s\" is not a size (e.g. 64K, 1M)", k->key, v);
			return -1;
		}
		config_put(c, k, (long long)bytes, (double)bytes);
		return 0;
	}
	case CT_UMASK:
		errno = 0;
		n = strtoll(v, &end, 8);
		if (*v < '0' || *v > '7' || *end != '\0' || errno != 0 || n > k->max) {
			snprintf(msg, len, "%s: \"%s\" is not an octal umask (e.g. 022 or 077)",
			    k->key, v);
			return -1;
		}
		config_put(c, k, n, (double)n);
		return 0;
	case CT_RLIMITS: {
		struct rlimits_entry r[RLIMITS_MAX];
		char why[200];

		if (strlen(v) >= k->size || rlimits_parse(v, r, why, sizeof(why)) == -1) {
			snprintf(msg, len, "%s: %s", k->key, strlen(v) >= k->size ? "too long" : why);
			return -1;
		}
		strcpy(dst, v);
		return 0;
	}
	case CT_GROUP: {
		struct group *gr;

		if (strlen(v) >= sizeof(c->admin_group)) {
			snprintf(msg, len, "%s: name too long", k->key);
			return -1;
		}
		strcpy(c->admin_group, v);
		c->has_admin_gid = 0;
		if (*v == '\0')
			return 0;
		if ((gr = getgrnam(v)) == NULL) {
			snprintf(msg, len, "%s: no such group \"%s\"", k->key, v);
			return -1;
		}
		c->admin_gid = (uint32_t)gr->gr_gid;
		c->has_admin_gid = 1;
		return 0;
	}
	case CT_TURN:
		if (strcmp(v, "auto") == 0) {
			config_put(c, k, 0, 0);
			return 0;
		}
		if (parse_duration(v, &secs) == -1 || secs < 1 || secs > 86400) {
			snprintf(msg, len, "%s: \"%s\" is not auto or a duration from 1s to 1d "
			    "(e.g. 30s, 5m)", k->key, v);
			return -1;
		}
		config_put(c, k, secs, (double)secs);
		return 0;
	case CT_PERCENT:
		errno = 0;
		d = strtod(v, &end);
		if (end == v || (*end != '%' && *end != '\0') || (*end == '%' && end[1] != '\0') ||
		    errno != 0 || d < (double)k->min || d > (double)k->max) {
			snprintf(msg, len, "%s: \"%s\" is not a percentage from %lld%% to %lld%%",
			    k->key, v, k->min, k->max);
			return -1;
		}
		config_put(c, k, 0, d / 100);
		return 0;
	}
	return -1;
}

static void
config_default_paths(struct config *c)
{
	const char *xdg;
	char state[PATH_MAX - 64];

	if (geteuid() == 0) {
		if (!*c->socket)
			strcpy(c->socket, PATHS_SYSTEM_SOCKET);
		if (!*c->database)
			strcpy(c->database, "/var/lib/nvq/nvq.db");
		if (!*c->spool)
			strcpy(c->spool, "/var/spool/nvq");
		return;
	}
	if (!*c->socket)
		paths_user_socket(c->socket, sizeof(c->socket));
	if ((xdg = getenv("XDG_STATE_HOME")) != NULL && *xdg == '/')
		snprintf(state, sizeof(state), "%.*s/nvq", PATH_MAX - 128, xdg);
	else
		snprintf(state, sizeof(state), "%.*s/.local/state/nvq", PATH_MAX - 128,
		    getenv("HOME") ? getenv("HOME") : "/tmp");
	if (!*c->database)
		snprintf(c->database, sizeof(c->database), "%s/nvq.db", state);
	if (!*c->spool)
		snprintf(c->spool, sizeof(c->spool), "%s/spool", state);
}

/*
 * inih's reader: counts lines so that the handler knows where it is, and
 * cuts a comment that follows a value (a # or ; after a space or tab), as
 * nvq.ini(5) says: inih as Debian builds it takes only ; there.
 */
static char *
config_reader_cb(char *str, int num, void *stream)
{
	struct config_ctx *ctx = stream;
	char *r = fgets(str, num, ctx->fp), *p;

	if (r == NULL)
		return NULL;
	ctx->line++;
	if (ctx->errline == 0 && qos_line(&ctx->cfg->qos, str, ctx->msg, sizeof(ctx->msg)) == -1)
		ctx->errline = ctx->line;
	for (p = str + 1; *p != '\0'; p++)
		if ((*p == '#' || *p == ';') && (p[-1] == ' ' || p[-1] == '\t')) {
			int nl = strchr(p, '\n') != NULL;

			while (p > str && (p[-1] == ' ' || p[-1] == '\t'))
				p--;
			if (nl)
				*p++ = '\n';
			*p = '\0';
			break;
		}
	return r;
}

static int
config_handler_cb(void *user, const char *section, const char *name, const char *value)
{
	struct config_ctx *ctx = user;
	char msg[256];
	size_t i;
	int known_section = 0;

	if (qos_section(section)) {
		if (qos_set(&ctx->cfg->qos, section, name, value, msg, sizeof(msg)) == 0)
			return 1;
		goto fail;
	}
	for (i = 0; i < CONFIG_NKEYS; i++) {
		if (strcmp(config_keys[i].section, section) != 0)
			continue;
		known_section = 1;
		if (strcmp(config_keys[i].key, name) != 0)
			continue;
		if (config_set(ctx->cfg, &config_keys[i], value, msg, sizeof(msg)) == 0)
			return 1;
		goto fail;
	}
	if (known_section)
		snprintf(msg, sizeof(msg), "unknown key \"%s\" in [%s]", name, section);
	else if (*section == '\0')
		snprintf(msg, sizeof(msg), "key \"%s\" outside any section", name);
	else
		snprintf(msg, sizeof(msg), "unknown section [%s]", section);
fail:
	if (ctx->errline == 0) {
		ctx->errline = ctx->line;
		snprintf(ctx->msg, sizeof(ctx->msg), "%s", msg);
	}
	return 0;
}

int
config_compute(const struct config *c, int i)
{
	if (i >= 0 && i < SCHED_MAX_GPUS && c->compute[i] != -1)
		return c->compute[i];
	return c->compute_default;
}

int
config_timesliced(const struct config *c, uint64_t mask, int ngpus)
{
	int g;

	for (g = 0; g < ngpus && g < 64; g++)
		if ((mask & (1ULL << g)) && config_compute(c, g) == COMPUTE_TIMESLICE)
			return 1;
	return 0;
}

int
config_mode(const struct config *c, int i)
{
	if (i >= 0 && i < SCHED_MAX_GPUS && c->mode[i] != -1)
		return c->mode[i];
	return c->mode_default;
}

int
config_load(struct config *c, const char *path, char *err, size_t errlen)
{
	struct config_ctx ctx;
	char msg[256];
	size_t i;
	int r;

	memset(c, 0, sizeof(*c));
	if (config_check_table(msg, sizeof(msg)) == -1) {
		snprintf(err, errlen, "built-in key table: %s", msg);
		return -1;
	}
	for (i = 0; i < CONFIG_NKEYS; i++)
		if (config_set(c, &config_keys[i], config_keys[i].dflt, msg, sizeof(msg)) == -1) {
			snprintf(err, errlen, "built-in default: %s", msg);
			return -1;
		}
	if (path != NULL) {
		memset(&ctx, 0, sizeof(ctx));
		ctx.cfg = c;
		if ((ctx.fp = fopen(path, "r")) == NULL) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
		r = ini_parse_stream(config_reader_cb, &ctx, config_handler_cb, &ctx);
		fclose(ctx.fp);
		if (ctx.errline != 0 && (r <= 0 || ctx.errline <= r)) {
			snprintf(err, errlen, "%s:%d: %s", path, ctx.errline, ctx.msg);
			return -1;
		}
		if (r != 0) {
			snprintf(err, errlen, "%s:%d: syntax error (expected [section] or "
			    "key = value)", path, r);
			return -1;
		}
	}
	if (qos_finish(&c->qos, msg, sizeof(msg)) == -1) {
		snprintf(err, errlen, "%s: %s", path ? path : "defaults", msg);
		return -1;
	}
	if (lcclass_finish(&c->lcbe, msg, sizeof(msg)) == -1) {
		snprintf(err, errlen, "%s: [class lc] %s", path ? path : "defaults", msg);
		return -1;
	}
	for (i = 0; i < (size_t)c->qos.n && i < SCHED_MAX_QOS; i++) {
		c->sched.qos_max_jobs[i] = c->qos.c[i].max_jobs_per_user;
		c->sched.qos_max_gpus[i] = c->qos.c[i].max_gpus_per_user;
	}
	config_default_paths(c);
	if (c->web_listen[0] != '\0' && !c->web_remote) {
		struct sockaddr_in a;

		config_listen(c->web_listen, &a);
		if ((ntohl(a.sin_addr.s_addr) >> 24) != 127) {
			snprintf(err, errlen, "%s: [web] listen = %s is not a loopback address; "
			    "set [web] remote = on to listen there", path ? path : "defaults",
			    c->web_listen);
			return -1;
		}
	}
	return 0;
}

void
config_print(FILE *fp)
{
	const char *section = "", *p, *nl;
	size_t i;

	fprintf(fp, "# nvq.ini: the configuration of nvqd, the nvq daemon.\n"
	    "# Every key is listed with its default. Read from nvqd -c FILE, else\n"
	    "# /etc/nvq/nvq.ini; `nvqd -n` checks a file; SIGHUP reloads [gpus] poll,\n"
	    "# [scheduler], [limits], [resources], [qos NAME] and log_level. Generated by\n"
	    "# `nvqd --print-config`.\n");
	for (i = 0; i < CONFIG_NKEYS; i++) {
		if (strcmp(section, config_keys[i].section) != 0) {
			section = config_keys[i].section;
			fprintf(fp, "\n[%s]\n", section);
		} else
			fputc('\n', fp);
		for (p = config_keys[i].help; *p; p = nl + 1) {
			nl = strchr(p, '\n');
			if (nl == NULL) {
				fprintf(fp, "# %s\n", p);
				break;
			}
			fprintf(fp, "# %.*s\n", (int)(nl - p), p);
		}
		fprintf(fp, "%s =%s%s\n", config_keys[i].key, *config_keys[i].dflt ? " " : "",
		    config_keys[i].dflt);
	}
	qos_print(fp);
}

void
config_print_man(FILE *fp)
{
	char dflt[160];
	const char *section = "";
	size_t i;

	roff_head(fp, "nvq.ini", 5, "the configuration of nvqd, the nvq daemon");
	fputs(".SH SYNOPSIS\n/etc/nvq/nvq.ini\n.SH DESCRIPTION\n", fp);
	roff_text(fp, "nvqd reads an INI file: [section] lines, then key = value lines; # and ; "
	    "start comments. It is read from nvqd -c FILE, else /etc/nvq/nvq.ini. nvqd -n "
	    "checks a file and exits; SIGHUP reloads [gpus] poll, [scheduler], [limits], "
	    "[resources], [qos NAME] and log_level. Sizes are 512M, 20G, 1.5T (a bare number is MiB), spans 90s, 30m, 2h, "
	    "7d, shares 5%. Each key is listed below with its default, as nvqd --print-config "
	    "writes it.\n");
	for (i = 0; i < CONFIG_NKEYS; i++) {
		if (strcmp(section, config_keys[i].section) != 0) {
			section = config_keys[i].section;
			fprintf(fp, ".SH \"[%s]\"\n", section);
		}
		snprintf(dflt, sizeof(dflt), "= %s", *config_keys[i].dflt ? config_keys[i].dflt :
		    "(empty)");
		roff_item(fp, config_keys[i].key, dflt, config_keys[i].help);
	}
	qos_print_man(fp);
	fputs(".SH FILES\n/etc/nvq/nvq.ini\n.SH SEE ALSO\n.BR nvqd (8),\n.BR nvq (1)\n", fp);
}

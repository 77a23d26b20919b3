/*
 * nvqd.c: the daemon's entry point.  Reads the configuration, opens the
 * store and the GPUs through the engine, listens, and runs the libuv loop
 * until SIGTERM or SIGINT; SIGHUP reloads.  Jobs keep running when nvqd
 * stops: their supervisors are not its to kill.
 */
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "config.h"
#include "roff.h"
#include "ctl.h"
#include "engine.h"
#include "log.h"
#include "recover.h"
#include "proto.h"
#include "server.h"
#include "slurm.h"
#include "statq.h"
#include "submit.h"
#include "watch.h"
#include "web.h"

#define NVQD_DEFAULT_CONFIG	"/etc/nvq/nvq.ini"

struct nvqd {
	struct engine	engine;
	struct server	*server;
	uv_signal_t	sigterm, sigint, sighup;
};

/* nvqd's options: its usage and its man page are made from these */
static const struct {
	const char	*flag, *help;
} nvqd_opts[] = {
	{ "-c FILE", "the configuration (default " NVQD_DEFAULT_CONFIG " if it exists)" },
	{ "-n", "check the configuration and exit: 0 if it is good, else 1 with the error" },
	{ "-s SOCKET", "listen on SOCKET instead of [daemon] socket" },
	{ "--print-config", "print every key of the configuration with its default, commented" },
	{ "--man", "print this manual page (roff)" },
	{ "-h, --help", "print the options" },
};
#define NVQD_NOPTS	(sizeof(nvqd_opts) / sizeof(nvqd_opts[0]))

static void
nvqd_usage(FILE *fp)
{
	size_t i;

	fprintf(fp, "usage: nvqd [-c FILE] [-n] [-s SOCKET] [--print-config] [--man]\n");
	for (i = 0; i < NVQD_NOPTS; i++)
		fprintf(fp, "  %-15s %s\n", nvqd_opts[i].flag, nvqd_opts[i].help);
}

/* nvqd(8) */
static void
nvqd_man(FILE *fp)
{
	size_t i;

	roff_head(fp, "nvqd", 8, "the nvq daemon: a GPU batch queue for shared GPU servers");
	fputs(".SH SYNOPSIS\n.B nvqd\n[\\-c FILE] [\\-n] [\\-s SOCKET] [\\-\\-print\\-config]\n"
	    ".SH DESCRIPTION\n", fp);
	roff_text(fp, "nvqd keeps the queue of GPU jobs that nvq(1) submits, in an SQLite "
	    "database, and runs them as their owners when their GPUs and their GPU memory "
	    "fit: jobs share a GPU while the memory they asked for fits in it, and a GPU's "
	    "memory is never given out twice. It finds the GPUs through NVML (or virtual ones "
	    "from the configuration), puts the hook library into every job (LD_PRELOAD) to "
	    "hold it to its memory and to the GPU locks nvqd grants, and suspends jobs by "
	    "moving their GPU memory to host memory. It runs in the foreground and logs to "
	    "stderr; jobs outlive it and a restarted nvqd takes them back.\n");
	fputs(".SH OPTIONS\n", fp);
	for (i = 0; i < NVQD_NOPTS; i++)
		roff_item(fp, nvqd_opts[i].flag, NULL, nvqd_opts[i].help);
	fputs(".SH SIGNALS\n.TP\n.B SIGTERM, SIGINT\n", fp);
	roff_text(fp, "stop: what was read is stored and answered first; running jobs go on.\n");
	fputs(".TP\n.B SIGHUP\n", fp);
	roff_text(fp, "read the configuration again ([gpus] poll, [scheduler], [limits], "
	    "[qos NAME], log_level).\n");
	fputs(".SH CGROUPS\n", fp);
	roff_text(fp, "As root, each job runs in a cgroup v2 of its own under nvq/ in the "
	    "cgroup nvqd manages, where a job's --mem (memory.max), -c (cpu.max) and "
	    "[limits] max_procs (pids.max) are enforced. The kernel gives those controllers "
	    "to a cgroup's children only while it holds no process itself, so nvqd runs in "
	    "the leaf nvqd/ beside nvq/ and manages that leaf's parent: under systemd 254 or "
	    "later the unit's DelegateSubgroup=nvqd starts it there; started by hand it moves "
	    "itself there when the controllers are refused; under an older systemd it stays in "
	    "the unit's cgroup and logs that --mem and -c are counted but not enforced. Other "
	    "processes in that cgroup (a container's, a shell's) keep the controllers away: "
	    "start nvqd in a cgroup of its own. Where cgroup v1 holds memory and cpu (a "
	    "hybrid host) jobs join folders there instead.\n");
	fputs(".SH FILES\n.TP\n" NVQD_DEFAULT_CONFIG "\nthe configuration, nvq.ini(5)\n"
	    ".TP\n/var/lib/nvq/nvq.db\nthe database (as root), readable by everyone\n"
	    ".TP\n/run/nvq/nvqd.sock\nthe socket (as root)\n"
	    ".TP\n/var/spool/nvq\njobs' default output files\n"
	    ".SH SEE ALSO\n.BR nvq (1),\n.BR nvq.ini (5)\n", fp);
}

static void
nvqd_noop_close_cb(uv_handle_t *h)
{
	(void)h;
}

static void
nvqd_stop_cb(uv_signal_t *s, int signum)
{
	struct nvqd *d = s->data;

	log_info("%s: stopping; running jobs go on", signum == SIGTERM ? "SIGTERM" : "SIGINT");
	submit_stop();	/* what was read is stored and answered first */
	statq_stop();
	if (d->engine.slurm != NULL)
		slurm_stop(d->engine.slurm);
	d->engine.slurm = NULL;
	d->engine.on_change = NULL;
	watch_stop();
	web_stop();
	server_stop(d->server);
	engine_shutdown(&d->engine);
	uv_close((uv_handle_t *)&d->sigterm, nvqd_noop_close_cb);
	uv_close((uv_handle_t *)&d->sigint, nvqd_noop_close_cb);
	uv_close((uv_handle_t *)&d->sighup, nvqd_noop_close_cb);
}

static void
nvqd_hup_cb(uv_signal_t *s, int signum)
{
	struct nvqd *d = s->data;

	(void)signum;
	ctl_forget_names();
	engine_reload(&d->engine);
}

/*
 * malloc keeps what it freed at the top of the heap, and allocates large
 * buffers there too: by default each request grew the heap by ~90 KB
 * (SQLite's statement and page buffers) and gave it back after, a brk
 * pair and the page faults of touching it again, 6% of nvqd's time per
 * submit.  16 MiB at most are kept.
 */
static void
nvqd_malloc_tune(void)
{
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 16 << 20);
	mallopt(M_TOP_PAD, 1 << 20);
}

/*
 * Every client and every CUDA process of every job holds a connection: the
 * soft limit on open files goes up to the hard one.  Jobs do not inherit it:
 * their shims apply [limits] rlimits.
 */
static void
nvqd_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			log_warn("cannot raise the limit on open files");
	}
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "print-config", no_argument, NULL, 'P' },
		{ "man", no_argument, NULL, 'M' },
		{ "man-ini", no_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct nvqd d;
	const char *path = NULL, *sock = NULL;
	char err[1024];
	int ch, check = 0, r;
	uv_loop_t loop;

	memset(&d, 0, sizeof(d));
	while ((ch = getopt_long(argc, argv, "c:hns:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			path = optarg;
			break;
		case 'n':
			check = 1;
			break;
		case 's':
			sock = optarg;
			break;
		case 'P':
			config_print(stdout);
			return 0;
		case 'M':
			nvqd_man(stdout);
			return 0;
		case 'I':
			config_print_man(stdout);
			return 0;
		case 'h':
			nvqd_usage(stdout);
			return 0;
		default:
			nvqd_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "nvqd: unexpected argument \"%s\"\n", argv[optind]);
		nvqd_usage(stderr);
		return 2;
	}
	if (path == NULL && access(NVQD_DEFAULT_CONFIG, F_OK) == 0)
		path = NVQD_DEFAULT_CONFIG;
	if (config_load(&d.engine.cfg, path, err, sizeof(err)) == -1) {
		fprintf(stderr, "nvqd: %s\n", err);
		return 1;
	}
	if (sock != NULL) {
		if (*sock != '/' || strlen(sock) >= sizeof(d.engine.cfg.socket)) {
			fprintf(stderr, "nvqd: -s %s: give an absolute path\n", sock);
			return 2;
		}
		snprintf(d.engine.cfg.socket, sizeof(d.engine.cfg.socket), "%s", sock);
	}
	if (check) {
		printf("%s: ok\n", path ? path : "built-in defaults");
		return 0;
	}
	d.engine.config_path = path;
	log_init(d.engine.cfg.log_level);
	signal(SIGPIPE, SIG_IGN);
	nvqd_malloc_tune();
	nvqd_raise_nofile();
	if ((r = uv_loop_init(&loop)) != 0)
		log_fatalx("uv_loop_init: %s", uv_strerror(r));
	log_info("starting (protocol %d, configuration %s)", PROTO_VERSION,
	    path ? path : "built-in defaults");
	engine_init(&d.engine, &loop);
	if (d.engine.cfg.slurm &&
	    (d.engine.slurm = slurm_new(&loop, d.engine.store, &d.engine.cfg)) == NULL)
		log_fatalx("out of memory");
	recover_jobs(&d.engine);
	engine_run(&d.engine);
	submit_init(&loop, &d.engine);
	statq_init(&loop, d.engine.cfg.database);
	watch_init(&loop);
	d.engine.on_change = watch_changed;
	d.server = server_start(&loop, d.engine.cfg.socket, &ctl_handler, &d.engine);
	if (web_start(&d.engine, err, sizeof(err)) == -1)
		log_fatalx("%s", err);
	uv_signal_init(&loop, &d.sigterm);
	uv_signal_init(&loop, &d.sigint);
	uv_signal_init(&loop, &d.sighup);
	d.sigterm.data = d.sigint.data = d.sighup.data = &d;
	uv_signal_start(&d.sigterm, nvqd_stop_cb, SIGTERM);
	uv_signal_start(&d.sigint, nvqd_stop_cb, SIGINT);
	uv_signal_start(&d.sighup, nvqd_hup_cb, SIGHUP);
	uv_run(&loop, UV_RUN_DEFAULT);
	engine_free(&d.engine);
	if (uv_loop_close(&loop) != 0)
		log_warnx("the loop still had open handles at exit");
	log_info("stopped");
	return 0;
}

/*
 * config.h: nvqd's settings, read from an INI file through one key table.
 *
 * The table (config.c) is the single source of truth: it parses, it sets
 * the defaults, and `nvqd --print-config` prints it as the commented
 * etc/nvq.ini, which a test compares with the file in the tree.
 */
#ifndef NVQ_CONFIG_H
#define NVQ_CONFIG_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "log.h"	/* enum log_level */
#include "lcclass.h"
#include "qos.h"
#include "sched.h"

#define CONFIG_MAX_VIRTUAL	SCHED_MAX_GPUS

enum compute_mode { COMPUTE_SHARED, COMPUTE_TIMESLICE };

struct config {
	char		socket[PATH_MAX];
	char		database[PATH_MAX];
	char		spool[PATH_MAX];
	int		log_level;
	int		sync_full;		/* [daemon] sync = full */
	int64_t		gpu_poll;		/* seconds */
	char		nvml_library[PATH_MAX];
	char		cuda_library[PATH_MAX];	/* for nvq-ckpt */
	int		nvirtual;		/* 0: use NVML */
	uint64_t	virtual_mem[CONFIG_MAX_VIRTUAL];
	int		mode_default;
	int		mode[SCHED_MAX_GPUS];	/* -1: mode_default */
	int		compute_default;	/* enum compute_mode */
	int		compute[SCHED_MAX_GPUS];	/* -1: compute_default */
	struct sched_settings sched;
	int64_t		kill_grace;		/* seconds */
	int64_t		quantum;		/* timeslice */
	double		turn;			/* mode = timeslice: seconds; 0: auto */
	double		switch_overhead;	/* 0..1, for turn = auto */
	int64_t		revoke_timeout;
	int64_t		switch_timeout;		/* nvq-ckpt's run, beyond 1 s per 256 MiB */
	int		offload;		/* [scheduler] offload = on (1) | off (0) */
	uint64_t	staging;		/* [scheduler] staging: bytes; 0: none kept */
	double		auto_margin;		/* -m auto: over the peak, 0.1 for 10% */
	int		fairshare;		/* [scheduler] fairshare = on (1) | off (0) */
	char		web_listen[64];		/* [web] listen: ADDRESS:PORT; "": off */
	int		slurm;			/* [cluster] engine = slurm (1) | local (0) */
	char		slurm_partition[256];	/* [cluster] partition; "": Slurm's default */
	uint64_t	shard_size;		/* [cluster] shard_size: bytes */
	int64_t		slurm_poll;		/* [cluster] poll: seconds */
	char		slurm_peaks[PATH_MAX];	/* [cluster] peaks: the SPANK plugin's records */
	char		slurm_bin[PATH_MAX];	/* [cluster] slurm_bin: sbatch, squeue, ... */
	char		cluster_name[256];	/* [cluster] name: SLURM_CLUSTER_NAME; "": the host's */
	int		web_remote;		/* [web] remote = on: not only loopback */
	int64_t		web_timeout;		/* [web] timeout: seconds a connection may idle */
	int		web_per_address;	/* [web] per_address: connections of one address */
	int		web_rate;		/* [web] rate: requests a second of one address */
	int64_t		fs_halflife;		/* seconds */
	double		fs_weight;		/* priority points of a user who used nothing */
	/* [security] and [limits] for the shared server */
	char		admin_group[64];	/* "": none */
	int		has_admin_gid;
	uint32_t	admin_gid;
	int		max_priority;		/* for users who are not admins */
	long long	max_pending;		/* pending jobs per user; 0: no limit */
	long long	max_procs;		/* processes per job; 0: no limit */
	uint64_t	max_env;		/* bytes of a job's environment; 0: no limit */
	uint64_t	max_stored;		/* bytes a user's active jobs keep; 0: no limit */
	int		job_umask;
	char		rlimits[256];		/* checked by rlimits_parse */
	int		cgroups;		/* [daemon] cgroups = auto (1) | off (0) */
	char		on_finish[4096];	/* [daemon] on_finish: a shell command; "": none */
	int64_t		notify_timeout;		/* seconds a notifier may run */
	char		sendmail[PATH_MAX];	/* for --mail-user */
	/* [resources]; cpus and memory are sched.cpus and sched.host_mem */
	int		cpus_per_gpu;		/* 0: cpus / GPUs, at least 1 */
	uint64_t	default_mem;		/* a job's host memory unless it says; 0: none */
	struct qos_table qos;			/* [qos NAME] sections, [scheduler] default_qos */
	struct lcclass	lcbe;			/* [class lc] */
};

/*
 * Sets the built-in defaults, then reads path if it is not NULL.  Returns 0,
 * or -1 with "FILE:LINE: message" (or "FILE: message") in err.
 */
int	config_load(struct config *, const char *path, char *err, size_t errlen);
/* The scheduling mode of GPU index i. */
int	config_mode(const struct config *, int i);
/* The compute mode of GPU index i (enum compute_mode). */
int	config_compute(const struct config *, int i);
/* Whether one of the first ngpus GPUs in mask is a timeslice GPU (compute). */
int	config_timesliced(const struct config *, uint64_t mask, int ngpus);
/* Writes the commented example configuration: every key with its default. */
void	config_print(FILE *);
struct sockaddr_in;
/* [web] listen's ADDRESS:PORT into sa (if not NULL): 0, or -1 if it is not one. */
int	config_listen(const char *, struct sockaddr_in *sa);
/* nvq.ini(5), from the same table. */
void	config_print_man(FILE *);

#endif

/*
 * slurmjob.h: what nvqd says to Slurm and what it reads back, as pure
 * functions over strings (slurm.c does the I/O): sbatch's arguments and
 * batch script for a job, squeue's rows, Slurm's states as nvq's, the GPUs
 * scontrol -d names, and the SPANK plugin's peak records.
 */
#ifndef NVQ_SLURMJOB_H
#define NVQ_SLURMJOB_H

#include <stddef.h>
#include <stdint.h>

/* What sbatch is told of a job. */
struct slurm_req {
	int64_t		id;		/* nvq's */
	const char	*name;
	const char	*cwd;
	const char	*out, *err;	/* absolute paths */
	int		gpus;
	uint64_t	mem;		/* per GPU; 0: whole GPUs */
	uint64_t	shard_size;
	int64_t		time_limit;	/* seconds; 0: none */
	const char	*partition;	/* "" or NULL: Slurm's default */
	int		cpus;		/* -c; 0: Slurm's default */
	uint64_t	host_mem;	/* --mem, bytes; 0: Slurm's default */
	uint64_t	mem_per_cpu;	/* --mem-per-cpu, bytes (then not --mem); 0: none */
	const char	*account;	/* "" or NULL: none */
	int		warn_sig;	/* --signal [B:]SIG@TIME; 0: none */
	int		warn_time, warn_batch;
};

#define SLURM_MAX_ARGS	20

/*
 * sbatch's arguments for r (argv[0] is sbatch, the path given), their
 * strings in buf; the count, or -1 with a sentence in why (what Slurm
 * cannot be asked this way).  -g 1 with -m is --gres=shard:N with N =
 * mem / shard_size rounded up; more GPUs, or whole ones, --gres=gpu:N; -m
 * also gives --gpu-mem for nvq's SPANK plugin; -c, --mem and
 * --mem-per-cpu go on as they are (sizes in MiB, rounded up), and so do
 * --partition, --account and --signal [B:]SIG@TIME.
 */
int	slurmjob_sbatch_args(const struct slurm_req *r, const char *sbatch, char *buf, size_t len,
	    char **argv, int max, char *why, size_t whylen);
/* The shards mem takes: mem / shard_size, rounded up. */
uint64_t slurmjob_shards(uint64_t mem, uint64_t shard_size);
/*
 * The batch script that runs argv (argv_len bytes of NUL-terminated
 * strings) as given, into buf: its length, or -1 if it does not fit.
 */
int	slurmjob_script(int64_t id, const char *argv, int argv_len, char *buf, size_t len);

/* squeue's format for slurmjob_parse_row. */
#define SLURM_SQUEUE_FORMAT \
	"JobID:|,State:|,exit_code:|,NodeList:|,StartTime:|,EndTime:|,Reason:|"

/* One job as squeue shows it. */
struct slurm_row {
	int64_t		sid;
	char		state[24];	/* Slurm's: PENDING, RUNNING, COMPLETED, ... */
	int		status;		/* its batch script's wait status */
	char		nodes[256];
	double		start, end;	/* 0: not known */
	char		reason[128];
};

/* A line of squeue -h -O SLURM_SQUEUE_FORMAT; 0, or -1 if it is not one. */
int	slurmjob_parse_row(const char *line, struct slurm_row *);
/*
 * nvq's state for Slurm's: PENDING, RUNNING, SUSPENDED, or a final one
 * (*final set: COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL); NULL for
 * a state this does not know.
 */
const char *slurmjob_state(const char *state, int *final);
/* Slurm's time (2026-11-25T11:58:09, local) as seconds since the epoch; 0 for none. */
double	slurmjob_time(const char *);
/*
 * The GPUs a job holds, from scontrol -d -o show job's line: NODE:INDEX,
 * comma-separated (a node without GPUs named alone), into out; 0, or -1 if
 * the line names no node or out is too small.
 */
int	slurmjob_gpus(const char *line, char *out, size_t len);
/*
 * A line of a peaks file the SPANK plugin wrote: "NODE INDEX BYTES" into
 * gpu ("NODE:INDEX") and *bytes; 0, or -1 if it is not one.
 */
int	slurmjob_peak_line(const char *line, char *gpu, size_t len, uint64_t *bytes);

#endif

/*
 * fake_job.h: what fake_job.c's modes share with the modes in files of
 * their own (fake_ddp.c).
 */
#ifndef FAKE_JOB_H
#define FAKE_JOB_H

/* A driver function as frameworks get it (cuGetProcAddress_v2); exits if missing. */
void	*resolve(const char *name);
/* CLOCK_MONOTONIC, in seconds. */
double	 now(void);
/* Writes n into file, whole (a temporary file renamed over it). */
void	 put_count(const char *file, long n);
/* fake_job ddp RANKS SECONDS FILE (fake_ddp.c). */
int	 fake_ddp(int ranks, double secs, const char *file);

#endif

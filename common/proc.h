/*
 * proc.h: a process's start time and session, from /proc/PID/stat.  A
 * pid names a process only while it runs; its start time tells a process
 * from a later one with the same pid.  Reads /proc; no libuv.
 */
#ifndef NVQ_PROC_H
#define NVQ_PROC_H

#include <stdint.h>
#include <sys/types.h>

/* The start time of pid in clock ticks since boot, or -1 if it is gone. */
int64_t	proc_start_time(pid_t);
/* The session of pid, or -1. */
pid_t	proc_session(pid_t);

#endif

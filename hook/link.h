/*
 * link.h: the hook's connection to nvqd, and what the two files of the
 * hook ask of each other.
 *
 * link.c owns the connection and a thread of its own: it registers the
 * process (job id, pid), reports its device memory off the allocation
 * path, applies the limits and lock grants nvqd sends, and on a revoke
 * shuts the gate, waits for the work in flight, and acknowledges.
 * hook.c owns the budget and the driver; link.c reaches them through the
 * hook_* functions below.
 */
#ifndef NVQ_LINK_H
#define NVQ_LINK_H

#include <stddef.h>
#include <stdint.h>

/* Starts the link once per process (again in a forked child); never blocks
 * for more than about a second. */
void	link_start(void);
/* In a forked child: the parent's connection and thread are not its own. */
void	link_child(void);

/* ---- hook.c, for link.c ---- */
void	hook_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Device memory per CUDA ordinal: fills used/peak, returns how many. */
int	hook_usage(uint64_t *used, uint64_t *peak, int max);
/* A device's UUID as NVML writes it ("GPU-..."); 0 or -1. */
int	hook_uuid(int dev, char *buf, size_t len);
/* Waits for the work submitted to the active primary contexts of devs. */
void	hook_sync(int ndev);
/* What this process may hold on dev, as nvqd sees the job (0: no cap). */
void	hook_set_cap(int dev, uint64_t cap);

#endif

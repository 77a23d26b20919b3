/*
 * budget.h: a job's device memory, as the hook counts it.  Pure logic: no
 * CUDA, no locking (the hook holds its lock around these calls).
 *
 * An allocation first reserves its size (budget_reserve), so that two
 * threads cannot both pass the check; then either the driver's call
 * succeeds and budget_commit records what it returned under a key, or it
 * fails and budget_unreserve gives the size back.  budget_release frees by
 * key.  Keys are device pointers, VMM handles or arrays: the kind keeps
 * them apart.  Functions return 0 or -1.
 */
#ifndef NVQ_BUDGET_H
#define NVQ_BUDGET_H

#include <stdint.h>

#define BUDGET_MAX_DEV	64

enum budget_kind { BUDGET_PTR = 1, BUDGET_HANDLE, BUDGET_ARRAY };

struct budget_entry {
	uint64_t	key;
	uint64_t	size;
	int		kind;	/* 0: empty slot, -1: deleted */
	int		dev;
	int		exported;	/* the job shared it itself (budget_exported) */
};

struct budget {
	uint64_t	limit;		/* per device; 0: no limit */
	uint64_t	used[BUDGET_MAX_DEV];
	uint64_t	peak[BUDGET_MAX_DEV];
	uint64_t	ceiling[BUDGET_MAX_DEV];	/* a lower limit nvqd set (the job's other
					   processes hold the rest); 0: none */
	uint64_t	exported;	/* bytes of the entries marked exported */
	struct budget_entry *table;
	uint64_t	cap, count, tombs;
};

void	budget_init(struct budget *, uint64_t limit);
void	budget_free(struct budget *);
/* Takes size from dev's budget; -1 if that would pass the limit. */
int	budget_reserve(struct budget *, int dev, uint64_t size);
void	budget_unreserve(struct budget *, int dev, uint64_t size);
/* Records a reserved allocation under (kind, key); -1 if out of memory. */
int	budget_commit(struct budget *, int kind, uint64_t key, int dev, uint64_t size);
/* Gives back what (kind, key) holds; -1 if it is not known (not ours). */
int	budget_release(struct budget *, int kind, uint64_t key);
/* The same, with the device and size it held. */
int	budget_take(struct budget *, int kind, uint64_t key, int *dev, uint64_t *size);
/*
 * Marks (kind, key) as shared by the job itself with other processes (a
 * VMM handle exported to a descriptor, as NCCL does), counted in exported
 * until it is released; -1 if it is not known.
 */
int	budget_exported(struct budget *, int kind, uint64_t key);
/* What dev may still allocate: under the limit and the cap (0 if none). */
uint64_t budget_left(const struct budget *, int dev);

#endif

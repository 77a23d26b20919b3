/*
 * webrate.c: a token bucket per client address (see webrate.h).
 */
#include <string.h>

#include "webrate.h"

void
webrate_init(struct webrate *w, double rate)
{
	memset(w, 0, sizeof(*w));
	w->rate = rate;
}

/* addr's slot, or the one it takes: a free one, else the least recently seen. */
static int
webrate_slot(struct webrate *w, uint32_t addr)
{
	int i, h, old = 0;

	/* the address 0.0.0.0 never connects; it marks a free slot */
	h = (int)((addr * 2654435761u) >> 24) % WEBRATE_SLOTS;
	for (i = 0; i < WEBRATE_SLOTS; i++) {
		int k = (h + i) % WEBRATE_SLOTS;

		if (w->slot[k].addr == addr || w->slot[k].addr == 0)
			return k;
		if (w->slot[k].at < w->slot[old].at)
			old = k;
	}
	return old;
}

int
webrate_take(struct webrate *w, uint32_t addr, double now)
{
	int k = webrate_slot(w, addr);

	if (w->slot[k].addr != addr) {
		w->slot[k].addr = addr;
		w->slot[k].tokens = w->rate;
		w->slot[k].at = now;
	}
	if (now > w->slot[k].at)
		w->slot[k].tokens += (now - w->slot[k].at) * w->rate;
	if (w->slot[k].tokens > w->rate)
		w->slot[k].tokens = w->rate;
	w->slot[k].at = now;
	if (w->slot[k].tokens < 1)
		return 0;
	w->slot[k].tokens -= 1;
	return 1;
}

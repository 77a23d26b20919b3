/*
 * intr.c: the double Ctrl-C rule of nvq run on a terminal, over plain
 * bytes and times (tty.c reads them; test_intr.c drives this).  nvq's own
 * terminal is raw while the job runs, so a Ctrl-C is a byte, which the
 * job's pseudo-terminal turns into SIGINT for the job's foreground; two of
 * them within a second also cancel the job.
 */
#include "intr.h"

size_t
intr_scan(struct intr *in, const unsigned char *buf, size_t n, double now, int vintr)
{
	size_t i;

	if (vintr < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (buf[i] != (unsigned char)vintr)
			continue;
		if (in->seen && now - in->last <= INTR_WINDOW && now >= in->last)
			return i;
		in->seen = 1;
		in->last = now;
	}
	return n;
}

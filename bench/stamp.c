/* stamp.c: prints the time (CLOCK_REALTIME, seconds) its main() began, for bench/chain_parts.sh. */
#include <stdio.h>
#include <time.h>

int
main(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	printf("%.6f\n", (double)ts.tv_sec + ts.tv_nsec / 1e9);
	return 0;
}

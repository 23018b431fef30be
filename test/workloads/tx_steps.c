/*
 * tx_steps STEPS MS [START_AT STOP_AT]: STEPS steps of about MS ms, each
 * holding one range "work" and one mark "tick-<n>". With START_AT and
 * STOP_AT, calls prof_start() when step START_AT begins and prof_stop()
 * when step STOP_AT begins (for --start-paused tests).
 */
#include <prof/prof_tx.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 10;
	long ms = argc > 2 ? atol(argv[2]) : 1;
	int start_at = argc > 4 ? atoi(argv[3]) : 0, stop_at = argc > 4 ? atoi(argv[4]) : 0;
	struct timespec d = { ms / 1000, (ms % 1000) * 1000000L };
	char tick[32];
	for (int n = 1; n <= steps; n++) {
		if (n == start_at)
			prof_start();
		if (n == stop_at)
			prof_stop();
		prof_range_push("work");
		snprintf(tick, sizeof tick, "tick-%d", n);
		prof_mark(tick);
		nanosleep(&d, NULL);
		prof_range_pop();
		prof_step();
	}
	printf("tx_steps: %d steps\n", steps);
	return 0;
}

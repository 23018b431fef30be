/*
 * tx_signal N: a timer signal's handler records while the main thread
 * records too. The main thread marks "main" N times and, every 16th
 * time, pushes and pops a range of a name never seen before (so its
 * stream keeps defining strings and growing its intern table); a
 * SIGALRM every 20 µs marks "sig" from the handler, and every 4th
 * handler call a name of its own ("sig-<k>"), so the handler also
 * interns while the main thread may be in the middle of a record.
 * Prints "main N ranges R handler H" on stdout: what the program asked
 * to record (test_agent_reentry.py checks it against the run).
 */
#include <prof/prof_tx.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t handler_calls;
static char handler_names[64][16];

static void on_alarm(int sig)
{
	(void)sig;
	unsigned k = (unsigned)handler_calls++;
	prof_mark((k & 3) ? "sig" : handler_names[(k >> 2) & 63]);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	for (int i = 0; i < 64; i++)
		snprintf(handler_names[i], sizeof handler_names[i], "sig-%d", i);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 20 }, { 0, 20 } };
	setitimer(ITIMER_REAL, &it, NULL);
	long ranges = 0;
	char name[32];
	for (long i = 0; i < n; i++) {
		prof_mark("main");
		if (i % 16 == 0) {
			snprintf(name, sizeof name, "range %ld", i);
			prof_range_push(name);
			prof_range_pop();
			ranges++;
		}
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	printf("main %ld ranges %ld handler %ld\n", n, ranges, (long)handler_calls);
	return 0;
}

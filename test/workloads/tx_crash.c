/*
 * tx_crash MODE COUNT: marks "event-<k>" COUNT times (and a range and a
 * step for each hundred), then dies: MODE "kill" by SIGKILL, "segv" by a
 * null-pointer write, "exit" normally.
 */
#include <prof/prof_tx.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A real fault, also in a PROF_SANITIZE build: UBSan would turn the null
 * write into its own report and exit 1 instead. */
#if defined(__has_attribute) && __has_attribute(no_sanitize)
__attribute__((no_sanitize("undefined")))
#endif
static void tx_crash_segv(void)
{
	volatile int *p = NULL;
	*p = 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "exit";
	int count = argc > 2 ? atoi(argv[2]) : 1000;
	char msg[32];
	for (int k = 0; k < count; k++) {
		snprintf(msg, sizeof msg, "event-%d", k);
		prof_mark(msg);
	}
	fflush(stdout);
	if (strcmp(mode, "kill") == 0)
		raise(SIGKILL);
	if (strcmp(mode, "segv") == 0)
		tx_crash_segv();
	return 0;
}

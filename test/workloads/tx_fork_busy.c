/*
 * tx_fork_busy FORKS: forks while other threads record and switch
 * recording windows. Three threads mark in a loop, a fourth pauses and
 * resumes recording (prof_stop/prof_start) and steps; the main thread
 * forks FORKS children one after another. Each child counts the mappings
 * of the parent's raw streams it inherited (/proc/self/maps lines under
 * PROF_AGENT_RUN_DIR, but for the control page and its own streams),
 * resumes recording (the pause it may inherit), marks "child" and exits with that count (at most 100). Prints "forks F inherited I" (I: the children's mappings, summed)
 * and exits 1 when a child did not exit normally.
 */
#include <prof/prof_tx.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int stop;   /* atomic */

static void *marker(void *arg)
{
	(void)arg;
	for (unsigned k = 1; !__atomic_load_n(&stop, __ATOMIC_RELAXED); k++) {
		prof_mark("parent");
		if (k % 256 == 0)
			usleep(50);   /* busy, not a flood: the test parses it all */
	}
	return NULL;
}

static void *switcher(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		prof_stop();
		prof_start();
		prof_step();
		usleep(20);
	}
	return NULL;
}

/* Mappings of files under the run directory other than the control page
 * and this process's own streams: the parent's streams. */
static int inherited_maps(void)
{
	const char *run = getenv("PROF_AGENT_RUN_DIR");
	FILE *f = fopen("/proc/self/maps", "r");
	if (!run || !*run || !f)
		return f ? (fclose(f), 0) : 0;
	char line[8192], own[64];
	snprintf(own, sizeof own, "/raw/%d.", (int)getpid());
	int n = 0;
	while (fgets(line, sizeof line, f))
		n += strstr(line, run) && !strstr(line, "/raw/control") && !strstr(line, own);
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	int forks = argc > 1 ? atoi(argv[1]) : 50;
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, i == 3 ? switcher : marker, NULL) != 0)
			return 2;
	int inherited = 0, bad = 0;
	for (int c = 0; c < forks; c++) {
		pid_t pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0) {
			int n = inherited_maps();
			/* the switcher may have paused the parent (prof_stop) just
			 * before the fork, and the child inherits the pause */
			prof_start();
			prof_mark("child");
			exit(n > 100 ? 100 : n);
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
			bad++;
		else
			inherited += WEXITSTATUS(st);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("forks %d inherited %d\n", forks, inherited);
	return bad ? 1 : 0;
}

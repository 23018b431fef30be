/*
 * tx_many_threads N: N short threads, one after another, each marking
 * once under a name of its own ("thread <i>") and ending. Prints the
 * resident memory (VmRSS, kB) and the number of mappings
 * (/proc/self/maps lines) after the first tenth of the threads and after
 * all of them: "rss_kb A B maps C D". Under prof a finished thread's
 * agent memory must be given back or reused, so B stays near A.
 */
#include <prof/prof_tx.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *one(void *arg)
{
	char name[32];
	snprintf(name, sizeof name, "thread %ld", (long)(intptr_t)arg);
	prof_mark(name);
	return NULL;
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			kb = atol(line + 6);
	if (f)
		fclose(f);
	return kb;
}

static long maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	long n = 0;
	int c;
	while (f && (c = fgetc(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	long rss_a = 0, maps_a = 0;
	for (long i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, one, (void *)(intptr_t)i) != 0)
			return 1;
		pthread_join(t, NULL);
		if (i + 1 == n / 10) {
			rss_a = rss_kb();
			maps_a = maps();
		}
	}
	printf("rss_kb %ld %ld maps %ld %ld\n", rss_a, rss_kb(), maps_a, maps());
	return 0;
}

/*
 * Watches the run's control page (what every agent reads on each record)
 * and prints each state it sees: "<ms since start> <recording> <generation>".
 * Used to check --delay/--duration from the program's side.
 *
 *   launcher_control TOTAL_MS
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "raw/raw_control.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	double t0 = now_ms(), total = argc > 1 ? atof(argv[1]) : 1000;
	const char *run = getenv("PROF_AGENT_RUN_DIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/raw/%s", run ? run : ".", RAW_CONTROL_FILE);
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	const struct raw_control *c = mmap(NULL, sizeof *c, PROT_READ, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED || c->magic != RAW_CONTROL_MAGIC) {
		fprintf(stderr, "%s: not a control page\n", path);
		return 1;
	}
	uint32_t last_gen = 0;
	for (double t = 0; t < total; t = now_ms() - t0) {
		uint32_t gen = __atomic_load_n(&c->generation, __ATOMIC_ACQUIRE);
		if (gen != last_gen) {
			printf("%.1f %u %u\n", t, c->recording, gen);
			fflush(stdout);
			last_gen = gen;
		}
		usleep(2000);
	}
	return 0;
}

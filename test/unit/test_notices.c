/*
 * Notices (lib/run/notices.c): the lines holding "notice: " in the agents'
 * logs, each distinct text once, in log-name order, with the first pid
 * and how many processes said it; past RUN_NOTICES_MAX texts are counted.
 * Which are moot in a run that stepped, and the note on a command whose
 * work runs outside prof's tree (lib/run/outside.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/notices.h"
#include "run/outside.h"
#include "unit/unit.h"

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_collect(void)
{
	char run[256], logs[300];
	snprintf(run, sizeof run, "%s/notices-XXXXXX", unit_tmp_dir());
	CHECK(mkdtemp(run) != NULL);
	snprintf(logs, sizeof logs, "%s/logs", run);
	CHECK(mkdir(logs, 0755) == 0);
	write_file(logs, "agent-20.log",
		   "prof agent[20]: cuda: tracing with CUPTI 130001\n"
		   "prof agent[20]: python hooks: notice: prof stepped aside\n"
		   "prof agent[20]: python hooks: notice: no steps were seen");
	write_file(logs, "agent-10.log",
		   "prof agent[10]: python hooks: notice: prof stepped aside\n");
	write_file(logs, "launcher-device.log", "prof agent[1]: notice: not an agent's log\n");
	struct run_notices ns;
	CHECK(run_notices_collect(run, &ns) == 0);
	CHECK(ns.n == 2 && ns.dropped == 0);
	if (ns.n == 2) {
		CHECK_STR(ns.v[0].text, "prof stepped aside");
		CHECK(ns.v[0].pid == 10 && ns.v[0].processes == 2);
		CHECK_STR(ns.v[1].text, "no steps were seen");   /* no newline at the end */
		CHECK(ns.v[1].pid == 20 && ns.v[1].processes == 1);
	}
	run_notices_free(&ns);
	/* no logs directory: no notice, no error */
	CHECK(run_notices_collect(logs, &ns) == 0 && ns.n == 0);
}

static void test_cap(void)
{
	struct run_notices ns;
	memset(&ns, 0, sizeof ns);
	char text[32];
	for (int i = 0; i < RUN_NOTICES_MAX + 3; i++) {
		int n = snprintf(text, sizeof text, "notice %d", i);
		CHECK(run_notices_add(&ns, text, (size_t)n, 100 + i) == 0);
	}
	CHECK(run_notices_add(&ns, "notice 0", 8, 7) == 0);
	CHECK(ns.n == RUN_NOTICES_MAX && ns.dropped == 3 && ns.v[0].processes == 2);
	run_notices_free(&ns);
}

/* The hooks' "no steps were seen" speaks of its own process: unsaid
 * when others stepped; every other notice stands. */
static void test_moot(void)
{
	const char *none = "no steps were seen: this process never stepped a torch.optim optimizer";
	CHECK(run_notice_moot(none, 1));
	CHECK(!run_notice_moot(none, 0));
	CHECK(!run_notice_moot("prof stepped aside for torch.profiler", 1));
	CHECK(!run_notice_moot("this process imported torch without prof's Python hooks", 1));
}

static void test_outside(void)
{
	CHECK_CONTAINS(run_outside_tree("srun", 0), "srun ... prof run -o DIR -- CMD");
	CHECK_CONTAINS(run_outside_tree("/usr/bin/srun", 1), "slurmd");
	CHECK_CONTAINS(run_outside_tree("docker", 1), "inside the container");
	CHECK(run_outside_tree("python3", 0) == NULL);
	CHECK(run_outside_tree("sruns", 0) == NULL);
	/* MPI starts its local ranks under prof: said only when none stepped */
	CHECK(run_outside_tree("mpirun", 1) == NULL);
	CHECK(run_outside_tree("mpirun", -1) == NULL);   /* not parsed: not known */
	CHECK_CONTAINS(run_outside_tree("/opt/mpi/bin/mpirun", 0), "other machines");
	CHECK(run_outside_tree(NULL, 0) == NULL);
	CHECK_CONTAINS(run_outside_tree("/usr/local/bin/prof", 1), "that prof run records the program");
	char buf[512];
	run_apart_note(buf, sizeof buf, "/usr/bin/foo", 1);
	CHECK_CONTAINS(buf, "/usr/bin/foo was started with an environment of its own");
	CHECK(strstr(buf, "other program") == NULL);
	run_apart_note(buf, sizeof buf, "", 3);
	CHECK_CONTAINS(buf, "a program was started");
	CHECK_CONTAINS(buf, "nor 2 other programs started so");
}

int main(void)
{
	test_collect();
	test_cap();
	test_moot();
	test_outside();
	return unit_done();
}

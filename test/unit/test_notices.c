/*
 * Notices (lib/run/notices.c): the lines holding "notice: " in the agents'
 * logs, each distinct text once, in log-name order, with the first pid
 * and how many processes said it; past RUN_NOTICES_MAX texts are counted.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/notices.h"
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

int main(void)
{
	test_collect();
	test_cap();
	return unit_done();
}

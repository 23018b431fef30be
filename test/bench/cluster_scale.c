/*
 * How the cluster analysis scales with a long job's steps: one rank's
 * step_trace_time.csv of N steps on D devices read (cluster_read_step_csv,
 * prof parse's gather), the slow-rank analysis of R such ranks
 * (cluster_slow_analyse, prof parse and prof stats), and
 * cluster_step_trace_time.csv written and read back (prof stats' ranks),
 * and the ranks' communication_matrix.json merged (one allreduce a step),
 * each at N and 4N steps. A ratio near 4 is linear; 16 is quadratic.
 *
 *   build/test/bench/cluster_scale [N] [RANKS] [DEVICES]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cluster/cluster.h"
#include "common/fsutil.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A rank's step_trace_time.csv: device-major, as several devices write it. */
static char *step_csv(long steps, int devices, int rank)
{
	size_t cap = (size_t)steps * (size_t)devices * 120 + 400, n = 0;
	char *t = malloc(cap);
	if (!t)
		return NULL;
	n += (size_t)snprintf(t, cap, "Device_id,Step,Computing,Communication(Not Overlapped),"
			      "Overlapped,Communication,Free,Stage,Bubble,Communication(Not "
			      "Overlapped and Exclude Receive),Preparing\n");
	for (int d = 0; d < devices; d++)
		for (long s = 1; s <= steps; s++)
			n += (size_t)snprintf(t + n, cap - n, "%d,%ld,%d.000,1000.000,0.000,1000.000,"
					      "%ld.000,5000.000,0.000,1000.000,10.000\n", d, s,
					      3000 + rank * 10 + d, 1000 + (s % 7));
	return t;
}

struct figures { double read, analyse, write, back, matrix; };

/* DIR/rR/PROFILER_OUTPUT/communication_matrix.json: a step, an allreduce. */
static char *rank_dir(const char *dir, long steps, int rank)
{
	char sub[64], *run, *out, *file;
	snprintf(sub, sizeof sub, "r%d", rank);
	run = fs_join(dir, sub);
	out = run ? fs_join(run, "PROFILER_OUTPUT") : NULL;
	file = out ? fs_join(out, "communication_matrix.json") : NULL;
	FILE *f = file && fs_mkdir_p(out) == 0 ? fopen(file, "w") : NULL;
	for (long s = 1; f && s <= steps; s++)
		fprintf(f, "%s\"step%ld\": {\"p2p\": {}, \"collective\": {\"allreduce-top1@g\": "
			"{\"%d-%d\": {\"Transport Type\": \"HCCS\", \"Transit Size(MB)\": 1.0, "
			"\"Transit Time(ms)\": 0.5, \"Bandwidth(GB/s)\": 2.0, \"Op Name\": "
			"\"allreduce\"}}}}%s", s == 1 ? "{" : ", ", s, rank, (rank + 1) % 8,
			s == steps ? "}\n" : "");
	if (!f || fclose(f) != 0) {
		free(run);
		run = NULL;
	}
	free(out);
	free(file);
	return run;
}

static int measure(long steps, int ranks, int devices, const char *dir, struct figures *f)
{
	struct cluster c = { .ranks = calloc((size_t)ranks, sizeof *c.ranks) };
	if (!c.ranks)
		return -1;
	double t0 = now_s();
	for (int r = 0; r < ranks; r++) {
		char *csv = step_csv(steps, devices, r);
		c.ranks[c.n].rank = r;
		if (!csv || cluster_read_step_csv(csv, &c.ranks[c.n++]) != 0)
			return -1;
		free(csv);
	}
	f->read = (now_s() - t0) / ranks;
	struct cluster_slow s;
	t0 = now_s();
	if (cluster_slow_analyse(&c, &s) != 0)
		return -1;
	f->analyse = now_s() - t0;
	t0 = now_s();
	if (cluster_write_step_trace(dir, &c) != 0)
		return -1;
	f->write = now_s() - t0;
	char *p = fs_join(dir, "cluster_step_trace_time.csv"), *text = NULL;
	size_t len;
	struct cluster back = { 0 };
	t0 = now_s();
	if (!p || fs_read_file(p, &text, &len) != 0 || cluster_read_cluster_csv(text, &back) != 0)
		return -1;
	f->back = now_s() - t0;
	for (int r = 0; r < ranks; r++)
		if (!(c.ranks[r].dir = rank_dir(dir, steps, r)))
			return -1;
	t0 = now_s();
	if (cluster_write_matrix(dir, &c, stderr) != 0)
		return -1;
	f->matrix = now_s() - t0;
	unlink(p);
	free(p);
	free(text);
	cluster_free(&back);
	cluster_slow_free(&s);
	cluster_free(&c);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	int ranks = argc > 2 ? atoi(argv[2]) : 8, devices = argc > 3 ? atoi(argv[3]) : 2;
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/cluster_scale.%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	if (n < 1 || ranks < 1 || devices < 1 || fs_mkdir_p(dir) != 0) {
		fprintf(stderr, "usage: cluster_scale [N] [RANKS] [DEVICES]\n");
		return 2;
	}
	struct figures a, b;
	if (measure(n, ranks, devices, dir, &a) || measure(4 * n, ranks, devices, dir, &b)) {
		fprintf(stderr, "cluster_scale: failed (memory?)\n");
		return 1;
	}
	char cmd[4200];   /* the ranks' files */
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cluster_scale: %s left behind\n", dir);
	printf("%d ranks, %d devices each; N = %ld steps against 4N\n", ranks, devices, n);
	printf("%-44s %10s %10s %6s\n", "", "N (s)", "4N (s)", "ratio");
	const char *what[] = { "a rank's step_trace_time.csv read",
			       "slow-rank analysis of the ranks",
			       "cluster_step_trace_time.csv written",
			       "cluster_step_trace_time.csv read back",
			       "communication matrices merged" };
	double x[] = { a.read, a.analyse, a.write, a.back, a.matrix };
	double y[] = { b.read, b.analyse, b.write, b.back, b.matrix };
	for (int i = 0; i < 5; i++)
		printf("%-44s %10.4f %10.4f %6.1f\n", what[i], x[i], y[i], x[i] > 0 ? y[i] / x[i] : 0);
	return 0;
}

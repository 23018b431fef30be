/* Cluster analysis on constructed per-rank step_trace_time.csv: reading,
 * cluster_step_trace_time.csv (and reading it back), and the slow-rank
 * rule exactly. */
#define _GNU_SOURCE   /* nftw, for rawgen.h's tmpdir */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/cluster.h"
#include "common/fsutil.h"
#include "unit.h"
#include "unit/rawgen.h"

#define HEADER_NOLF "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped," \
	"Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive)," \
	"Preparing"
#define HEADER HEADER_NOLF "\n"

/* One rank's CSV of device `dev` (-1: the host's rows): `steps` steps,
 * each Computing comp, Comm(NO) comm, Free free. */
static char *csv_of(int dev, int steps, double comp, double comm, double free_us)
{
	static char buf[4096];
	size_t n = (size_t)snprintf(buf, sizeof buf, HEADER);
	for (int s = 1; s <= steps; s++)
		n += (size_t)snprintf(buf + n, sizeof buf - n,
				      "%d,%d,%.3f,%.3f,0.000,%.3f,%.3f,%.3f,0.000,%.3f,1.000\n",
				      dev, s, comp, comm, comm, free_us, comp + comm + free_us, comm);
	return buf;
}

static char *csv_for(int steps, double comp, double comm, double free_us)
{
	return csv_of(0, steps, comp, comm, free_us);
}

static void add_rank(struct cluster *c, int rank, const char *csv)
{
	c->ranks = realloc(c->ranks, (c->n + 1) * sizeof *c->ranks);
	struct cluster_rank *r = &c->ranks[c->n++];
	memset(r, 0, sizeof *r);
	r->rank = rank;
	r->dir = strdup("x");
	CHECK(cluster_read_step_csv(csv, r) == 0);
}

static void test_read(void)
{
	struct cluster_rank r = { 0 };
	/* a host row and two device rows of step 2: the device row with the larger Stage */
	const char *csv = HEADER
		"-1,2,0.000,0.000,0.000,0.000,50.000,50.000,0.000,0.000,0.000\n"
		"0,2,10.000,0.000,0.000,0.000,1.000,11.000,0.000,0.000,0.000\n"
		"1,2,20.000,0.000,0.000,0.000,1.000,21.000,0.000,0.000,0.000\n"
		"0,1,5.000,1.000,0.000,1.000,0.000,6.000,0.000,1.000,0.500\n";
	CHECK(cluster_read_step_csv(csv, &r) == 0);
	CHECK(r.nsteps == 2);
	CHECK(r.steps[0].step == 1 && r.steps[1].step == 2);
	CHECK(r.steps[1].v[CLUSTER_COMPUTING] == 20.0);
	CHECK(r.steps[0].v[CLUSTER_PREPARING] == 0.5);
	free(r.steps);
	struct cluster_rank bad = { 0 };
	CHECK(cluster_read_step_csv("Step,Type\n1,2\n", &bad) == -1);
	CHECK(bad.nsteps == 0);
	CHECK(cluster_read_step_csv(HEADER_NOLF "Extra\n", &bad) == -1);
	/* a restarted rank's rank_<r>/ file tells its processes apart by Pid */
	struct cluster_rank twice = { 0 };
	CHECK(cluster_read_step_csv(HEADER_NOLF ",Pid\n"
		"-1,1,0.000,0.000,0.000,0.000,7.000,7.000,0.000,0.000,0.000,41\n"
		"-1,1,0.000,0.000,0.000,0.000,9.000,9.000,0.000,0.000,0.000,57\n", &twice) == 0);
	CHECK(twice.nsteps == 1 && twice.steps[0].v[CLUSTER_STAGE] == 9.0);
	free(twice.steps);
}

static void test_slow_free(void)
{
	struct cluster c = { 0 };
	add_rank(&c, 0, csv_for(3, 20000, 10000, 100));
	add_rank(&c, 1, csv_for(3, 20000, 10000, 100));
	add_rank(&c, 2, csv_for(3, 20000, 10000, 100));
	add_rank(&c, 3, csv_for(3, 20000, 10000, 15100));
	struct cluster_slow s;
	CHECK(cluster_slow_analyse(&c, &s) == 0);
	CHECK(s.nsteps == 3);
	CHECK(s.nslow == 1);
	CHECK(s.slow[0].rank == 3);
	CHECK(strcmp(cluster_phase_name[s.slow[0].phase], "Free") == 0);
	CHECK(s.slow[0].excess == 15000.0);
	CHECK(s.slow[0].pct == 15000.0);
	/* every step's worst Free is rank 3; Computing has no rank above the median */
	for (size_t t = 0; t < s.nsteps; t++) {
		CHECK(s.worst[t * CLUSTER_NPHASES + 2].rank == 3);
		CHECK(s.worst[t * CLUSTER_NPHASES + 0].rank == -1);
	}
	/* the outputs */
	const char *tmp = getenv("PROF_TEST_TMP");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/test_cluster.%d", tmp ? tmp : "/tmp", (int)getpid());
	CHECK(fs_mkdir_p(dir) == 0);
	CHECK(cluster_write_step_trace(dir, &c) == 0);
	CHECK(cluster_write_slow(dir, &c, &s) == 0);
	char *p = fs_join(dir, "cluster_step_trace_time.csv"), *text = NULL;
	size_t len;
	CHECK(fs_read_file(p, &text, &len) == 0);
	CHECK(text && strncmp(text, "Step,Type,Index,Computing,Communication(Not Overlapped),"
			      "Overlapped,Communication,Free,Stage,Bubble,Communication(Not "
			      "Overlapped and Exclude Receive),Preparing\n", 150) == 0);
	CHECK_CONTAINS(text, "\n1,rank,0,20000.000,10000.000,0.000,10000.000,100.000,");
	CHECK_CONTAINS(text, "\n3,rank,3,20000.000,10000.000,0.000,10000.000,15100.000,");
	int lines = 0;
	for (char *q = text; q && *q; q++)
		lines += *q == '\n';
	CHECK(lines == 1 + 4 * 3);
	free(text);
	free(p);
	p = fs_join(dir, "cluster_slow_rank.txt");
	text = NULL;
	CHECK(fs_read_file(p, &text, &len) == 0);
	CHECK_CONTAINS(text, "max(10% of that median, 1 ms)");
	CHECK_CONTAINS(text, "rank 3 is slow in Free: typical step 15100.000 us, median 100.000 us, "
		       "15000.000 us above (+15000.0%)");
	free(text);
	free(p);
	const char *names[] = { "cluster_step_trace_time.csv", "cluster_slow_rank.txt",
				"cluster_slow_rank.json" };
	for (size_t i = 0; i < 3; i++) {
		p = fs_join(dir, names[i]);
		unlink(p);
		free(p);
	}
	rmdir(dir);
	cluster_slow_free(&s);
	cluster_free(&c);
}

static void test_no_slow(void)
{
	struct cluster c = { 0 };
	/* Computing: median 20750, limit 2075: 21999 is 1249 above, not slow.
	 * Free: median 0, limit 1 ms: 1000 exactly is not more than it. */
	add_rank(&c, 0, csv_for(2, 20000, 10000, 0));
	add_rank(&c, 1, csv_for(2, 20500, 10000, 0));
	add_rank(&c, 2, csv_for(2, 21000, 10000, 0));
	add_rank(&c, 3, csv_for(2, 21999, 10000, 1000));
	struct cluster_slow s;
	CHECK(cluster_slow_analyse(&c, &s) == 0);
	CHECK(s.nslow == 0);
	CHECK(s.median[0] == 20750.0);
	CHECK(s.worst[0].rank == 3 && s.worst[0].excess == 1249.0);
	CHECK(s.worst[2].rank == 3 && s.worst[2].pct < 0);
	cluster_slow_free(&s);
	/* 1 µs more than 1 ms is slow */
	c.ranks[3].steps[0].v[CLUSTER_FREE] = 1002;
	CHECK(cluster_slow_analyse(&c, &s) == 0);
	CHECK(s.nslow == 1 && s.slow[0].rank == 3 && s.slow[0].phase == 2);
	CHECK(s.slow[0].excess == 1001.0);
	cluster_slow_free(&s);
	cluster_free(&c);
}

static void test_ties(void)
{
	struct cluster c = { 0 };
	/* two ranks equally slow in Communication(Not Overlapped): both are
	 * slow, in rank order; a step's worst is the lower rank */
	add_rank(&c, 0, csv_for(2, 20000, 10000, 0));
	add_rank(&c, 1, csv_for(2, 20000, 10000, 0));
	add_rank(&c, 2, csv_for(2, 20000, 10000, 0));
	add_rank(&c, 4, csv_for(2, 20000, 30000, 0));
	add_rank(&c, 3, csv_for(2, 20000, 30000, 0));
	struct cluster_slow s;
	CHECK(cluster_slow_analyse(&c, &s) == 0);
	CHECK(s.nslow == 2);
	CHECK(s.slow[0].rank == 3 && s.slow[1].rank == 4);
	CHECK(s.slow[0].phase == 1 && s.slow[1].phase == 1);
	CHECK(s.slow[0].excess == 20000.0 && s.slow[0].pct == 200.0);
	CHECK(s.worst[1].rank == 3);
	CHECK(s.worst[CLUSTER_NPHASES + 1].rank == 3);
	cluster_slow_free(&s);
	cluster_free(&c);
}

/* One long step (the first holds the set-up) does not make a rank slow;
 * most of its steps being long does. */
static void test_one_long_step(void)
{
	struct cluster c = { 0 };
	for (int r = 0; r < 4; r++)
		add_rank(&c, r, csv_for(5, 20000, 10000, 100));
	c.ranks[2].steps[0].v[CLUSTER_FREE] = 900000;   /* imports, model build */
	struct cluster_slow s;
	CHECK(cluster_slow_analyse(&c, &s) == 0);
	CHECK(s.nslow == 0);
	CHECK(s.worst[2].rank == 2 && s.worst[2].excess == 899900.0);  /* still shown per step */
	cluster_slow_free(&s);
	for (size_t k = 0; k < 3; k++)
		c.ranks[1].steps[k].v[CLUSTER_FREE] = 5100;
	CHECK(cluster_slow_analyse(&c, &s) == 0);
	CHECK(s.nslow == 1 && s.slow[0].rank == 1 && s.slow[0].phase == 2);
	CHECK(s.slow[0].value == 5100.0 && s.slow[0].excess == 5000.0);
	cluster_slow_free(&s);
	cluster_free(&c);
}

/* cluster_step_trace_time.csv and hta/ read back as they were written,
 * runs a folder down (a node's) included; rows not a rank's skipped. */
static void test_load_back(void)
{
	char *dir = rg_tmpdir("test_cluster_load"), *out = fs_join(dir, "cluster_analysis_output");
	struct cluster c = { 0 };
	add_rank(&c, 5, csv_for(2, 1000, 20, 3));
	add_rank(&c, 1, csv_for(3, 2000, 10, 4));
	for (int i = 0; i < 2; i++) {
		char rel[32];
		snprintf(rel, sizeof rel, "node%d/r%d_prof", i, i);
		free(c.ranks[i].dir);
		c.ranks[i].dir = fs_join(dir, rel);
		char *po = fs_join(c.ranks[i].dir, "PROFILER_OUTPUT");
		char *t = po ? fs_join(po, "trace_view.json") : NULL;
		CHECK(t && fs_mkdir_p(po) == 0 && fs_write_atomic(t, "{}", 2) == 0);
		free(t);
		free(po);
	}
	CHECK(fs_mkdir_p(out) == 0);
	CHECK(cluster_write_step_trace(out, &c) == 0);
	CHECK(cluster_write_hta(out, &c) == 0);
	struct cluster back;
	CHECK(cluster_load(dir, &back) == 0);
	CHECK(back.n == 2 && back.ranks[0].rank == 1 && back.ranks[1].rank == 5);
	CHECK(back.skipped_rows == 0);
	for (size_t i = 0; i < back.n; i++) {
		const struct cluster_rank *w = &c.ranks[1 - i], *r = &back.ranks[i];
		CHECK(r->dir && strcmp(r->dir, w->dir) == 0);
		CHECK(r->nsteps == w->nsteps);
		for (size_t k = 0; k < r->nsteps && k < w->nsteps; k++)
			CHECK(r->steps[k].step == w->steps[k].step &&
			      memcmp(r->steps[k].v, w->steps[k].v, sizeof r->steps[k].v) == 0);
	}
	cluster_free(&back);
	cluster_free(&c);
	char *nodir = fs_join(dir, "node0");
	CHECK(cluster_load(nodir, &back) == -ENOENT && back.n == 0);
	free(nodir);
	rg_rmrf(dir);
	free(out);
	free(dir);
	/* a step-less row, other rows skipped, a bad header */
	static const char rows[] = "Step,Type,Index,Computing,Communication(Not Overlapped),"
		"Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and "
		"Exclude Receive),Preparing\n"
		",rank,2,1.000,0.000,0.000,0.000,2.000,3.000,0.000,0.000,0.000\n"
		"1,stage,0,1.000,0.000,0.000,0.000,2.000,3.000,0.000,0.000,0.000\n"
		"1,rank,x,1.000,0.000,0.000,0.000,2.000,3.000,0.000,0.000,0.000\n"
		"1,rank,3,1.000\n";
	CHECK(cluster_read_cluster_csv(rows, &back) == 0);
	CHECK(back.skipped_rows == 3);
	CHECK(back.n == 1 && back.ranks[0].rank == 2 && back.ranks[0].nsteps == 1 &&
	      back.ranks[0].steps[0].step == -1 && back.ranks[0].steps[0].v[CLUSTER_STAGE] == 3.0);
	cluster_free(&back);
	CHECK(cluster_read_cluster_csv(HEADER, &back) == -EINVAL && back.n == 0);
	cluster_free(&back);
}

/* findings.json of a cluster, as text ("" when not written). */
static char *cluster_findings(struct cluster *c, const char *dir, struct cluster_slow *s)
{
	CHECK(cluster_slow_analyse(c, s) == 0);
	CHECK(cluster_write_report(dir, c, s, stderr) == 0);
	char *p = fs_join(dir, "findings.json"), *text = NULL;
	size_t len;
	CHECK(p && fs_read_file(p, &text, &len) == 0);
	free(p);
	return text ? text : strdup("");
}

/* The cluster's findings judge the device from device rows only: ranks
 * whose rows are the host's (no device activity: the whole step in Free)
 * have no "device is idle"; the same times on a device do. */
static void test_findings_host_rows(void)
{
	char *dir = rg_tmpdir("test_cluster_findings");
	for (int host = 0; host < 2; host++) {
		struct cluster c = { 0 };
		for (int r = 0; r < 2; r++) {
			add_rank(&c, r, csv_of(host ? -1 : 0, 3, 1000, 0, 9000));
			CHECK(c.ranks[r].nsteps == 3 && c.ranks[r].steps[0].device_row == !host);
		}
		struct cluster_slow s;
		char *text = cluster_findings(&c, dir, &s);
		CHECK((strstr(text, "device_idle") != NULL) == !host);
		free(text);
		cluster_slow_free(&s);
		cluster_free(&c);
	}
	rg_rmrf(dir);
	free(dir);
}

/* The late rank: the others wait for it in communication, so its
 * Communication(Not Overlapped) is the short one; the finding names the
 * rank slow in its own work, else the late one, never a waiting one. */
static void test_late_rank(void)
{
	char *dir = rg_tmpdir("test_cluster_late");
	struct cluster c = { 0 };
	struct cluster_slow s;
	/* four ranks, rank 3 computes 5 ms longer and the others wait for it */
	for (int r = 0; r < 3; r++)
		add_rank(&c, r, csv_for(3, 20000, 6000, 100));
	add_rank(&c, 3, csv_for(3, 25000, 1000, 100));
	char *text = cluster_findings(&c, dir, &s);
	CHECK(s.nlate == 1 && s.late[0].rank == 3 && s.late[0].excess == 5000.0);
	CHECK(s.late[0].value == 1000.0 && s.late[0].median == 6000.0);
	CHECK(s.nslow == 1 && s.slow[0].rank == 3 &&
	      cluster_phase_col[s.slow[0].phase] == CLUSTER_COMPUTING);
	CHECK_CONTAINS(text, "Rank 3 is 5.000 ms a step slower than the median rank in Computing");
	free(text);
	cluster_slow_free(&s);
	cluster_free(&c);
	/* two ranks: the waiting one is slow in Comm, the late one in Free */
	add_rank(&c, 0, csv_for(3, 20000, 16000, 1000));
	add_rank(&c, 1, csv_for(3, 20000, 6000, 9000));
	text = cluster_findings(&c, dir, &s);
	CHECK(s.nlate == 1 && s.late[0].rank == 1);
	CHECK(s.nslow == 2);
	CHECK_CONTAINS(text, "Rank 1 is 4.000 ms a step slower than the median rank in Free");
	CHECK(!strstr(text, "Rank 0"));
	free(text);
	cluster_slow_free(&s);
	cluster_free(&c);
	/* late with nothing slow in its own phases: named as late */
	for (int r = 0; r < 3; r++)
		add_rank(&c, r, csv_for(3, 20000, 6000, 100));
	add_rank(&c, 3, csv_for(3, 20000, 1000, 100));
	text = cluster_findings(&c, dir, &s);
	CHECK(s.nslow == 0 && s.nlate == 1);
	CHECK_CONTAINS(text, "Rank 3 arrives last at the collectives: the others wait 5.000 ms a "
		       "step for it");
	free(text);
	CHECK(cluster_write_slow(dir, &c, &s) == 0);
	char *p = fs_join(dir, "cluster_slow_rank.txt");
	size_t len;
	text = NULL;
	CHECK(p && fs_read_file(p, &text, &len) == 0);
	CHECK_CONTAINS(text, "rank 3 arrives late at the collectives: typical step 1000.000 us in "
		       "Communication(Not Overlapped), median 6000.000 us, 5000.000 us below "
		       "(+83.3%): the others wait for it");
	free(text);
	free(p);
	cluster_slow_free(&s);
	cluster_free(&c);
	rg_rmrf(dir);
	free(dir);
}

int main(void)
{
	test_one_long_step();
	test_read();
	test_slow_free();
	test_no_slow();
	test_ties();
	test_load_back();
	test_findings_host_rows();
	test_late_rank();
	return unit_done();
}

/*
 * Cluster analysis: finding the runs, parsing them in worker processes,
 * reading their step_trace_time.csv, cluster_step_trace_time.csv.
 */
#include "cluster/cluster.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/csv_out.h"
#include "common/fsutil.h"
#include "common/num.h"
#include "outputs/out_file.h"
#include "ingest/parse_info.h"
#include "stats/stats.h"


static const char STEP_HEADER[] =
	"Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,"
	"Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing";
static const char CLUSTER_HEADER[] =
	"Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,Communication,"
	"Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing";

static int is_dir(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

struct runs { char **v; size_t n, cap; int err; };

static void runs_add(struct runs *r, char *p)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 8;
		char **v = realloc(r->v, cap * sizeof *v);
		if (!v) {
			free(p);
			r->err = -ENOMEM;
			return;
		}
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = p;
}

static void find_in(const char *dir, int depth, struct runs *r)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || strcmp(e->d_name, CLUSTER_OUT_DIR) == 0)
			continue;
		char *p = fs_join(dir, e->d_name);
		if (!p) {
			r->err = -ENOMEM;
			break;
		}
		if (!is_dir(p)) {
			free(p);
			continue;
		}
		char *raw = fs_join(p, "raw");
		int run = ends_with(e->d_name, "_prof") && raw && is_dir(raw);
		free(raw);
		if (run) {
			runs_add(r, p);
		} else {
			if (depth > 1)
				find_in(p, depth - 1, r);
			free(p);
		}
	}
	closedir(d);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cluster_find_runs(const char *dir, char ***runs, size_t *n)
{
	struct runs r = { 0 };
	find_in(dir, 3, &r);
	if (r.err) {
		cluster_free_runs(r.v, r.n);
		return r.err;
	}
	if (r.n > 1)  /* none found: r.v is NULL, which qsort must not get */
		qsort(r.v, r.n, sizeof *r.v, cmp_str);
	*runs = r.v;
	*n = r.n;
	return 0;
}

void cluster_free_runs(char **runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(runs[i]);
	free(runs);
}

int cluster_info_rank_of(const struct cJSON *root)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "rank");
	return cJSON_IsNumber(r) && r->valuedouble >= 0 && r->valuedouble <= 0x7fffffff ?
		(int)r->valuedouble : -1;
}

int cluster_info_rank(const char *run_dir)
{
	char *p = fs_join(run_dir, "profiler_info.json"), *text = NULL;
	size_t len;
	int rank = -1;
	if (p && fs_read_file(p, &text, &len) == 0) {
		cJSON *root = cJSON_ParseWithLength(text, len);
		rank = cluster_info_rank_of(root);
		cJSON_Delete(root);
	}
	free(text);
	free(p);
	return rank;
}

/* One CSV line's numeric fields (no quoting: the file holds only numbers);
 * the number of fields, or -1 when one is not a number. */
static int split_nums(const char *line, size_t len, double *out, int max)
{
	int n = 0;
	const char *p = line, *end = line + len;
	while (p <= end && n < max) {
		const char *q = memchr(p, ',', (size_t)(end - p));
		if (!q)
			q = end;
		char buf[64];
		size_t l = (size_t)(q - p);
		if (l == 0 || l >= sizeof buf)
			return -1;
		memcpy(buf, p, l);
		buf[l] = '\0';
		char *e;
		out[n++] = strtod(buf, &e);
		if (*e)
			return -1;
		p = q + 1;
		if (q == end)
			break;
	}
	return n;
}

static int cmp_step(const void *a, const void *b)
{
	int64_t x = ((const struct cluster_step *)a)->step;
	int64_t y = ((const struct cluster_step *)b)->step;
	return (x > y) - (x < y);
}

static int cmp_rank(const void *a, const void *b)
{
	int x = ((const struct cluster_rank *)a)->rank;
	int y = ((const struct cluster_rank *)b)->rank;
	return (x > y) - (x < y);
}

/* A row of step_trace_time.csv and its place in the file. */
struct step_row {
	struct cluster_step s;
	size_t at;
};

/* By step, then file order (qsort is not stable). */
static int cmp_row(const void *a, const void *b)
{
	const struct step_row *x = a, *y = b;
	if (x->s.step != y->s.step)
		return x->s.step < y->s.step ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

/* Of a step's rows, whether `b` replaces `a` (the first of them is kept
 * unless another beats it): a device row beats a host row; among equals,
 * the larger Stage. */
static int row_beats(const struct cluster_step *b, const struct cluster_step *a)
{
	if (b->device_row != a->device_row)
		return b->device_row > a->device_row;
	return b->v[CLUSTER_STAGE] > a->v[CLUSTER_STAGE];
}

/* The file's rows after its header, in *rows: their number, or -ENOMEM. */
static long read_step_rows(const char *p, struct step_row **rows)
{
	size_t n = 0, cap = 0;
	while (*p) {
		p += strspn(p, "\r\n");
		size_t l = strcspn(p, "\r\n");
		if (l == 0)
			break;
		double f[CLUSTER_NCOLS + 2];
		int nf = split_nums(p, l, f, CLUSTER_NCOLS + 2);
		p += l;
		if (nf != CLUSTER_NCOLS + 2)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			struct step_row *v = realloc(*rows, cap * sizeof *v);
			if (!v)
				return -ENOMEM;
			*rows = v;
		}
		struct step_row *w = &(*rows)[n];
		w->s = (struct cluster_step){ .step = num_to_i64(f[1]), .device_row = f[0] >= 0 };
		memcpy(w->s.v, f + 2, sizeof w->s.v);
		w->at = n++;
	}
	return (long)n;
}

int cluster_read_step_csv(const char *text, struct cluster_rank *r)
{
	/* Ascend's columns, then what prof appends (Rank, Pid): ignored here,
	 * as split_nums stops at Ascend's last */
	size_t hl = strcspn(text, "\r\n"), sl = sizeof STEP_HEADER - 1;
	if (hl < sl || memcmp(text, STEP_HEADER, sl) != 0 || (hl > sl && text[sl] != ','))
		return -1;
	struct step_row *rows = NULL;
	long n = read_step_rows(text + hl, &rows);
	if (n > 0)   /* sorted, then one row a step: O(n log n) for a long job */
		qsort(rows, (size_t)n, sizeof *rows, cmp_row);
	if (n > 0 && !(r->steps = malloc((size_t)n * sizeof *r->steps)))
		n = -ENOMEM;
	for (long i = 0; i < n; i++) {
		struct cluster_step *last = r->nsteps ? &r->steps[r->nsteps - 1] : NULL;
		if (!last || last->step != rows[i].s.step)
			r->steps[r->nsteps++] = rows[i].s;
		else if (row_beats(&rows[i].s, last))
			*last = rows[i].s;
	}
	free(rows);
	return n < 0 ? (int)n : 0;
}

int cluster_write_step_trace(const char *out_dir, const struct cluster *c)
{
	struct out_file of;
	int rc = out_file_open(&of, out_dir, "cluster_step_trace_time.csv");
	if (rc)
		return rc;
	struct csv csv;
	csv_init(&csv, of.f);
	csv_header(&csv, CLUSTER_HEADER);
	/* rows by step, then rank */
	size_t *pos = calloc(c->n ? c->n : 1, sizeof *pos);
	if (!pos) {
		out_file_abort(&of);
		return -ENOMEM;
	}
	for (;;) {
		int64_t next = INT64_MAX;
		int any = 0;
		for (size_t i = 0; i < c->n; i++)
			if (pos[i] < c->ranks[i].nsteps && c->ranks[i].steps[pos[i]].step <= next) {
				next = c->ranks[i].steps[pos[i]].step;
				any = 1;
			}
		if (!any)
			break;
		for (size_t i = 0; i < c->n; i++) {
			const struct cluster_rank *r = &c->ranks[i];
			if (pos[i] >= r->nsteps || r->steps[pos[i]].step != next)
				continue;
			const struct cluster_step *s = &r->steps[pos[i]++];
			if (s->step >= 0)
				csv_int(&csv, s->step);
			else
				csv_str(&csv, NULL);
			csv_str(&csv, "rank");
			csv_int(&csv, r->rank);
			for (int k = 0; k < CLUSTER_NCOLS; k++)
				csv_fixed(&csv, s->v[k], 3);
			csv_end_row(&csv);
		}
	}
	free(pos);
	return out_file_commit(&of, csv_finish(&csv));
}

/* The rank of `c` numbered `rank`, added (without steps) when new; NULL
 * when memory ran out. The file goes step by step, rank after rank, so
 * the one after the last found (*next) is tried first: a cluster of a
 * thousand ranks is not searched a thousand times a row. */
static struct cluster_rank *rank_of(struct cluster *c, int rank, size_t *cap, size_t *next)
{
	if (*next < c->n && c->ranks[*next].rank == rank)
		return &c->ranks[(*next)++];
	for (size_t i = 0; i < c->n; i++)
		if (c->ranks[i].rank == rank) {
			*next = i + 1;
			return &c->ranks[i];
		}
	*next = c->n + 1;
	if (c->n == *cap) {
		size_t n = *cap ? *cap * 2 : 8;
		struct cluster_rank *v = realloc(c->ranks, n * sizeof *v);
		if (!v)
			return NULL;
		c->ranks = v;
		*cap = n;
	}
	c->ranks[c->n] = (struct cluster_rank){ .rank = rank };
	return &c->ranks[c->n++];
}

static int rank_add_step(struct cluster_rank *r, const struct cluster_step *s)
{
	/* room for 8, then doubled: full at 8, 16, 32... (none kept apart) */
	if (r->nsteps == 0 || (r->nsteps >= 8 && (r->nsteps & (r->nsteps - 1)) == 0)) {
		size_t cap = r->nsteps ? r->nsteps * 2 : 8;
		struct cluster_step *v = realloc(r->steps, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		r->steps = v;
	}
	r->steps[r->nsteps++] = *s;
	return 0;
}

/* One row of cluster_step_trace_time.csv: "STEP,rank,INDEX,v..." (STEP
 * empty: the run had no step). 1 for a row read, 0 for one that is not
 * a rank's step (edited, cut short). */
static int read_cluster_row(const char *p, size_t l, int *rank, struct cluster_step *s)
{
	const char *comma = memchr(p, ',', l);
	if (!comma || (size_t)(comma - p) + 6 > l || memcmp(comma, ",rank,", 6) != 0)
		return 0;
	double f[CLUSTER_NCOLS + 1];
	const char *rest = comma + 6;
	if (split_nums(rest, l - (size_t)(rest - p), f, CLUSTER_NCOLS + 1) != CLUSTER_NCOLS + 1 ||
	    f[0] < 0 || f[0] > 0x7fffffff)
		return 0;
	char *e;
	s->step = comma == p ? -1 : strtoll(p, &e, 10);
	if (comma != p && e != comma)
		return 0;
	*rank = (int)f[0];
	memcpy(s->v, f + 1, sizeof s->v);
	s->device_row = -1;   /* the file does not say */
	return 1;
}

int cluster_read_cluster_csv(const char *text, struct cluster *c)
{
	size_t hl = strcspn(text, "\r\n"), sl = sizeof CLUSTER_HEADER - 1, cap = 0, next = 0;
	if (hl != sl || memcmp(text, CLUSTER_HEADER, sl) != 0)
		return -EINVAL;
	for (const char *p = text + hl; *p;) {
		p += strspn(p, "\r\n");
		size_t l = strcspn(p, "\r\n");
		struct cluster_step s;
		struct cluster_rank *r;
		int rank;
		if (l && !read_cluster_row(p, l, &rank, &s))
			c->skipped_rows++;
		else if (l && (!(r = rank_of(c, rank, &cap, &next)) || rank_add_step(r, &s)))
			return -ENOMEM;
		p += l;
	}
	for (size_t i = 0; i < c->n; i++)
		if (c->ranks[i].nsteps > 1)
			qsort(c->ranks[i].steps, c->ranks[i].nsteps, sizeof *c->ranks[i].steps,
			      cmp_step);
	if (c->n > 1)
		qsort(c->ranks, c->n, sizeof *c->ranks, cmp_rank);
	return 0;
}

void cluster_free(struct cluster *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->ranks[i].dir);
		free(c->ranks[i].steps);
	}
	free(c->ranks);
	c->ranks = NULL;
	c->n = c->skipped_rows = 0;
}

/* Parses the runs, at most `jobs` worker processes at a time; st[i] gets
 * each run's status. */
static void parse_all(char **runs, size_t n, int jobs, const struct parse_opts *o,
		      cluster_done_fn done, cluster_parse_fn parse, enum parse_status *st)
{
	pid_t *pids = calloc(n ? n : 1, sizeof *pids);
	size_t next = 0, running = 0;
	if (jobs < 1)
		jobs = 1;
	if (!pids) {
		for (size_t i = 0; i < n; i++)
			st[i] = PARSE_FAILED;
		return;
	}
	fflush(NULL);
	while (next < n || running) {
		while (next < n && running < (size_t)jobs) {
			pid_t pid = fork();
			if (pid == 0) {
				struct parse_report r;
				enum parse_status s = parse(runs[next], o, &r);
				if (done && s != PARSE_FAILED)
					done(runs[next], s, &r);
				fflush(NULL);
				_exit((int)s);
			}
			if (pid < 0) {
				fprintf(o->log, "prof parse: %s: fork: %s\n", runs[next],
					strerror(errno));
				st[next++] = PARSE_FAILED;
				continue;
			}
			pids[next++] = pid;
			running++;
		}
		if (!running)
			break;
		int ws;
		pid_t w = waitpid(-1, &ws, 0);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (size_t i = 0; i < next; i++)
			if (pids[i] == w) {
				pids[i] = 0;
				running--;
				st[i] = WIFEXITED(ws) && (WEXITSTATUS(ws) == PARSE_OK ||
							  WEXITSTATUS(ws) == PARSE_DAMAGED)
					? (enum parse_status)WEXITSTATUS(ws) : PARSE_FAILED;
				if (!WIFEXITED(ws))
					fprintf(o->log, "prof parse: %s: the parse worker died "
						"(signal %d)\n", runs[i], WTERMSIG(ws));
			}
	}
	free(pids);
}

/* The runs' step tables, ranks assigned: profiler_info.json's, else the
 * smallest ranks no run claims, in directory order. A rank claimed twice
 * keeps the later directory (by name) and the other run is left out. */
static int gather(char **runs, size_t n, const enum parse_status *st,
		  const struct parse_opts *o, struct cluster *c)
{
	c->ranks = calloc(n ? n : 1, sizeof *c->ranks);
	if (!c->ranks)
		return -ENOMEM;
	int *rank = malloc((n ? n : 1) * sizeof *rank);
	if (!rank)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		rank[i] = st[i] == PARSE_FAILED ? -2 : cluster_info_rank(runs[i]);
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n; k++)
			if (rank[i] >= 0 && rank[k] == rank[i]) {
				fprintf(o->log, "prof parse: %s and %s both are rank %d; "
					"keeping %s\n", runs[i], runs[k], rank[i], runs[k]);
				rank[i] = -2;
			}
	int cand = 0;
	for (size_t i = 0; i < n; i++) {
		if (rank[i] != -1)
			continue;
		for (;;) {
			size_t k;
			for (k = 0; k < n && rank[k] != cand; k++)
				;
			if (k == n)
				break;
			cand++;
		}
		rank[i] = cand;
		fprintf(o->log, "prof parse: %s: no rank in profiler_info.json; taken as "
			"rank %d (directory order)\n", runs[i], cand);
	}
	for (size_t i = 0; i < n; i++) {
		if (rank[i] < 0)
			continue;
		char *p = fs_join(runs[i], "PROFILER_OUTPUT/step_trace_time.csv"), *text = NULL;
		size_t len;
		struct cluster_rank *r = &c->ranks[c->n];
		r->rank = rank[i];
		r->dir = strdup(runs[i]);
		if (!p || !r->dir || fs_read_file(p, &text, &len) != 0 ||
		    cluster_read_step_csv(text, r) != 0)
			fprintf(o->log, "prof parse: %s: no readable step_trace_time.csv; "
				"rank %d has no steps\n", runs[i], rank[i]);
		free(text);
		free(p);
		c->n++;
	}
	free(rank);
	qsort(c->ranks, c->n, sizeof *c->ranks, cmp_rank);
	return 0;
}

/* The slow and late ranks, a line each (cluster_slow_rank.txt has more). */
static void say_verdicts(FILE *rep, const struct cluster_slow *s)
{
	for (size_t i = 0; i < s->nslow; i++) {
		const struct cluster_verdict *v = &s->slow[i];
		fprintf(rep, "prof parse: slow rank %d: %s %.3f us above the median", v->rank,
			cluster_phase_name[v->phase], v->excess);
		if (v->pct >= 0)
			fprintf(rep, " (+%.1f%%)", v->pct);
		fprintf(rep, "%s\n", v->phase == CLUSTER_PHASE_COMM ?
			": waiting, for a late rank or on a slower link" : "");
	}
	for (size_t i = 0; i < s->nlate; i++)
		fprintf(rep, "prof parse: late rank %d: %s %.3f us below the median: it arrives "
			"last at the collectives, the others wait for it\n", s->late[i].rank,
			cluster_phase_name[s->late[i].phase], s->late[i].excess);
	if (!s->nslow && !s->nlate)
		fprintf(rep, "prof parse: no slow rank\n");
}

/* Runs whose profiler_info.json has no end_info, said in one line for the
 * whole cluster rather than once a run: a line for those still going, one
 * for those killed, one for those that cannot be told (rundir_live). */
static void say_unfinished(char **runs, size_t nruns, FILE *log)
{
	static const int live_of[3] = { 1, 0, -1 };
	size_t n[3] = { 0 }, first[3] = { 0 };
	for (size_t i = 0; i < nruns; i++) {
		struct parse_info pi;
		parse_info_read(runs[i], &pi, log, 1);
		int k = pi.live == 1 ? 0 : pi.live == 0 ? 1 : 2;
		if (pi.present && !pi.have_end && !n[k]++)
			first[k] = i;
		parse_info_free(&pi);
	}
	for (int k = 0; k < 3; k++) {
		if (n[k] == 1) {
			parse_info_say_no_end(log, runs[first[k]], live_of[k]);
		} else if (n[k] > 1) {
			char what[64];
			snprintf(what, sizeof what, "%zu of %zu runs", n[k], nruns);
			parse_info_say_no_end(log, what, live_of[k]);
		}
	}
}

/* Every run parsed on its own, side by side; their worst status, and in
 * *ok how many could be parsed. */
static enum parse_status parse_runs(char **runs, size_t nruns, int jobs,
				    const struct parse_opts *o, cluster_done_fn done,
				    cluster_parse_fn parse, enum parse_status *st, size_t *ok)
{
	parse_all(runs, nruns, jobs, o, done, parse, st);
	enum parse_status res = PARSE_OK;
	*ok = 0;
	for (size_t i = 0; i < nruns; i++) {
		if (st[i] != PARSE_FAILED)
			(*ok)++;
		if (st[i] != PARSE_OK)
			res = PARSE_DAMAGED;
	}
	return res;
}

/* Runs made one after another (cluster_runs_apart): each parsed, none
 * compared with the others as a rank. */
static enum parse_status parse_apart(const char *dir, char **runs, size_t nruns, int jobs,
				     const struct parse_opts *o, cluster_done_fn done)
{
	fprintf(o->log, "prof parse: %s holds %zu runs made one after another, none naming a "
		"rank: each is parsed on its own, and not compared as the ranks of one job "
		"(`prof diff RUN_A RUN_B` compares two runs)\n", dir, nruns);
	enum parse_status *st = calloc(nruns, sizeof *st);
	if (!st)
		return PARSE_FAILED;
	size_t ok;
	enum parse_status res = parse_runs(runs, nruns, jobs, o, done, parse_run_dir, st, &ok);
	free(st);
	if (!ok)
		fprintf(o->log, "prof parse: %s: no run could be parsed\n", dir);
	return ok ? res : PARSE_FAILED;
}

enum parse_status cluster_parse(const char *dir, char **runs, size_t nruns, int jobs,
				const struct parse_opts *o, cluster_done_fn done)
{
	say_unfinished(runs, nruns, o->log);
	struct parse_opts co = *o;
	co.end_info_said = 1;
	if (cluster_runs_apart(runs, nruns))
		return parse_apart(dir, runs, nruns, jobs, &co, done);
	return cluster_parse_with(dir, runs, nruns, jobs, &co, done, parse_run_dir);
}

enum parse_status cluster_parse_with(const char *dir, char **runs, size_t nruns, int jobs,
				     const struct parse_opts *o, cluster_done_fn done,
				     cluster_parse_fn parse)
{
	enum parse_status *st = calloc(nruns ? nruns : 1, sizeof *st);
	if (!st)
		return PARSE_FAILED;
	size_t ok;
	enum parse_status res = parse_runs(runs, nruns, jobs, o, done, parse, st, &ok);
	struct cluster c = { 0 };
	struct cluster_slow s = { 0 };
	char *out = fs_join(dir, CLUSTER_OUT_DIR);
	int rc = -ENOMEM;
	if (ok && out && gather(runs, nruns, st, o, &c) == 0 &&
	    (rc = fs_mkdir_p(out)) == 0 &&
	    (rc = cluster_write_step_trace(out, &c)) == 0 &&
	    (rc = cluster_write_matrix(out, &c, o->log)) == 0 &&
	    (rc = cluster_write_hta(out, &c)) == 0 &&
	    (rc = cluster_slow_analyse(&c, &s)) == 0)
		rc = cluster_write_slow(out, &c, &s);
	if (!rc && out) {   /* a page that could not be written is said; the analysis stands */
		static const char *const earlier[] = { "report.html", STATS_FINDINGS_FILE };
		for (size_t i = 0; i < 2; i++) {
			char *page = fs_join(out, earlier[i]);
			if (page)
				unlink(page);
			free(page);
		}
		if (!o->no_report)
			cluster_write_report(out, &c, &s, o->log);
	}
	if (!ok) {
		fprintf(o->log, "prof parse: %s: no run could be parsed\n", dir);
		res = PARSE_FAILED;
	} else if (rc) {
		fprintf(o->log, "prof parse: %s: %s\n", out ? out : dir, strerror(-rc));
		res = PARSE_FAILED;
	} else if (!o->quiet) {
		FILE *rep = o->report ? o->report : o->log;
		fprintf(rep, "prof parse: %s: %zu ranks (%zu runs) -> %s\n", dir, c.n, nruns, out);
		say_verdicts(rep, &s);
	}
	cluster_slow_free(&s);
	cluster_free(&c);
	free(out);
	free(st);
	return res;
}

/*
 * Parsing a synthetic run directory and looking into what came out: the
 * helpers the parse tests share. Header-only: each test is its own program.
 */
#ifndef PROF_TEST_PARSED_H
#define PROF_TEST_PARSED_H

#include "unit/rawgen.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>

#include "pipeline/parse.h"
#include "unit/unit.h"

#define SEC 1000000000ull

static uint64_t B;   /* ts 0: the run's start pair */
static uint64_t T;   /* where the synthetic events begin: B + 10 s */

struct parsed {
	enum parse_status st;
	struct parse_report r;
	char *log;
	char *trace_text;
	cJSON *trace;
	char *steps_csv;
	char *host_csv;
	char *details_csv;   /* operator_details.csv */
	char *opstat_csv;    /* op_statistic.csv */
	char *kernel_csv;    /* kernel_details.csv */
	char *api_csv;       /* api_statistic.csv */
	char *memrec_csv;    /* memory_record.csv */
	char *memop_csv;     /* operator_memory.csv */
	char *devuse_csv;    /* device_usage.csv */
	char *comm_json;     /* communication.json */
	char *matrix_json;   /* communication_matrix.json */
	cJSON *meta;
	int done;
};

static inline char *out_path(const char *run, const char *name)
{
	char *o = rg_path(run, "PROFILER_OUTPUT");
	char *p = rg_path(o, name);
	free(o);
	return p;
}

static inline char *read_out(const char *run, const char *name)
{
	char *p = out_path(run, name);
	char *t = rg_read(p);
	free(p);
	return t;
}

/* Parses with --step-list steps[0..n) (n 0: every step). */
static inline void parse_steps(const char *run, const uint64_t *steps, size_t n, struct parsed *p)
{
	size_t len;
	memset(p, 0, sizeof *p);
	FILE *log = open_memstream(&p->log, &len);
	struct parse_opts o = { .log = log, .verbose = 0, .steps = n ? steps : NULL, .nsteps = n };
	p->st = parse_run_dir(run, &o, &p->r);
	fclose(log);
	p->trace_text = read_out(run, "trace_view.json");
	p->trace = p->trace_text ? cJSON_Parse(p->trace_text) : NULL;
	p->steps_csv = read_out(run, "step_trace_time.csv");
	p->host_csv = read_out(run, "host_usage.csv");
	p->details_csv = read_out(run, "operator_details.csv");
	p->opstat_csv = read_out(run, "op_statistic.csv");
	p->kernel_csv = read_out(run, "kernel_details.csv");
	p->api_csv = read_out(run, "api_statistic.csv");
	p->memrec_csv = read_out(run, "memory_record.csv");
	p->memop_csv = read_out(run, "operator_memory.csv");
	p->devuse_csv = read_out(run, "device_usage.csv");
	p->comm_json = read_out(run, "communication.json");
	p->matrix_json = read_out(run, "communication_matrix.json");
	char *m = rg_path(run, "profiler_metadata.json");
	char *mt = rg_read(m);
	p->meta = mt ? cJSON_Parse(mt) : NULL;
	free(mt);
	free(m);
	char *d = out_path(run, "parse.done");
	p->done = access(d, F_OK) == 0;
	free(d);
}

static inline void parse(const char *run, struct parsed *p)
{
	parse_steps(run, NULL, 0, p);
}

static inline void parsed_free(struct parsed *p)
{
	free(p->log);
	free(p->trace_text);
	cJSON_Delete(p->trace);
	free(p->steps_csv);
	free(p->host_csv);
	free(p->details_csv);
	free(p->opstat_csv);
	free(p->kernel_csv);
	free(p->api_csv);
	free(p->memrec_csv);
	free(p->memop_csv);
	free(p->devuse_csv);
	free(p->comm_json);
	free(p->matrix_json);
	cJSON_Delete(p->meta);
}

/* ---- looking into trace_view.json ---- */

static inline const char *s_of(const cJSON *e, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, k);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static inline double n_of(const cJSON *e, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, k);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static inline int64_t ns_of(const cJSON *e, const char *k)
{
	return (int64_t)llround(n_of(e, k) * 1000.0);
}

/* The n-th event (0-based) with this ph and name; NULL if none. */
static inline const cJSON *find(const cJSON *trace, const char *ph, const char *name, int n)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(trace, "traceEvents"))
		if ((!ph || strcmp(s_of(e, "ph"), ph) == 0) &&
		    (!name || strcmp(s_of(e, "name"), name) == 0) && n-- == 0)
			return e;
	return NULL;
}

static inline int count(const cJSON *trace, const char *ph, const char *name)
{
	int n = 0;
	while (find(trace, ph, name, n))
		n++;
	return n;
}

/* The args.name of a metadata event for (pid, tid). */
static inline const char *meta_name(const cJSON *trace, const char *what, int pid, int tid)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(trace, "traceEvents"))
		if (strcmp(s_of(e, "ph"), "M") == 0 && strcmp(s_of(e, "name"), what) == 0 &&
		    n_of(e, "pid") == pid && (tid < 0 || n_of(e, "tid") == tid))
			return s_of(cJSON_GetObjectItemCaseSensitive(e, "args"), "name");
	return NULL;
}

/* Every two X events of a thread are disjoint or nested. */
static inline int nests(const cJSON *trace)
{
	const cJSON *a, *b, *evs = cJSON_GetObjectItemCaseSensitive(trace, "traceEvents");
	cJSON_ArrayForEach(a, evs) {
		if (strcmp(s_of(a, "ph"), "X"))
			continue;
		int64_t as = ns_of(a, "ts"), ae = as + ns_of(a, "dur");
		cJSON_ArrayForEach(b, evs) {
			if (a == b || strcmp(s_of(b, "ph"), "X") || n_of(a, "pid") != n_of(b, "pid") ||
			    n_of(a, "tid") != n_of(b, "tid"))
				continue;
			int64_t bs = ns_of(b, "ts"), be = bs + ns_of(b, "dur");
			int disjoint = ae <= bs || be <= as;
			int nested = (as <= bs && be <= ae) || (bs <= as && ae <= be);
			if (!disjoint && !nested) {
				fprintf(stderr, "overlap: %s and %s\n", s_of(a, "name"), s_of(b, "name"));
				return 0;
			}
		}
	}
	return 1;
}

static inline int64_t rel(uint64_t off) { return (int64_t)(T - B + off); }

/* The least profiler_info.json a parse needs: the start pair at B. */
static inline void write_min_info(const char *run)
{
	char *info = rg_path(run, "profiler_info.json");
	char text[256];
	snprintf(text, sizeof text, "{\"clock\": {\"start\": {\"mono_ns\": %" PRIu64
		 ", \"real_ns\": 1700000000000000000}}}\n", B);
	rg_write(info, text);
	free(info);
}

#endif

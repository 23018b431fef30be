/*
 * The parse of what the seeds' keys record (issue 19 §3).
 * host_sys: samples that hold only some parts (their counters only, the
 * other host_usage.csv columns empty), network records (a counter per
 * interface, host_network_usage.csv), the disk summary
 * (host_disk_usage.csv), and runs without either (no such files, and
 * those of an earlier parse removed); the rates' quantiles.
 * gc_detect: collections paired into "GC" ranges and gc_record.csv rows,
 * one cut by the stream's end, a start without its stop.
 * mstx domains: marks, ranges and cross-thread ranges of a named domain
 * say it in their args; the default domain's do not.
 */
#include "unit/parsed.h"

#include "outputs/out_rate.h"
#include "raw/raw_clock.h"

#define MB (1ull << 20)

static void host_part(struct raw_writer *w, uint64_t ts, uint32_t parts, uint64_t read_bytes)
{
	struct raw_host_sample h = { .processes = 1, .threads = 3, .proc_rss_bytes = 64 * MB,
				     .proc_read_bytes = read_bytes, .sys_mem_used_bytes = 512 * MB,
				     .sys_mem_avail_bytes = 1024 * MB, .parts = parts };
	raw_writer_emit(w, RAW_REC_HOST_SAMPLE, ts, &h, sizeof h);
}

static void host_net(struct raw_writer *w, uint64_t ts, const char *name, uint32_t mbps,
		     uint64_t interval, uint64_t rx, uint64_t tx)
{
	struct raw_host_net n = { raw_writer_intern(w, name, ts), mbps, interval, rx, rx / 1000,
				  tx, tx / 1000 };
	raw_writer_emit(w, RAW_REC_HOST_NET, ts, &n, sizeof n);
}

/* A fresh run directory with the stream of thread 100 open in *w; its
 * directory in *dir (malloc'd). */
static char *new_run(const char *name, struct raw_writer *w, char **dir)
{
	char *run = rg_tmpdir(name);
	write_min_info(run);
	*dir = rg_path(run, "raw/100.0");
	CHECK(rg_open(w, *dir, "t100.raw", 100, 100, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "python") == 0);
	return run;
}

static char *make_run(const char *name, int with_sums)
{
	struct raw_writer w;
	char *d, *run = new_run(name, &w, &d);
	rg_mark(&w, T, "hello");
	raw_writer_close(&w);
	free(d);
	d = rg_path(run, "raw/launcher");
	CHECK(rg_open(&w, d, "host.raw", 50, 51, RAW_STREAM_HOST, RAW_CLOCK_MONOTONIC,
		      "host sampler") == 0);
	uint32_t parts = RAW_HOST_MEM | (with_sums ? RAW_HOST_DISK : 0);
	host_part(&w, T, parts, 0);
	if (with_sums)
		host_net(&w, T, "eth0", 1000, 0, 0, 0);
	host_part(&w, T + SEC / 2, parts, 2 * MB);       /* 4096 KB/s */
	if (with_sums) {
		host_net(&w, T + SEC / 2, "eth0", 1000, SEC / 2, 1 * MB, 3 * MB);
		host_net(&w, T + SEC / 2, "lo", 0, SEC / 2, 8 * MB, 8 * MB);
	}
	host_part(&w, T + SEC, parts, 1 * MB);           /* 2048 KB/s */
	raw_writer_close(&w);
	free(d);
	return run;
}

static void check_parts(const struct parsed *p)
{
	CHECK(count(p->trace, "C", "CPU Usage") == 0);
	CHECK(count(p->trace, "C", "Memory Usage") == 3);
	CHECK(count(p->trace, "C", "Disk Usage") == 3);
	CHECK_CONTAINS(p->host_csv, "\n10000000.000,,,64.000,1,3,0.000,0.000,,,,512.000,1024.000\n");
	CHECK_CONTAINS(p->host_csv,
		       "\n10500000.000,,,64.000,1,3,2048.000,0.000,4096.000,0.000,,512.000,1024.000\n");
	const cJSON *eth = find(p->trace, "C", "Network Usage: eth0", 1);
	const cJSON *args = eth ? cJSON_GetObjectItemCaseSensitive(eth, "args") : NULL;
	CHECK(args && n_of(args, "rx KB/s") == 2048.0 && n_of(args, "tx KB/s") == 6144.0);
	/* 1 ns after its sample: a stream's times strictly increase */
	CHECK(eth && n_of(eth, "pid") == 50 && ns_of(eth, "ts") == rel(SEC / 2) + 1);
	CHECK(count(p->trace, "C", "Network Usage: lo") == 1);
}

static void check_sums(const char *run)
{
	char *disk = read_out(run, "host_disk_usage.csv");
	CHECK_STR(disk, "Device_id,Peak Disk Read(KB/s),Recommend Disk Read(KB/s),"
		  "Peak Disk Write(KB/s),Recommend Disk Write(KB/s)\n"
		  "host,4096.000,5120.000,0.000,0.000\n");
	char *net = read_out(run, "host_network_usage.csv");
	CHECK_STR(net, "Device_id,Netcard Speed(KB/s),Peak Used Speed(KB/s),Recommend Speed(KB/s),"
		  "Interface,Rx Bytes,Rx Packets,Tx Bytes,Tx Packets\n"
		  "host,122070.312,8192.000,10240.000,eth0,1048576,1048,3145728,3145\n"
		  "host,,32768.000,40960.000,lo,8388608,8388,8388608,8388\n");
	free(disk);
	free(net);
}

static void test_host_sys(void)
{
	char *run = make_run("host-sys", 1);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK);
	check_parts(&p);
	check_sums(run);
	parsed_free(&p);
	rg_rmrf(run);
	free(run);
}

/* Without disk and network samples, no summaries, not even an earlier
 * parse's. */
static void test_no_sums(void)
{
	char *run = make_run("host-sys-none", 0);
	struct parsed p;
	char *stale = out_path(run, "host_network_usage.csv");
	char *o = rg_path(run, "PROFILER_OUTPUT");
	fs_mkdir_p(o);
	rg_write(stale, "old\n");
	parse(run, &p);
	CHECK(p.st == PARSE_OK);
	CHECK(count(p.trace, "C", "Disk Usage") == 0);
	CHECK(count(p.trace, "C", "Memory Usage") == 3);
	CHECK(access(stale, F_OK) != 0);
	char *disk = out_path(run, "host_disk_usage.csv");
	CHECK(access(disk, F_OK) != 0);
	free(disk);
	free(stale);
	free(o);
	parsed_free(&p);
	rg_rmrf(run);
	free(run);
}

static void test_rate_quantile(void)
{
	struct out_rate r = { 0 };
	CHECK(out_rate_quantile(&r, 0.98) == 0);
	for (int i = 1; i <= 100; i++)
		CHECK(out_rate_add(&r, i) == 0);
	out_rate_add(&r, 0);                  /* counts for nothing but the peak */
	CHECK(r.peak == 100 && r.n == 100);
	double q = out_rate_quantile(&r, 0.98);   /* the 98th of 100: 98, within 1/32 */
	CHECK(q >= 98 && q <= 98 * (1 + 1.0 / 32));
	CHECK(out_rate_quantile(&r, 1.0) == 100);
	double lo = out_rate_quantile(&r, 0.01);
	CHECK(lo >= 1 && lo <= 1 + 1.0 / 32);
	out_rate_add(&r, 1e30);                   /* past the last bin: still counted */
	CHECK(out_rate_quantile(&r, 1.0) == 1e30);
	out_rate_free(&r);
}

static void gc(struct raw_writer *w, uint64_t ts, uint32_t phase, uint32_t gen, uint64_t found)
{
	struct raw_gc g = { phase, gen, found, found / 10 };
	raw_writer_emit(w, RAW_REC_GC, ts, &g, sizeof g);
}

static char *make_gc_run(const char *name)
{
	struct raw_writer w;
	char *d, *run = new_run(name, &w, &d);
	rg_push(&w, T, "train");
	gc(&w, T + 100, RAW_GC_START, 0, 0);
	gc(&w, T + 150, RAW_GC_STOP, 0, 120);
	gc(&w, T + 200, RAW_GC_STOP, 0, 5);          /* no start: ignored */
	gc(&w, T + 300, RAW_GC_START, 1, 0);         /* its stop never came ... */
	gc(&w, T + 400, RAW_GC_START, 2, 0);         /* ... it ends here */
	gc(&w, T + 700, RAW_GC_STOP, 2, 30);
	rg_pop(&w, T + 800);
	raw_writer_close(&w);
	CHECK(rg_open(&w, d, "t101.raw", 100, 101, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "worker") == 0);
	gc(&w, T + 500, RAW_GC_START, 0, 0);
	rg_mark(&w, T + 600, "last");
	raw_writer_abandon(&w);                      /* killed while collecting */
	free(d);
	return run;
}

static void test_gc(void)
{
	char *run = make_gc_run("gc-detect");
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK);
	CHECK(count(p.trace, "X", "GC") == 4);
	const cJSON *g = find(p.trace, "X", "GC", 0);
	const cJSON *a = g ? cJSON_GetObjectItemCaseSensitive(g, "args") : NULL;
	CHECK(g && strcmp(s_of(g, "cat"), "GC") == 0 && n_of(g, "tid") == 100);
	CHECK(g && ns_of(g, "ts") == rel(100) && ns_of(g, "dur") == 50);
	CHECK(a && n_of(a, "generation") == 0 && n_of(a, "collected") == 120 &&
	      n_of(a, "uncollectable") == 12);
	CHECK(nests(p.trace));
	char *csv = read_out(run, "gc_record.csv");
	char want[512];
	snprintf(want, sizeof want,
		 "Process ID,Thread ID,Start Time(us),Duration(us),Generation,Collected,"
		 "Uncollectable\n"
		 "100,100,%" PRId64 ".100,0.050,0,120,12\n"
		 "100,100,%" PRId64 ".300,0.100,1,0,0\n"
		 "100,101,%" PRId64 ".500,0.100,0,0,0\n"
		 "100,100,%" PRId64 ".400,0.300,2,30,3\n",
		 rel(0) / 1000, rel(0) / 1000, rel(0) / 1000, rel(0) / 1000);
	CHECK_STR(csv, want);
	const cJSON *cut = find(p.trace, "X", "GC", 2);   /* rows and events: as they end */
	a = cut ? cJSON_GetObjectItemCaseSensitive(cut, "args") : NULL;
	CHECK(a && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "unfinished")));
	free(csv);
	parsed_free(&p);
	rg_rmrf(run);
	free(run);
}

/* A run without collections leaves no gc_record.csv, not even an
 * earlier parse's. */
static void test_no_gc(void)
{
	char *run = make_run("gc-none", 0);
	char *o = rg_path(run, "PROFILER_OUTPUT");
	char *stale = out_path(run, "gc_record.csv");
	fs_mkdir_p(o);
	rg_write(stale, "old\n");
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK);
	CHECK(access(stale, F_OK) != 0);
	CHECK(count(p.trace, "X", "GC") == 0);
	free(stale);
	free(o);
	parsed_free(&p);
	rg_rmrf(run);
	free(run);
}

static void domain_records(struct raw_writer *w, uint64_t ts, const char *dom)
{
	uint32_t d = dom ? raw_writer_intern(w, dom, ts) : 0;
	struct raw_range_push p = { raw_writer_intern(w, "r", ts), d };
	raw_writer_emit(w, RAW_REC_RANGE_PUSH, ts, &p, sizeof p);
	struct raw_mark m = { raw_writer_intern(w, "m", ts), d };
	raw_writer_emit(w, RAW_REC_MARK, ts + 1, &m, sizeof m);
	rg_pop(w, ts + 2);
	struct raw_range_start s = { ts, raw_writer_intern(w, "x", ts), d };
	raw_writer_emit(w, RAW_REC_RANGE_START, ts + 3, &s, sizeof s);
	rg_end(w, ts + 4, ts);
}

static const char *domain_arg(const cJSON *e)
{
	const cJSON *a = e ? cJSON_GetObjectItemCaseSensitive(e, "args") : NULL;
	const cJSON *d = a ? cJSON_GetObjectItemCaseSensitive(a, "domain") : NULL;
	return cJSON_IsString(d) ? d->valuestring : NULL;
}

static void test_domains(void)
{
	struct raw_writer w;
	char *d, *run = new_run("mstx-domains", &w, &d);
	domain_records(&w, T + 100, "comm \"x\"");
	domain_records(&w, T + 200, NULL);
	struct raw_range_push open = { raw_writer_intern(&w, "open", T), raw_writer_intern(&w, "b", T) };
	raw_writer_emit(&w, RAW_REC_RANGE_PUSH, T + 300, &open, sizeof open);   /* unfinished */
	raw_writer_close(&w);
	free(d);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK);
	CHECK_STR(domain_arg(find(p.trace, "X", "r", 0)), "comm \"x\"");
	CHECK_STR(domain_arg(find(p.trace, "i", "m", 0)), "comm \"x\"");
	CHECK_STR(domain_arg(find(p.trace, "b", "x", 0)), "comm \"x\"");
	CHECK(domain_arg(find(p.trace, "e", "x", 0)) == NULL);
	const cJSON *r = find(p.trace, "X", "r", 0);
	CHECK(r && ns_of(r, "ts") == rel(100) && ns_of(r, "dur") == 2);
	CHECK(find(p.trace, "X", "r", 1) && !cJSON_GetObjectItemCaseSensitive(
		      find(p.trace, "X", "r", 1), "args"));
	CHECK(find(p.trace, "i", "m", 1) && domain_arg(find(p.trace, "i", "m", 1)) == NULL);
	CHECK(find(p.trace, "b", "x", 1) && domain_arg(find(p.trace, "b", "x", 1)) == NULL);
	const cJSON *o = find(p.trace, "X", "open", 0);
	const cJSON *oa = o ? cJSON_GetObjectItemCaseSensitive(o, "args") : NULL;
	CHECK_STR(domain_arg(o), "b");
	CHECK(oa && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(oa, "unfinished")));
	parsed_free(&p);
	rg_rmrf(run);
	free(run);
}

int main(void)
{
	B = raw_clock_ns(CLOCK_MONOTONIC);
	T = B + 10 * SEC;
	test_host_sys();
	test_no_sums();
	test_rate_quantile();
	test_gc();
	test_no_gc();
	test_domains();
	return unit_done();
}

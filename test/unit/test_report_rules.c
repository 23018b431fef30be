/* report.html's findings: each rule of report_rules.c fires on facts just
 * above its threshold and not at it, and says nothing when its facts are
 * not known. memory_capacity's facts: memory_record.csv against the
 * capacities the parse hands over, NVML's samples first. The SVG writer
 * keeps a long series to REPORT_MAX_POINTS. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "outputs/out_file.h"
#include "report/report.h"
#include "unit.h"

/* The ids of the rules that fire on f, space-separated. */
static const char *fired(const struct report_facts *f)
{
	static char out[256];
	struct report_finding found[16];
	size_t n = report_findings(f, found, 16);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(out, " ");
		strcat(out, found[i].rule->id);
	}
	return out;
}

static const struct report_rule *rule(const char *id)
{
	for (size_t i = 0; i < report_nrules; i++)
		if (!strcmp(report_rules[i].id, id))
			return &report_rules[i];
	return NULL;
}

/* Facts of a run where every rule is known and quiet. */
static void quiet(struct report_facts *f)
{
	report_facts_init(f);
	f->step_us = f->device_us = 1000;
	f->data_us = f->free_us = f->comm_exposed_us = f->gc_us = 0;
	f->gc_count = 0;
	f->mem_peak_mb = 10;
	f->mem_total_mb = 100;
	f->ops_in_us = 100;
	f->ops_out_us = 0;
}

/* Just above and exactly at each threshold: part/whole in % of 1000. */
static void thresholds(void)
{
	static const char *const ids[] = { "data_loading", "device_idle", "communication",
					   "gc_pauses", "memory_capacity", "outside_steps",
					   "slow_rank" };
	for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
		const struct report_rule *r = rule(ids[k]);
		CHECK(r != NULL);
		if (!r)
			continue;
		for (int above = 0; above <= 1; above++) {
			struct report_facts f;
			quiet(&f);
			double pct = r->threshold + (above ? 0.5 : 0);
			switch (k) {
			case 0: f.data_us = pct * 10; break;
			case 1: f.free_us = pct * 10; break;
			case 2: f.comm_exposed_us = pct * 10; break;
			case 3: f.gc_us = pct * 10; break;
			case 4: f.mem_peak_mb = pct; break;
			case 5: f.ops_in_us = 100 - pct; f.ops_out_us = pct; break;
			case 6: f.slow_pct = pct; f.slow_rank = 2; f.slow_phase = "Free"; break;
			}
			CHECK_STR(fired(&f), above ? ids[k] : "");
		}
	}
}

static void numbers_and_unknowns(void)
{
	struct report_facts f;
	report_facts_init(&f);
	CHECK_STR(fired(&f), "");                 /* nothing known: nothing said */
	f.data_us = 500;                          /* no step time: no share */
	f.free_us = 900;
	CHECK_STR(fired(&f), "");
	quiet(&f);
	f.data_us = 250;
	f.slow_pct = 42;
	f.slow_rank = 3;
	f.slow_phase = "Communication";
	struct report_finding found[4];
	CHECK(report_findings(&f, found, 4) == 2);
	CHECK_STR(found[0].text, "Data loading takes 25.0% of the step time");
	CHECK(fabs(found[0].value - 25) < 1e-9);
	CHECK_STR(found[1].text, "Rank 3 is 42.0% slower than the median rank in Communication");
	f.slow_excess_us = 1500;                  /* the time first when it is known */
	CHECK(report_findings(&f, found, 4) == 2);
	CHECK_STR(found[1].text, "Rank 3 is 1.500 ms a step slower than the median rank in "
		  "Communication (+42.0% of the median step)");
	CHECK(report_findings(&f, found, 1) == 1);
	char line[320], tiny[12];
	report_finding_line(&found[0], line, sizeof line);
	CHECK_STR(line, "Data loading takes 25.0% of the step time; try more DataLoader workers "
		  "(num_workers), pin_memory=True, a larger prefetch_factor");
	report_finding_line(&found[0], tiny, sizeof tiny);   /* cut short, still a string */
	CHECK_STR(tiny, "Data loadin");
	/* every rule has its advice */
	for (size_t i = 0; i < report_nrules; i++)
		CHECK(report_rules[i].advice && report_rules[i].advice[0]);
}

static void long_series(void)
{
	enum { N = 100000 };
	double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
	for (size_t i = 0; i < N; i++) {
		x[i] = (double)i;
		y[i] = i == 77777 ? 1000 : 1;       /* one peak, kept */
	}
	struct strbuf sb = STRBUF_INIT;
	struct report_series s[] = { { "v", "#000", y } };
	report_svg_lines(&sb, "t", "s", "u", x, N, s, 1);
	size_t pairs = 0;
	for (const char *p = strstr(sb.buf, "points=\""); p && *p != '/'; p++)
		pairs += *p == ',';
	CHECK(pairs == REPORT_MAX_POINTS);
	CHECK_CONTAINS(sb.buf, ",30.0 ");          /* the peak reaches the top */
	CHECK(strstr(sb.buf, "http") == NULL);
	sb_free(&sb);
	free(x);
	free(y);
}

static void write_csv(const char *dir, const char *name, const char *text)
{
	CHECK(out_file_write(dir, name, text, strlen(text)) == 0);
}

/* dir's report.html, written anew; NULL when it cannot be. */
static char *page(const char *dir, const struct report_device *devs, size_t n)
{
	char *path = fs_join(dir, "report.html"), *html = NULL;
	size_t len;
	if (report_write_run(dir, dir, devs, n, stderr, NULL, 0, NULL) != 0 || !path ||
	    fs_read_file(path, &html, &len) != 0)
		html = NULL;
	free(path);
	return html;
}

static void memory_capacity_sources(void)
{
	char dir[256];
	snprintf(dir, sizeof dir, "%s/report-mem-XXXXXX", unit_tmp_dir());
	CHECK(mkdtemp(dir) != NULL);
	/* CUDA:0's own allocations peak at 95 of 100 MB; torch's PTA rows on
	 * the same device are a share of them, not the device's total */
	write_csv(dir, "memory_record.csv",
		  "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),"
		  "Total Active(MB),Stream Ptr,Device Type\n"
		  "CUDA,1.000,95.000,95.000,95.000,0,CUDA:0\n"
		  "PTA,2.000,99.000,,,,CUDA:0\n"
		  "CUDA,3.000,0.000,0.000,0.000,0,CUDA:0\n"
		  "SIM,4.000,10.000,10.000,10.000,0,SIM:1\n");
	struct report_device devs[] = { { "SIM", "SIM:1", 1000 }, { "CUDA", "CUDA:0", 100 } };
	char *html = page(dir, devs, 2);
	CHECK_CONTAINS(html, "The device's memory peaks at 95.0% of its capacity");
	CHECK_CONTAINS(html, "CUDA CUDA:0 allocated over time (peak 95.0 MB of 100.0 MB)");
	CHECK_CONTAINS(html, "Framework (PTA) CUDA:0 allocated over time (peak 99.0 MB)");
	free(html);
	html = page(dir, devs, 1);            /* no capacity for CUDA:0: nothing said */
	CHECK(html && !strstr(html, "rule memory_capacity"));
	free(html);
	/* NVML's samples win: they see the whole device */
	write_csv(dir, "device_usage.csv",
		  "Timestamp(us),Device_id,Device Type,Utilization(%),Memory Utilization(%),"
		  "Memory Used(MB),Memory Total(MB),Power(W),SM Clock(MHz),Temperature(C)\n"
		  "1.000,0,CUDA,50,10,40.000,100.000,70.000,1500,50\n"
		  "2.000,0,CUDA,50,10,45.000,100.000,70.000,1500,50\n");
	html = page(dir, devs, 2);
	CHECK(html && !strstr(html, "rule memory_capacity"));
	free(html);
	write_csv(dir, "device_usage.csv",
		  "Timestamp(us),Device_id,Device Type,Utilization(%),Memory Utilization(%),"
		  "Memory Used(MB),Memory Total(MB),Power(W),SM Clock(MHz),Temperature(C)\n"
		  "1.000,0,CUDA,50,10,97.000,100.000,70.000,1500,50\n");
	html = page(dir, devs, 2);
	CHECK_CONTAINS(html, "The device's memory peaks at 97.0% of its capacity");
	free(html);
	/* the findings the page shows are handed back, for the summary lines */
	struct report_finding found[4];
	size_t n = 99;
	CHECK(report_write_run(dir, dir, devs, 2, stderr, found, 4, &n) == 0);
	CHECK(n == 1 && strcmp(found[0].rule->id, "memory_capacity") == 0);
	CHECK(report_write_run(dir, dir, devs, 2, stderr, found, 0, &n) == 0 && n == 0);
	static const char *const names[] = { "memory_record.csv", "device_usage.csv",
					     "report.html" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char *p = fs_join(dir, names[i]);
		if (p)
			unlink(p);
		free(p);
	}
	rmdir(dir);
}

int main(void)
{
	thresholds();
	numbers_and_unknowns();
	memory_capacity_sources();
	long_series();
	return unit_done();
}

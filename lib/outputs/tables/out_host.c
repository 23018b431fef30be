#include "outputs/tables/out_host.h"

int out_host_open(struct out_host *h, const char *dir, uint64_t base_mono_ns)
{
	int rc = out_file_open(&h->file, dir, "host_usage.csv");
	if (rc)
		return rc;
	h->base = base_mono_ns;
	csv_init(&h->c, h->file.f);
	csv_header(&h->c, OUT_HOST_HEADER);
	return 0;
}

static void rate(struct csv *c, uint64_t bytes, uint64_t interval_ns)
{
	if (!interval_ns) {
		csv_str(c, "");
		return;
	}
	csv_fixed(c, (double)bytes / OUT_KB * 1e9 / (double)interval_ns, 3);
}

/* A column host_sys did not ask for is empty, not 0. */
static void fixed_if(struct csv *c, int sampled, double v, int decimals)
{
	if (sampled)
		csv_fixed(c, v, decimals);
	else
		csv_str(c, NULL);
}

void out_host_row(struct out_host *h, uint64_t ns, uint64_t interval_ns,
		  const struct raw_host_sample *s)
{
	struct csv *c = &h->c;
	uint32_t parts = raw_host_parts(s);
	int cpu = (parts & RAW_HOST_CPU) != 0, mem = (parts & RAW_HOST_MEM) != 0;
	int disk = (parts & RAW_HOST_DISK) != 0;
	csv_ns_us(c, (int64_t)(ns - h->base));
	fixed_if(c, cpu, s->proc_cpu_user_pct, 2);
	fixed_if(c, cpu, s->proc_cpu_sys_pct, 2);
	fixed_if(c, mem, (double)s->proc_rss_bytes / OUT_MB, 3);
	csv_uint(c, s->processes);
	csv_uint(c, s->threads);
	fixed_if(c, disk, (double)s->proc_read_bytes / OUT_KB, 3);
	fixed_if(c, disk, (double)s->proc_write_bytes / OUT_KB, 3);
	rate(c, s->proc_read_bytes, disk ? interval_ns : 0);
	rate(c, s->proc_write_bytes, disk ? interval_ns : 0);
	fixed_if(c, cpu, s->sys_cpu_pct, 2);
	fixed_if(c, mem, (double)s->sys_mem_used_bytes / OUT_MB, 3);
	fixed_if(c, mem, (double)s->sys_mem_avail_bytes / OUT_MB, 3);
	csv_end_row(c);
}

int out_host_close(struct out_host *h)
{
	return out_file_commit(&h->file, csv_finish(&h->c));
}

void out_host_abort(struct out_host *h)
{
	out_file_abort(&h->file);
}

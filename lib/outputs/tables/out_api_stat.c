#include "outputs/tables/out_api_stat.h"

#include "common/csv_out.h"
#include "outputs/out_file.h"

void out_api_stat_init(struct out_api_stat *a)
{
	out_namestat_init(&a->st);
}

int out_api_stat_add(struct out_api_stat *a, const char *level, const char *name, uint64_t ns)
{
	return out_namestat_add(&a->st, -1, level, name, ns);
}

static void write_row(struct csv *c, const struct out_namestat_entry *e)
{
	csv_str(c, "host");
	csv_str(c, e->tag);
	csv_str(c, e->name);
	csv_ns_us(c, (int64_t)e->total_ns);
	csv_uint(c, e->count);
	csv_ns_us(c, (int64_t)((e->total_ns + e->count / 2) / e->count));
	csv_ns_us(c, (int64_t)e->min_ns);
	csv_ns_us(c, (int64_t)e->max_ns);
	csv_fixed(c, out_namestat_variance(e), 3);
	csv_end_row(c);
}

int out_api_stat_write(struct out_api_stat *a, const char *dir)
{
	struct out_file o;
	struct csv c;
	int rc = out_file_open(&o, dir, "api_statistic.csv");
	if (rc)
		return rc;
	out_namestat_sort(&a->st);
	csv_init(&c, o.f);
	csv_header(&c, OUT_API_STAT_HEADER);
	for (size_t i = 0; i < a->st.n; i++)
		write_row(&c, a->st.v[i]);
	return out_file_commit(&o, csv_finish(&c));
}

void out_api_stat_free(struct out_api_stat *a)
{
	out_namestat_free(&a->st);
}

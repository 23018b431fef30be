#include "outputs/tables/out_op_stat.h"

#include "common/csv_out.h"
#include "outputs/out_file.h"

void out_op_stat_init(struct out_op_stat *st)
{
	out_namestat_init(&st->st);
}

int out_op_stat_add(struct out_op_stat *st, const char *name, uint64_t ns)
{
	return out_namestat_add(&st->st, -1, "CPU", name, ns);
}

int out_op_stat_add_device(struct out_op_stat *st, int32_t device, const char *core,
			   const char *name, uint64_t ns)
{
	return out_namestat_add(&st->st, device, core, name, ns);
}

static void write_row(struct csv *c, const struct out_namestat_entry *e, uint64_t all_ns)
{
	csv_int(c, e->group);
	csv_str(c, e->name);
	csv_str(c, e->tag);
	csv_uint(c, e->count);
	csv_ns_us(c, (int64_t)e->total_ns);
	csv_ns_us(c, (int64_t)e->min_ns);
	csv_ns_us(c, (int64_t)((e->total_ns + e->count / 2) / e->count));
	csv_ns_us(c, (int64_t)e->max_ns);
	csv_fixed(c, all_ns ? (double)e->total_ns * 100.0 / (double)all_ns : 0.0, 2);
	csv_end_row(c);
}

int out_op_stat_write(struct out_op_stat *st, const char *dir)
{
	struct out_file o;
	struct csv c;
	int rc = out_file_open(&o, dir, "op_statistic.csv");
	if (rc)
		return rc;
	out_namestat_sort(&st->st);
	csv_init(&c, o.f);
	csv_header(&c, OUT_OP_STAT_HEADER);
	uint64_t all = 0;
	for (size_t i = 0; i < st->st.n; i++) {
		const struct out_namestat_entry *e = st->st.v[i];
		if (i == 0 || e->group != st->st.v[i - 1]->group)
			all = out_namestat_group_total(&st->st, i);
		write_row(&c, e, all);
	}
	return out_file_commit(&o, csv_finish(&c));
}

void out_op_stat_free(struct out_op_stat *st)
{
	out_namestat_free(&st->st);
}

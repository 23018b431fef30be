/*
 * Time the steps spent taking DataLoader batches: Kineto's
 * "enumerate(DataLoader)#..." name, an operator (the hooks' record_function
 * on torch 1.x) or a range, summed over the steps. One reading for
 * report.html's data_loading finding and prof stats' overview.
 */
#include "stats/stats.h"

#include <math.h>
#include <string.h>

#define DATA_NAME "enumerate(DataLoader)"

static double data_time(const struct stats_agg *a, int metric)
{
	double t = 0;
	for (size_t i = 0; i < a->n; i++)
		if (strncmp(a->rows[i].name, DATA_NAME, strlen(DATA_NAME)) == 0)
			t += a->rows[i].sum[metric];
	return t;
}

int stats_data_loading(const char *outdir, double *us)
{
	char err[256];
	struct stats_agg a;
	int known = 0;
	*us = 0;
	stats_agg_init(&a, 3);
	if (stats_load_ops(outdir, STATS_WHERE_STEPS, &a, NULL, err, sizeof err) == 0) {
		*us = fmax(*us, data_time(&a, STATS_OP_TOTAL));
		known = 1;
	}
	stats_agg_free(&a);
	stats_agg_init(&a, 3);
	if (stats_load_ranges(outdir, "user_annotation", STATS_WHERE_STEPS, &a, err,
			      sizeof err) == 0) {
		*us = fmax(*us, data_time(&a, STATS_RANGE_TOTAL));
		known = 1;
	}
	stats_agg_free(&a);
	return known ? 0 : STATS_ABSENT;
}

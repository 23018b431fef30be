/*
 * libFuzzer harness for the CSV readers of prof's own outputs, which users
 * may edit or truncate: prof stats' table reader (lib/stats/csv_read.h)
 * and the cluster analysis' step_trace_time.csv and (read back by prof
 * stats) cluster_step_trace_time.csv readers. Every cell of a parsed
 * table is read back; a table's shape must hold.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster.h"
#include "stats/csv_read.h"
#include "fuzz_text.h"

static void read_table(const char *text, size_t size)
{
	struct csv_table t;
	char err[256];
	if (csv_table_parse(&t, text, size, err, sizeof err) != 0) {
		if (strnlen(err, sizeof err) == 0)
			__builtin_trap();   /* a failure says why */
		return;
	}
	size_t sum = 0;
	for (size_t r = 0; r < t.nrows; r++)
		for (size_t c = 0; c < t.ncols; c++)
			sum += strlen(csv_cell(&t, r, c));
	if (t.ncols && csv_column(&t, t.cells[0]) != 0)
		__builtin_trap();           /* the first header field is column 0 */
	(void)sum;
	csv_table_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	read_table(text, size);
	struct cluster_rank r;
	memset(&r, 0, sizeof r);
	if (cluster_read_step_csv(text, &r) == 0)
		for (size_t i = 1; i < r.nsteps; i++)
			if (r.steps[i - 1].step > r.steps[i].step)
				__builtin_trap();   /* sorted by step */
	free(r.steps);
	struct cluster c = { 0 };
	if (cluster_read_cluster_csv(text, &c) == 0)
		for (size_t i = 0; i < c.n; i++)
			for (size_t k = 0; k < c.ranks[i].nsteps; k++)
				if ((i && c.ranks[i - 1].rank >= c.ranks[i].rank) ||
				    (k && c.ranks[i].steps[k - 1].step > c.ranks[i].steps[k].step))
					__builtin_trap();   /* ranks unique and sorted, steps sorted */
	cluster_free(&c);
	free(text);
	return 0;
}

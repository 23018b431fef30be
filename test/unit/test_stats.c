/* lib/stats: the CSV reader (quoting, CRLF, empty fields), aggregation and
 * sorting, and the table text helpers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/csv_read.h"
#include "stats/stats.h"
#include "unit.h"

static int parse(struct csv_table *t, const char *s)
{
	char err[200];
	return csv_table_parse(t, s, strlen(s), err, sizeof(err));
}

static void test_csv_basic(void)
{
	struct csv_table t;
	CHECK(parse(&t, "a,b,c\n1,2,3\n4,5,6\n") == 0);
	CHECK(t.ncols == 3 && t.nrows == 2);
	CHECK_STR(csv_cell(&t, 0, 0), "1");
	CHECK_STR(csv_cell(&t, 1, 2), "6");
	CHECK(csv_column(&t, "c") == 2);
	CHECK(csv_column(&t, "d") == -1);
	CHECK_STR(csv_cell(&t, 5, 0), "");   /* out of range: empty */
	csv_table_free(&t);
}

static void test_csv_quoting(void)
{
	struct csv_table t;
	CHECK(parse(&t, "Name,Shapes\n\"a,b\",\"[[1, 2], [3]]\"\n\"say \"\"hi\"\"\",x\n"
		       "\"two\nlines\",\"\"\n") == 0);
	CHECK(t.nrows == 3);
	CHECK_STR(csv_cell(&t, 0, 0), "a,b");
	CHECK_STR(csv_cell(&t, 0, 1), "[[1, 2], [3]]");
	CHECK_STR(csv_cell(&t, 1, 0), "say \"hi\"");
	CHECK_STR(csv_cell(&t, 2, 0), "two\nlines");
	CHECK_STR(csv_cell(&t, 2, 1), "");
	csv_table_free(&t);
	char err[200];
	CHECK(csv_table_parse(&t, "a\n\"open", 7, err, sizeof(err)) == -1);
	CHECK_CONTAINS(err, "never closed");
	CHECK(csv_table_parse(&t, "a\n\"x\"y\n", 7, err, sizeof(err)) == -1);
	CHECK_CONTAINS(err, "after a closing quote");
	CHECK(csv_table_parse(&t, "", 0, err, sizeof(err)) == -1);
}

static void test_csv_crlf_and_empty(void)
{
	struct csv_table t;
	CHECK(parse(&t, "a,b,c\r\n1,,3\r\n,,\r\n\r\n4,5\r\n7,8,9,10\r\nx,y,") == 0);
	CHECK(t.ncols == 3);
	CHECK(t.nrows == 5);       /* the blank line is skipped */
	CHECK_STR(csv_cell(&t, 0, 1), "");
	CHECK_STR(csv_cell(&t, 0, 2), "3");
	CHECK_STR(csv_cell(&t, 1, 0), "");
	CHECK_STR(csv_cell(&t, 2, 2), "");      /* short row padded */
	CHECK_STR(csv_cell(&t, 3, 2), "9");     /* long row cut */
	CHECK_STR(csv_cell(&t, 4, 1), "y");     /* no final line end */
	CHECK_STR(csv_cell(&t, 4, 2), "");      /* trailing comma: empty field */
	CHECK_STR(t.cells[2], "c");             /* header without \r */
	csv_table_free(&t);
	CHECK(parse(&t, "h\n") == 0 && t.nrows == 0 && t.ncols == 1);
	csv_table_free(&t);
}

static void test_csv_load_absent(void)
{
	struct csv_table t;
	char err[200];
	CHECK(csv_table_load(&t, "/nonexistent/x.csv", err, sizeof(err)) == CSV_ABSENT);
}

static void test_parse_num(void)
{
	double v;
	CHECK(stats_parse_num("1.500", &v) == 0 && v == 1.5);
	CHECK(stats_parse_num("-1", &v) == 0 && v == -1);
	CHECK(stats_parse_num("", &v) == -1);
	CHECK(stats_parse_num("N/A", &v) == -1);
	CHECK(stats_parse_num("3x", &v) == -1);
}

static void test_agg(void)
{
	struct stats_agg a;
	stats_agg_init(&a, 2);
	double v[][2] = { { 10, 1 }, { 30, 2 }, { 5, 5 }, { 1, 1 }, { 2, 1 }, { 3, 1 } };
	const char *names[] = { "mm", "mm", "add", "relu", "relu", "relu" };
	for (int i = 0; i < 6; i++)
		CHECK(stats_agg_add1(&a, names[i], NULL, v[i]) == 0);
	CHECK(a.n == 3);
	stats_agg_sort(&a, STATS_SORT_TOTAL, 0);
	CHECK_STR(a.rows[0].name, "mm");
	CHECK(a.rows[0].count == 2 && a.rows[0].sum[0] == 40 && a.rows[0].min[0] == 10 &&
	      a.rows[0].max[0] == 30 && a.rows[0].sum[1] == 3);
	CHECK(stats_row_avg(&a.rows[0], 0) == 20);
	CHECK_STR(a.rows[1].name, "relu");     /* 6 */
	CHECK_STR(a.rows[2].name, "add");      /* 5 */
	stats_agg_sort(&a, STATS_SORT_COUNT, 0);
	CHECK_STR(a.rows[0].name, "relu");
	stats_agg_sort(&a, STATS_SORT_MIN, 0);    /* smallest first */
	CHECK_STR(a.rows[0].name, "relu");
	CHECK_STR(a.rows[2].name, "mm");
	stats_agg_sort(&a, STATS_SORT_AVG, 1);
	CHECK_STR(a.rows[0].name, "add");
	stats_agg_sort(&a, STATS_SORT_MAX, 0);
	CHECK_STR(a.rows[0].name, "mm");
	/* adding after a sort still finds the rows */
	double w[2] = { 100, 0 };
	CHECK(stats_agg_add1(&a, "add", NULL, w) == 0);
	CHECK(a.n == 3);
	CHECK(stats_agg_total(&a, 0) == 151);
	/* pre-aggregated rows merge; (name, extra) is the key */
	double s[1] = { 9 }, mn[1] = { 2 }, mx[1] = { 4 };
	struct stats_agg b;
	stats_agg_init(&b, 1);
	CHECK(stats_agg_add(&b, "k", "Runtime", 3, s, mn, mx) == 0);
	CHECK(stats_agg_add(&b, "k", "Driver", 1, s, mn, mx) == 0);
	CHECK(stats_agg_add(&b, "k", "Runtime", 2, s, mn, mx) == 0);
	CHECK(b.n == 2 && b.rows[0].count == 5 && b.rows[0].sum[0] == 18);
	stats_agg_free(&b);
	/* many names: the index grows */
	char name[32];
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "op%d", i % 1000);
		double x[2] = { i, 0 };
		stats_agg_add1(&a, name, NULL, x);
	}
	CHECK(a.n == 1003);
	stats_agg_free(&a);
}

static void test_text(void)
{
	char out[256];
	CHECK_STR(stats_ellipsize("short", 10, out, sizeof(out)), "short");
	CHECK_STR(stats_ellipsize("abcdefghij", 7, out, sizeof(out)), "abc\xe2\x80\xa6hij");
	CHECK(stats_text_width(out) == 7);
	CHECK(stats_text_width(stats_ellipsize("aaaaaaaaaaaaaaaaaaaaa", 8, out, sizeof(out))) == 8);
	CHECK_STR(stats_fmt_num(1.23456, 3, 10, out, sizeof(out)), "1.235");
	CHECK_STR(stats_fmt_num(123456.789, 3, 8, out, sizeof(out)), "123456.8");
	CHECK_STR(stats_fmt_num(1234567890.0, 3, 8, out, sizeof(out)), "1.23e+09");
	CHECK_STR(stats_fmt_num(NAN, 3, 8, out, sizeof(out)), "-");
}

static void test_steps_summary(void)
{
	struct stats_step rows[3] = {
		{ .device = 0, .step = 1, .total = 10, .computing = 6, .comm_not_overlapped = 2,
		  .free_time = 1 },
		{ .device = 1, .step = 1, .total = 12, .computing = 6, .comm_not_overlapped = 2,
		  .free_time = 3 },
		{ .device = 0, .step = 2, .total = 8, .computing = 8 },
	};
	struct stats_steps s = { .rows = rows, .n = 3 };
	struct stats_step_summary sum;
	CHECK(stats_steps_summarize(&s, &sum) == 0);
	CHECK(sum.steps == 2);
	CHECK(sum.total == 20);      /* step 1: its longest row, 12 */
	CHECK(sum.avg == 10);
	CHECK(sum.median == 10);     /* of 12 and 8 */
	CHECK(sum.computing == 20 && sum.communication == 4 && sum.free_time == 4);
	CHECK(sum.other == 2);       /* 30 - 20 - 4 - 4 */
}

/* Rows of several devices, steps out of order, a tie: each step once, by
 * number, with its longest row (the first of equal ones). */
static void test_steps_longest(void)
{
	struct stats_step rows[] = {
		{ .device = 0, .step = 7, .total = 5 }, { .device = 0, .step = 3, .total = 4 },
		{ .device = 1, .step = 7, .total = 9 }, { .device = 1, .step = 3, .total = 4 },
		{ .device = 2, .step = 5, .total = 1 }, { .device = 2, .step = 7, .total = 2 },
	};
	struct stats_steps s = { .rows = rows, .n = 6 };
	size_t n;
	const struct stats_step **v = stats_steps_longest(&s, &n);
	CHECK(v && n == 3);
	CHECK(v[0] == &rows[1] && v[1] == &rows[4] && v[2] == &rows[2]);
	free(v);
	struct stats_step_summary sum;
	CHECK(stats_steps_summarize(&s, &sum) == 0);
	CHECK(sum.steps == 3 && sum.total == 14 && sum.median == 4);
	struct stats_steps none = { 0 };
	v = stats_steps_longest(&none, &n);
	CHECK(v && n == 0);
	free(v);
}

/* Issue 17 §8: ten autograd nodes all printed as "autograd:…ackward0". */
#define ELL "\xe2\x80\xa6"
static void test_cut_name(void)
{
	char out[256];
	const char *bw[] = { "autograd::engine::evaluate_function: AddmmBackward0",
			     "autograd::engine::evaluate_function: ReluBackward0",
			     "autograd::engine::evaluate_function: TBackward0" };
	CHECK_STR(stats_cut_name(bw[0], 18, out, sizeof out), "aut" ELL "AddmmBackward0");
	CHECK_STR(stats_cut_name(bw[1], 18, out, sizeof out), "auto" ELL "ReluBackward0");
	CHECK_STR(stats_cut_name(bw[2], 18, out, sizeof out), "autogra" ELL "TBackward0");
	/* the qualifier goes whole when the last name fills the column */
	CHECK_STR(stats_cut_name("aten::cudnn_convolution", 18, out, sizeof out),
		  "" ELL "cudnn_convolution");
	/* a signature loses its arguments first, matched from the end */
	CHECK_STR(stats_cut_name("void at::native::(anonymous namespace)::k<4>(int, float*)", 50,
				 out, sizeof out), "void at::native::(anonymous namespace)::k<4>(" ELL ")");
	/* not a signature: no argument list to drop */
	CHECK_STR(stats_cut_name("enumerate(DataLoader)#_BaseDataLoaderIter.__next__", 29, out,
				 sizeof out), "enumerate(DataLoader" ELL "__next__");
	/* fits: as it is; no qualifier: the middle goes */
	CHECK_STR(stats_cut_name("aten::mm", 18, out, sizeof out), "aten::mm");
	CHECK_STR(stats_cut_name("abcdefghijklmnopqrstuvwxyz", 9, out, sizeof out),
		  "abcd" ELL "wxyz");
}

int main(void)
{
	test_csv_basic();
	test_csv_quoting();
	test_csv_crlf_and_empty();
	test_csv_load_absent();
	test_parse_num();
	test_agg();
	test_text();
	test_cut_name();
	test_steps_summary();
	test_steps_longest();
	return unit_done();
}

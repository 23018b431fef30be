/*
 * Rows waiting for their step (out_stepwait.h): the file is the same
 * whether rows wait in memory or go through the spill (a wait of a few
 * bytes forces it), with the step before a row's fields or after them,
 * for rows whose quoted fields hold commas, quotes and newlines, and with
 * --step-list keeping only the listed steps' rows.
 */
#include "unit/unit.h"

#include "common/fsutil.h"
#include "outputs/out_stepwait.h"

struct row {
	int32_t pid;
	uint64_t ns;
	const char *name;
	int64_t value;
};

/* Process 1: step 1 [100, 200), step 2 [200, 300). Process 2 marks none. */
static const struct out_step steps[] = {
	{ .pid = 1, .tid = 1, .number = 1, .start_ns = 100, .end_ns = 200 },
	{ .pid = 1, .tid = 1, .number = 2, .start_ns = 200, .end_ns = 300 },
};

static const struct row rows[] = {
	{ 1, 50, "before", 1 },                          /* set-up: no step */
	{ 1, 150, "plain", 2 },
	{ 2, 160, "other \"process\"", 3 },
	{ 1, 190, "a,comma", 4 },
	{ 1, 210, "two\nlines, \"quoted\"", 5 },
	{ 1, 299, "last of 2", 6 },
	{ 1, 300, "after", 7 },                          /* evaluation: no step */
};

static void render(struct csv *c, const void *row, const void *ctx)
{
	const struct row *r = row;
	(void)ctx;
	csv_str(c, r->name);
	csv_int(c, r->value);
	csv_end_row(c);
}

/* The model's answer while the boundary of process 1 is at `*ctx`: a row
 * of process 1 before it is settled; anything else may still change. */
static int64_t settled(void *ctx, int32_t pid, uint64_t ns)
{
	uint64_t boundary = *(const uint64_t *)ctx;
	if (pid != 1 || ns >= boundary)
		return OUT_STEPWAIT;
	for (size_t i = 0; i < 2; i++)
		if (ns >= steps[i].start_ns && ns < steps[i].end_ns)
			return (int64_t)steps[i].number;
	return -1;
}

static char *write_table(const char *dir, enum out_spill_step where, size_t max_wait,
			 const uint64_t *want, size_t nwant)
{
	struct out_file file;
	struct csv oc;
	struct out_stepwait w;
	CHECK(out_stepwait_init(&w, &oc, dir, where, max_wait) == 0);
	CHECK(out_file_open(&file, dir, "table.csv") == 0);
	csv_init(&oc, file.f);
	csv_header(&oc, where == OUT_STEP_FIRST ? "Step Id,Name,Value" : "Name,Value,Step Id");
	uint64_t boundary = 0;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		if (rows[i].ns >= 200 && boundary < 200) {   /* step 1 ends */
			boundary = 200;
			out_stepwait_settle(&w, settled, &boundary, want, nwant);
		}
		out_stepwait_row(&w, rows[i].pid, rows[i].ns, render, &rows[i], NULL);
	}
	struct out_step_find f;
	CHECK(out_step_find_init(&f, steps, 2) == 0);
	f.want = want;
	f.nwant = nwant;
	CHECK(out_stepwait_finish(&w, file.f, &f) == 0);
	CHECK(w.spilling == (max_wait < 100));
	out_step_find_free(&f);
	out_stepwait_free(&w);
	CHECK(out_file_commit(&file, 0) == 0);
	char path[4096];
	snprintf(path, sizeof path, "%s/table.csv", dir);
	size_t n;
	char *text = NULL;
	CHECK(fs_read_file(path, &text, &n) == 0);
	return text;
}

static const char last_all[] =
	"Name,Value,Step Id\n"
	"before,1,\n"
	"plain,2,1\n"
	"\"other \"\"process\"\"\",3,\n"
	"\"a,comma\",4,1\n"
	"\"two\nlines, \"\"quoted\"\"\",5,2\n"
	"last of 2,6,2\n"
	"after,7,\n";

static const char first_all[] =
	"Step Id,Name,Value\n"
	",before,1\n"
	"1,plain,2\n"
	",\"other \"\"process\"\"\",3\n"
	"1,\"a,comma\",4\n"
	"2,\"two\nlines, \"\"quoted\"\"\",5\n"
	"2,last of 2,6\n"
	",after,7\n";

static const char last_step2[] =
	"Name,Value,Step Id\n"
	"\"two\nlines, \"\"quoted\"\"\",5,2\n"
	"last of 2,6,2\n";

static void test_same_either_way(const char *dir)
{
	static const uint64_t two = 2;
	static const size_t waits[] = { 1 << 20, 40 };   /* memory; a spill from row 2 on */
	for (size_t i = 0; i < 2; i++) {
		char *t = write_table(dir, OUT_STEP_LAST, waits[i], NULL, 0);
		CHECK_STR(t, last_all);
		free(t);
		t = write_table(dir, OUT_STEP_FIRST, waits[i], NULL, 0);
		CHECK_STR(t, first_all);
		free(t);
		t = write_table(dir, OUT_STEP_LAST, waits[i], &two, 1);
		CHECK_STR(t, last_step2);
		free(t);
	}
}

int main(void)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/stepwait-%d", unit_tmp_dir(), (int)getpid());
	CHECK(fs_mkdir_p(dir) == 0);
	test_same_either_way(dir);
	return unit_done();
}

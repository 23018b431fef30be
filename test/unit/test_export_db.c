/* profiler.db's column types from the CSVs: INTEGER, REAL or TEXT by what
 * every value of a column is, in decimal notation only. */
#include "unit/rawgen.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "unit/unit.h"

static const char *col_type(sqlite3 *db, const char *table, int col, char *buf, size_t n)
{
	char sql[128];
	sqlite3_stmt *st;
	snprintf(sql, sizeof sql, "PRAGMA table_info(\"%s\")", table);
	buf[0] = '\0';
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return buf;
	while (sqlite3_step(st) == SQLITE_ROW)
		if (sqlite3_column_int(st, 0) == col)
			snprintf(buf, n, "%s", (const char *)sqlite3_column_text(st, 2));
	sqlite3_finalize(st);
	return buf;
}

static void test_types(void)
{
	char *dir = rg_tmpdir("export-db");
	char *csv = rg_path(dir, "types.csv");
	/* names that strtod would take for numbers stay names */
	CHECK(rg_write(csv, "Name,Count,Ratio,Mixed\n"
			    "NaN,1,0.5,7\n"
			    "Infinity,2,1e3,x\n"
			    "0x10,-3,-2.5,8\n") == 0);
	char *trace = rg_path(dir, "trace_view.json");   /* the timeline table's source */
	CHECK(rg_write(trace, "{\n  \"traceEvents\": [\n    {\"ph\": \"i\", \"name\": \"m\", "
			      "\"pid\": 1, \"tid\": 1, \"ts\": 1.000}\n  ]\n}\n") == 0);
	free(trace);
	CHECK(export_db(dir, stderr) == 0);
	char *path = rg_path(dir, "profiler.db");
	sqlite3 *db = NULL;
	CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
	char t[32];
	CHECK_STR(col_type(db, "types", 0, t, sizeof t), "TEXT");
	CHECK_STR(col_type(db, "types", 1, t, sizeof t), "INTEGER");
	CHECK_STR(col_type(db, "types", 2, t, sizeof t), "REAL");
	CHECK_STR(col_type(db, "types", 3, t, sizeof t), "TEXT");
	sqlite3_stmt *st;
	CHECK(sqlite3_prepare_v2(db, "SELECT Name FROM types ORDER BY rowid", -1, &st, NULL) ==
	      SQLITE_OK);
	const char *want[] = { "NaN", "Infinity", "0x10" };
	for (int i = 0; i < 3 && sqlite3_step(st) == SQLITE_ROW; i++) {
		CHECK(sqlite3_column_type(st, 0) == SQLITE_TEXT);
		CHECK_STR((const char *)sqlite3_column_text(st, 0), want[i]);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(path);
	free(csv);
	rg_rmrf(dir);
	free(dir);
}

int main(void)
{
	test_types();
	return unit_done();
}

/* PROFILER_OUTPUT/profiler.db: every CSV as a table with its columns
 * typed, and trace_view.json's events as the "timeline" table; written in
 * one transaction with prepared statements, a row in memory at a time. */
#include "export/export.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"

#define DB_NAME "profiler.db"

enum coltype { C_NONE, C_INT, C_REAL, C_TEXT };

static enum coltype type_of(const char *s)
{
	char *end;
	if (!*s)
		return C_NONE;
	errno = 0;
	(void)strtoll(s, &end, 10);
	if (!*end && !errno)
		return C_INT;
	/* decimal notation only: strtod also takes "NaN", "Infinity" and hex,
	 * which as REAL would turn names into numbers (NaN into NULL) */
	if (s[strspn(s, "0123456789+-.eE")] != '\0')
		return C_TEXT;
	(void)strtod(s, &end);
	return !*end ? C_REAL : C_TEXT;
}

static enum coltype widen(enum coltype a, enum coltype b)
{
	return a > b ? a : b;
}

/* "x" quoted as an SQL identifier into a growing string. */
static void ident(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static int db_fail(sqlite3 *db, FILE *log, const char *what)
{
	fprintf(log, "prof parse: %s: %s: %s\n", DB_NAME, what, sqlite3_errmsg(db));
	return -EIO;
}

static int exec(sqlite3 *db, const char *sql, FILE *log)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	fprintf(log, "prof parse: %s: %s\n", DB_NAME, msg ? msg : "error");
	sqlite3_free(msg);
	return -EIO;
}

/* dir/name opened for reading: 0, or -errno. */
static int open_in(const char *dir, const char *name, FILE **in)
{
	char *path = fs_join(dir, name);
	*in = path ? fopen(path, "re") : NULL;
	int rc = !path ? -ENOMEM : !*in ? -errno : 0;
	free(path);
	return rc;
}

/* One CSV on its way into its table. */
struct csv_load {
	FILE *in;
	struct export_csv_row r;
	enum coltype *types;     /* per header column: the widest of its cells */
	size_t ncol;
	char table[256];
};

/* Pass 1: the header's width and the columns' types. 1, 0 (no header)
 * or -errno. */
static int csv_types(struct csv_load *c)
{
	int rc = export_csv_read(c->in, &c->r);
	if (rc <= 0)
		return rc;
	c->ncol = c->r.n;
	c->types = calloc(c->ncol, sizeof *c->types);
	if (!c->types)
		return -ENOMEM;
	while ((rc = export_csv_read(c->in, &c->r)) == 1)
		for (size_t i = 0; i < c->ncol && i < c->r.n; i++)
			c->types[i] = widen(c->types[i], type_of(c->r.buf + c->r.off[i]));
	return rc < 0 ? rc : 1;
}

/* CREATE TABLE and INSERT for the header row in c->r; *create and *insert
 * are the caller's to free. */
static int table_sql(const struct csv_load *c, char **create, char **insert)
{
	size_t sqllen, inslen;
	FILE *f = open_memstream(create, &sqllen), *g = open_memstream(insert, &inslen);
	if (!f || !g) {
		if (f)
			fclose(f);
		if (g)
			fclose(g);
		return -ENOMEM;
	}
	fputs("CREATE TABLE ", f);
	ident(f, c->table);
	fputs(" (", f);
	fputs("INSERT INTO ", g);
	ident(g, c->table);
	fputs(" VALUES (", g);
	for (size_t i = 0; i < c->ncol; i++) {
		fputs(i ? ", " : "", f);
		ident(f, c->r.buf + c->r.off[i]);
		fputs(c->types[i] == C_INT ? " INTEGER" : c->types[i] == C_REAL ? " REAL" : " TEXT",
		      f);
		fputs(i ? ", ?" : "?", g);
	}
	fputs(")", f);
	fputs(")", g);
	fclose(f);
	fclose(g);
	return 0;
}

static int create_table(sqlite3 *db, const struct csv_load *c, sqlite3_stmt **st, FILE *log)
{
	char *sql = NULL, *ins = NULL;
	int rc = table_sql(c, &sql, &ins);
	if (!rc)
		rc = exec(db, sql, log);
	if (!rc && sqlite3_prepare_v2(db, ins, -1, st, NULL) != SQLITE_OK)
		rc = db_fail(db, log, c->table);
	free(sql);
	free(ins);
	return rc;
}

static void bind_cell(sqlite3_stmt *st, int c, const char *v, enum coltype type)
{
	if (!*v)
		sqlite3_bind_null(st, c);
	else if (type == C_INT)
		sqlite3_bind_int64(st, c, strtoll(v, NULL, 10));
	else if (type == C_REAL)
		sqlite3_bind_double(st, c, strtod(v, NULL));
	else
		sqlite3_bind_text(st, c, v, -1, SQLITE_TRANSIENT);
}

/* Pass 2: the rows. */
static int insert_rows(sqlite3 *db, struct csv_load *c, sqlite3_stmt *st, FILE *log)
{
	int rc;
	while ((rc = export_csv_read(c->in, &c->r)) == 1) {
		for (size_t i = 0; i < c->ncol; i++)
			bind_cell(st, (int)i + 1, i < c->r.n ? c->r.buf + c->r.off[i] : "",
				  c->types[i]);
		if (sqlite3_step(st) != SQLITE_DONE)
			return db_fail(db, log, c->table);
		sqlite3_reset(st);
	}
	return rc;
}

static int load_csv(sqlite3 *db, const char *dir, const char *file, FILE *log)
{
	struct csv_load c = { 0 };
	int rc = open_in(dir, file, &c.in);
	if (rc)
		return rc;
	snprintf(c.table, sizeof c.table, "%.*s", (int)(strlen(file) - 4), file);
	sqlite3_stmt *st = NULL;
	if ((rc = csv_types(&c)) <= 0)
		goto out;
	rewind(c.in);
	if ((rc = export_csv_read(c.in, &c.r)) != 1)
		goto out;
	if ((rc = create_table(db, &c, &st, log)) == 0)
		rc = insert_rows(db, &c, st, log);
out:
	sqlite3_finalize(st);
	free(c.types);
	export_csv_row_free(&c.r);
	fclose(c.in);
	return rc < 0 ? rc : 0;
}

static void bind_json(sqlite3_stmt *st, int c, const cJSON *v)
{
	if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;
		if (d == (double)(int64_t)d)
			sqlite3_bind_int64(st, c, (int64_t)d);
		else
			sqlite3_bind_double(st, c, d);
	} else if (cJSON_IsString(v)) {
		sqlite3_bind_text(st, c, v->valuestring, -1, SQLITE_TRANSIENT);
	} else {
		sqlite3_bind_null(st, c);
	}
}

/* A REAL column: a time is a time even when it is whole. */
static void bind_real(sqlite3_stmt *st, int c, const cJSON *v)
{
	if (cJSON_IsNumber(v))
		sqlite3_bind_double(st, c, v->valuedouble);
	else
		sqlite3_bind_null(st, c);
}

/* One event (a line's text less its end) as a timeline row; text that
 * does not parse is skipped. */
static int insert_event(sqlite3 *db, sqlite3_stmt *st, const char *line, size_t n, FILE *log)
{
	cJSON *j = cJSON_ParseWithLength(line, n);
	if (!j)
		return 0;
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(j, "args");
	bind_json(st, 1, cJSON_GetObjectItemCaseSensitive(j, "pid"));
	bind_json(st, 2, cJSON_GetObjectItemCaseSensitive(j, "tid"));
	bind_real(st, 3, cJSON_GetObjectItemCaseSensitive(j, "ts"));
	bind_real(st, 4, cJSON_GetObjectItemCaseSensitive(j, "dur"));
	bind_json(st, 5, cJSON_GetObjectItemCaseSensitive(j, "ph"));
	bind_json(st, 6, cJSON_GetObjectItemCaseSensitive(j, "cat"));
	bind_json(st, 7, cJSON_GetObjectItemCaseSensitive(j, "name"));
	char *a = args ? cJSON_PrintUnformatted(args) : NULL;
	if (a)
		sqlite3_bind_text(st, 8, a, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 8);
	int rc = 0;
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = db_fail(db, log, "timeline");
	sqlite3_reset(st);
	free(a);
	cJSON_Delete(j);
	return rc;
}

static int load_timeline(sqlite3 *db, const char *dir, FILE *log)
{
	int rc = exec(db, "CREATE TABLE timeline (pid INTEGER, tid INTEGER, ts_us REAL, "
		      "dur_us REAL, ph TEXT, cat TEXT, name TEXT, args TEXT)", log);
	if (rc)
		return rc;
	FILE *in;
	if ((rc = open_in(dir, "trace_view.json", &in)) != 0)
		return rc;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "INSERT INTO timeline VALUES (?, ?, ?, ?, ?, ?, ?, ?)", -1,
			       &st, NULL) != SQLITE_OK) {
		fclose(in);
		return db_fail(db, log, "timeline");
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int events = 0;
	while (!rc && (len = getline(&line, &cap, in)) > 0) {
		const char *s = line + strspn(line, " ");
		if (!events) {
			events = strstr(line, "\"traceEvents\"") != NULL;
			continue;
		}
		if (*s == ']')
			break;
		size_t n = (size_t)len;
		while (n && (line[n - 1] == '\n' || line[n - 1] == ',' || line[n - 1] == ' '))
			n--;
		rc = insert_event(db, st, line, n, log);
	}
	if (!rc && ferror(in))
		rc = -EIO;
	free(line);
	sqlite3_finalize(st);
	fclose(in);
	return rc;
}

int export_db(const char *dir, FILE *log)
{
	char *path = fs_join(dir, DB_NAME);
	char *tmp = fs_join(dir, DB_NAME ".tmp");
	if (!path || !tmp) {
		free(path);
		free(tmp);
		return -ENOMEM;
	}
	/* Created here, empty, so that its mode is the run dir's (SQLite's
	 * would be 0644 less the umask) and a planted link is not followed. */
	int fd = fs_create_file(tmp, O_WRONLY);
	int rc = fd < 0 ? fd : 0;
	if (fd >= 0)
		close(fd);
	sqlite3 *db = NULL;
	int flags = SQLITE_OPEN_READWRITE;
#ifdef SQLITE_OPEN_NOFOLLOW
	flags |= SQLITE_OPEN_NOFOLLOW;
#endif
	if (!rc && sqlite3_open_v2(tmp, &db, flags, NULL) != SQLITE_OK)
		rc = db_fail(db, log, "open");
	rc = rc ? rc : exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
			   "PRAGMA cache_size=-8192; BEGIN", log);
	struct dirent **list = NULL;
	int n = rc ? 0 : export_csv_list(dir, &list);
	if (n < 0) {
		rc = n;
		n = 0;
	}
	for (int i = 0; i < n; i++) {
		if (!rc)
			rc = load_csv(db, dir, list[i]->d_name, log);
		free(list[i]);
	}
	free(list);
	rc = rc ? rc : load_timeline(db, dir, log);
	rc = rc ? rc : exec(db, "COMMIT", log);
	if (sqlite3_close(db) != SQLITE_OK && !rc)
		rc = -EIO;
	if (!rc && rename(tmp, path) != 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	free(path);
	free(tmp);
	return rc;
}

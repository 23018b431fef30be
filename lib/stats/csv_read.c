/* RFC 4180 CSV reader: see csv_read.h. */
#include "stats/csv_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char empty_field[1];

struct cellvec {
	char **v;
	size_t n, cap;
};

static int push(struct cellvec *c, char *s)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		char **v = realloc(c->v, cap * sizeof(*v));
		if (!v)
			return -1;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = s;
	return 0;
}

int csv_table_parse(struct csv_table *t, const char *buf, size_t len, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	if (len == 0) {
		snprintf(err, errlen, "empty file (no header line)");
		return -1;
	}
	/* Every field's text plus its NUL fits in len + 1 bytes: quotes and
	 * delimiters that are dropped make room for the terminators. */
	char *arena = malloc(len + 1), *out = arena;
	struct cellvec cells = { 0 };
	if (!arena) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	size_t pos = 0, line = 1, row_start = 0, ncols = 0;
	int header_done = 0;
	for (;;) {
		/* one field */
		char *field = out;
		int quoted = 0;
		if (pos < len && buf[pos] == '"') {
			quoted = 1;
			size_t qline = line;
			pos++;
			for (;;) {
				if (pos >= len) {
					snprintf(err, errlen, "line %zu: quoted field never closed", qline);
					goto fail;
				}
				char c = buf[pos];
				if (c == '"') {
					if (pos + 1 < len && buf[pos + 1] == '"') {
						*out++ = '"';
						pos += 2;
						continue;
					}
					pos++;
					break;
				}
				if (c == '\n')
					line++;
				*out++ = c;
				pos++;
			}
			if (pos < len && buf[pos] != ',' && buf[pos] != '\n' && buf[pos] != '\r') {
				snprintf(err, errlen, "line %zu: text after a closing quote", line);
				goto fail;
			}
		} else {
			while (pos < len && buf[pos] != ',' && buf[pos] != '\n' && buf[pos] != '\r')
				*out++ = buf[pos++];
		}
		*out++ = '\0';
		if (push(&cells, field) != 0)
			goto oom;
		if (pos < len && buf[pos] == ',') {
			pos++;
			continue;   /* another field, maybe empty at the end of input */
		}
		/* end of the row */
		if (pos < len && buf[pos] == '\r')
			pos++;
		if (pos < len && buf[pos] == '\n')
			pos++;
		line++;
		size_t nf = cells.n - row_start;
		if (!header_done) {
			ncols = nf;
			header_done = 1;
			row_start = cells.n;
		} else if (nf == 1 && !quoted && field[0] == '\0') {
			cells.n = row_start;   /* a blank line */
		} else {
			if (nf > ncols)
				cells.n = row_start + ncols;
			while (cells.n - row_start < ncols)
				if (push(&cells, empty_field) != 0)
					goto oom;
			row_start = cells.n;
		}
		if (pos >= len)
			break;
	}
	t->ncols = ncols;
	t->nrows = cells.n / ncols - 1;
	t->cells = cells.v;
	t->arena = arena;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	free(cells.v);
	free(arena);
	return -1;
}

int csv_table_load(struct csv_table *t, const char *path, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	FILE *f = fopen(path, "rb");
	if (!f) {
		if (errno == ENOENT)
			return CSV_ABSENT;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (len < cap)
			break;
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	int rerr = ferror(f);
	fclose(f);
	if (!buf || rerr) {
		snprintf(err, errlen, "%s: %s", path, buf ? "read error" : "out of memory");
		free(buf);
		return -1;
	}
	char perr[200];
	int rc = csv_table_parse(t, buf, len, perr, sizeof(perr));
	free(buf);
	if (rc != 0)
		snprintf(err, errlen, "%s: %s", path, perr);
	return rc;
}

int csv_column(const struct csv_table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (strcmp(t->cells[i], name) == 0)
			return (int)i;
	return -1;
}

const char *csv_cell(const struct csv_table *t, size_t row, size_t col)
{
	if (row >= t->nrows || col >= t->ncols)
		return "";
	return t->cells[(row + 1) * t->ncols + col];
}

void csv_table_free(struct csv_table *t)
{
	free(t->cells);
	free(t->arena);
	memset(t, 0, sizeof(*t));
}

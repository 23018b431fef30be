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

struct csv_parser {
	const char *buf;
	size_t len, pos;
	size_t line;               /* for messages, counting newlines in quotes */
	char *out;                 /* where the next field's text goes */
	struct cellvec cells;
	size_t row_start, ncols;   /* the current row's first cell; the header's width */
	int header_done;
	char *err;
	size_t errlen;
};

/* Whether pos is still inside an unquoted field. */
static int in_field(const struct csv_parser *p)
{
	return p->pos < p->len && p->buf[p->pos] != ',' && p->buf[p->pos] != '\n' &&
	       p->buf[p->pos] != '\r';
}

static int parse_quoted(struct csv_parser *p)
{
	size_t qline = p->line;
	p->pos++;
	for (;;) {
		if (p->pos >= p->len) {
			snprintf(p->err, p->errlen, "line %zu: quoted field never closed", qline);
			return -1;
		}
		char c = p->buf[p->pos];
		if (c == '"') {
			if (p->pos + 1 < p->len && p->buf[p->pos + 1] == '"') {
				*p->out++ = '"';
				p->pos += 2;
				continue;
			}
			p->pos++;
			break;
		}
		if (c == '\n')
			p->line++;
		*p->out++ = c;
		p->pos++;
	}
	if (in_field(p)) {
		snprintf(p->err, p->errlen, "line %zu: text after a closing quote", p->line);
		return -1;
	}
	return 0;
}

/* One field's text into the arena, NUL-terminated. */
static int parse_field(struct csv_parser *p, int *quoted)
{
	*quoted = p->pos < p->len && p->buf[p->pos] == '"';
	if (*quoted) {
		if (parse_quoted(p) != 0)
			return -1;
	} else {
		while (in_field(p))
			*p->out++ = p->buf[p->pos++];
	}
	*p->out++ = '\0';
	return 0;
}

/* Closes the row that ends at the last cell: the header sets the width,
 * a blank line is dropped, others are padded or cut to the width. */
static int end_row(struct csv_parser *p, int blank)
{
	if (p->pos < p->len && p->buf[p->pos] == '\r')
		p->pos++;
	if (p->pos < p->len && p->buf[p->pos] == '\n')
		p->pos++;
	p->line++;
	size_t nf = p->cells.n - p->row_start;
	if (!p->header_done) {
		p->ncols = nf;
		p->header_done = 1;
		p->row_start = p->cells.n;
	} else if (nf == 1 && blank) {
		p->cells.n = p->row_start;   /* a blank line */
	} else {
		if (nf > p->ncols)
			p->cells.n = p->row_start + p->ncols;
		while (p->cells.n - p->row_start < p->ncols)
			if (push(&p->cells, empty_field) != 0)
				return -1;
		p->row_start = p->cells.n;
	}
	return 0;
}

static int parse_rows(struct csv_parser *p)
{
	for (;;) {
		char *field = p->out;
		int quoted;
		if (parse_field(p, &quoted) != 0)
			return -1;
		if (push(&p->cells, field) != 0)
			goto oom;
		if (p->pos < p->len && p->buf[p->pos] == ',') {
			p->pos++;
			continue;   /* another field, maybe empty at the end of input */
		}
		if (end_row(p, !quoted && field[0] == '\0') != 0)
			goto oom;
		if (p->pos >= p->len)
			return 0;
	}
oom:
	snprintf(p->err, p->errlen, "out of memory");
	return -1;
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
	char *arena = malloc(len + 1);
	if (!arena) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	struct csv_parser p = { .buf = buf, .len = len, .line = 1, .out = arena,
				.err = err, .errlen = errlen };
	if (parse_rows(&p) != 0) {
		free(p.cells.v);
		free(arena);
		return -1;
	}
	t->ncols = p.ncols;
	t->nrows = p.cells.n / p.ncols - 1;
	t->cells = p.cells.v;
	t->arena = arena;
	return 0;
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

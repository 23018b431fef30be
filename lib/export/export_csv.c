/* CSV rows read back: --step-list's row filter, the db's tables. */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE
#include "export/export.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "outputs/out_file.h"

static int grow(char **b, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 256;
	while (n < need)
		n *= 2;
	char *nb = realloc(*b, n);
	if (!nb)
		return -ENOMEM;
	*b = nb;
	*cap = n;
	return 0;
}

static int put(struct export_csv_row *r, char c)
{
	if (grow(&r->buf, &r->cap, r->len + 1))
		return -ENOMEM;
	r->buf[r->len++] = c;
	return 0;
}

static int field_end(struct export_csv_row *r)
{
	if (put(r, '\0'))
		return -ENOMEM;
	return 0;
}

static int field_start(struct export_csv_row *r)
{
	if (r->n == r->capn) {
		size_t n = r->capn ? r->capn * 2 : 32;
		size_t *no = realloc(r->off, n * sizeof *no);
		if (!no)
			return -ENOMEM;
		r->off = no;
		r->capn = n;
	}
	r->off[r->n++] = r->len;
	return 0;
}

int export_csv_read(FILE *f, struct export_csv_row *r)
{
	int c, quoted = 0, any = 0;
	r->len = r->rawlen = r->n = 0;
	if (field_start(r))
		return -ENOMEM;
	while ((c = getc(f)) != EOF) {
		any = 1;
		if (grow(&r->raw, &r->rawcap, r->rawlen + 1))
			return -ENOMEM;
		r->raw[r->rawlen++] = (char)c;
		if (quoted) {
			if (c != '"') {
				if (put(r, (char)c))
					return -ENOMEM;
				continue;
			}
			int d = getc(f);
			if (d == '"') {
				if (grow(&r->raw, &r->rawcap, r->rawlen + 1) || put(r, '"'))
					return -ENOMEM;
				r->raw[r->rawlen++] = '"';
				continue;
			}
			quoted = 0;
			if (d != EOF)
				ungetc(d, f);
			continue;
		}
		if (c == '"') {
			quoted = 1;
		} else if (c == ',') {
			if (field_end(r) || field_start(r))
				return -ENOMEM;
		} else if (c == '\n') {
			if (r->len > r->off[r->n - 1] && r->buf[r->len - 1] == '\r')
				r->len--;
			return field_end(r) ? -ENOMEM : 1;
		} else if (put(r, (char)c)) {
			return -ENOMEM;
		}
	}
	if (ferror(f))
		return -EIO;
	if (!any)
		return 0;
	return field_end(r) ? -ENOMEM : 1;
}

void export_csv_row_free(struct export_csv_row *r)
{
	free(r->buf);
	free(r->raw);
	free(r->off);
	memset(r, 0, sizeof *r);
}

static int in_list(const uint64_t *sel, size_t nsel, const char *s)
{
	char *end;
	if (!*s)
		return 0;
	double v = strtod(s, &end);
	if (*end || v < 0)
		return 0;
	for (size_t i = 0; i < nsel; i++)
		if ((double)sel[i] == v)
			return 1;
	return 0;
}

static int in_spans(const struct export_span *spans, size_t nspans, const uint64_t *sel,
		    size_t nsel, const char *s)
{
	char *end;
	if (!*s)
		return 0;
	double t = strtod(s, &end);
	if (*end)
		return 0;
	for (size_t i = 0; i < nspans; i++)
		if (t >= spans[i].start_us && t <= spans[i].end_us) {
			for (size_t k = 0; k < nsel; k++)
				if (sel[k] == spans[i].step)
					return 1;
		}
	return 0;
}

static const char *const step_cols[] = { "Step", "Step Id", NULL };
static const char *const time_cols[] = { "Timestamp(us)", "Allocation Time(us)",
					 "Start Time(us)", NULL };

static int find_col(const struct export_csv_row *h, const char *const *names)
{
	for (size_t k = 0; names[k]; k++)
		for (size_t i = 0; i < h->n; i++)
			if (strcmp(h->buf + h->off[i], names[k]) == 0)
				return (int)i;
	return -1;
}

static int filter_one(const char *dir, const char *name, const struct export_span *spans,
		      size_t nspans, const uint64_t *sel, size_t nsel)
{
	char *path = fs_join(dir, name);
	FILE *in = path ? fopen(path, "re") : NULL;
	int rc = !path ? -ENOMEM : !in ? -errno : 0;
	free(path);
	if (rc)
		return rc;
	struct export_csv_row r = { 0 };
	rc = export_csv_read(in, &r);
	int sc = rc == 1 ? find_col(&r, step_cols) : -1;
	int tc = rc == 1 && sc < 0 ? find_col(&r, time_cols) : -1;
	if (rc <= 0 || (sc < 0 && tc < 0)) {    /* empty, or not per step */
		export_csv_row_free(&r);
		fclose(in);
		return rc < 0 ? rc : 0;
	}
	struct out_file of;
	rc = out_file_open(&of, dir, name);
	int failed = 0;
	if (!rc)
		failed |= fwrite(r.raw, 1, r.rawlen, of.f) != r.rawlen;
	while (rc == 0 && (rc = export_csv_read(in, &r)) == 1) {
		rc = 0;
		int col = sc >= 0 ? sc : tc;
		const char *v = (size_t)col < r.n ? r.buf + r.off[col] : "";
		int keep = sc >= 0 ? in_list(sel, nsel, v) : in_spans(spans, nspans, sel, nsel, v);
		if (keep)
			failed |= fwrite(r.raw, 1, r.rawlen, of.f) != r.rawlen;
	}
	if (rc < 0) {
		if (of.f)
			out_file_abort(&of);
	} else {
		rc = out_file_commit(&of, failed);
	}
	export_csv_row_free(&r);
	fclose(in);
	return rc;
}

static int is_csv(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return n > 4 && strcmp(d->d_name + n - 4, ".csv") == 0;
}

int export_csv_list(const char *dir, struct dirent ***list)
{
	int n = scandir(dir, list, is_csv, alphasort);
	return n < 0 ? -errno : n;
}

int export_csv_filter(const char *dir, const struct export_span *spans, size_t nspans,
		      const uint64_t *sel, size_t nsel)
{
	struct dirent **list;
	int n = export_csv_list(dir, &list), rc = n < 0 ? n : 0;
	for (int i = 0; i < n; i++) {
		if (!rc)
			rc = filter_one(dir, list[i]->d_name, spans, nspans, sel, nsel);
		free(list[i]);
	}
	if (n >= 0)
		free(list);
	return rc;
}

int export_drop_text(const char *dir)
{
	struct dirent **list;
	int n = export_csv_list(dir, &list), rc = n < 0 ? n : 0;
	for (int i = 0; i < n; i++) {
		char *p = fs_join(dir, list[i]->d_name);
		if (p && unlink(p) != 0 && !rc)
			rc = -errno;
		free(p);
		free(list[i]);
	}
	if (n >= 0)
		free(list);
	char *t = fs_join(dir, "trace_view.json");
	if (t && unlink(t) != 0 && errno != ENOENT && !rc)
		rc = -errno;
	free(t);
	return rc;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path) != 0 ? -1 : 0;
}

int export_remove_tree(const char *path)
{
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0 ? -errno : 0;
}

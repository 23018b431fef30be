#include "ingest/parse_rank.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "raw/raw_format.h"
#include "raw/raw_reader.h"

/* The PROCESS record comes among the first records of its stream. */
#define RANK_SCAN_RECORDS 1024

/* The rank a stream's PROCESS record names: >= 0, -1 when it names none,
 * -2 when the stream has no PROCESS record near its start. */
static int64_t stream_rank(const char *path)
{
	struct raw_file f;
	struct raw_cursor c;
	struct raw_rec r;
	int64_t rank = -2;
	if (raw_file_open(&f, path, NULL, NULL, 0) != 0)
		return -2;
	raw_cursor_init(&c, &f, 0);   /* a quiet cursor ignores strings; f.log is NULL */
	for (int k = 0; k < RANK_SCAN_RECORDS && rank == -2; k++) {
		enum raw_next n = raw_cursor_next(&c, &r);
		if (n == RAW_NEXT_END)
			break;
		if (n != RAW_NEXT_RECORD || r.type != RAW_REC_PROCESS || r.len < sizeof(struct raw_process))
			continue;
		struct raw_process p;
		memcpy(&p, r.payload, sizeof p);
		const char *t = p.rank_id ? raw_cursor_name(&c, p.rank_id) : NULL;
		char *end;
		long v = t && *t ? strtol(t, &end, 10) : -1;
		rank = t && *t && *end == '\0' && v >= 0 && v <= 0x7fffffff ? v : -1;
	}
	raw_cursor_free(&c);
	raw_file_close(&f);
	return rank;
}

static int same_image(const struct parse_src *a, const struct parse_src *b)
{
	return a->launcher == b->launcher && a->pid == b->pid && a->n == b->n;
}

/* The stream the agent writes when the program names the rank late, in
 * init_process_group (platform/agent/agent_rank.c). */
#define LATE_RANK_STREAM "rank.raw"

static int is_late_rank(const struct parse_src *src)
{
	const char *base = strrchr(src->path, '/');
	return strcmp(base ? base + 1 : src->path, LATE_RANK_STREAM) == 0;
}

/* The rank of the image whose first source is s->v[i]: rank.raw's, or
 * else the first PROCESS record's (which names none when the launcher
 * set no rank). */
static int64_t image_rank(const struct parse_srcs *s, size_t i)
{
	if (s->v[i].launcher)
		return -1;
	size_t end = i;
	while (end < s->n && same_image(&s->v[i], &s->v[end]))
		end++;
	for (size_t j = i; j < end; j++)
		if (is_late_rank(&s->v[j])) {
			int64_t r = stream_rank(s->v[j].path);
			if (r >= 0)
				return r;
		}
	for (size_t j = i; j < end; j++) {
		int64_t r = stream_rank(s->v[j].path);
		if (r != -2)
			return r;
	}
	return -1;
}

int parse_src_ranks(const struct parse_srcs *s, int64_t **ranks)
{
	int64_t *v = malloc((s->n ? s->n : 1) * sizeof *v);
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		v[i] = i && same_image(&s->v[i - 1], &s->v[i]) ? v[i - 1] : image_rank(s, i);
	*ranks = v;
	return 0;
}

int parse_srcs_keep_rank(struct parse_srcs *s, int64_t rank)
{
	int64_t *ranks;
	int rc = parse_src_ranks(s, &ranks);
	if (rc)
		return rc;
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].launcher || ranks[i] == rank) {
			s->v[k++] = s->v[i];
			continue;
		}
		free(s->v[i].path);
		free(s->v[i].image);
	}
	s->n = k;
	free(ranks);
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int64_t parse_raw_pid_rank(const char *raw_dir, long pid)
{
	struct parse_srcs s;
	int64_t *ranks, rank = -1;
	long image = -1;
	if (parse_discover(raw_dir, &s, NULL) != 0)
		return -1;
	if (parse_src_ranks(&s, &ranks) == 0) {
		for (size_t i = 0; i < s.n; i++)
			if (!s.v[i].launcher && s.v[i].pid == pid && s.v[i].n >= image) {
				image = s.v[i].n;
				rank = ranks[i];
			}
		free(ranks);
	}
	parse_srcs_free(&s);
	return rank;
}

int parse_raw_ranks(const char *raw_dir, int64_t **out, size_t *n)
{
	struct parse_srcs s;
	int64_t *ranks;
	*out = NULL;
	*n = 0;
	int rc = parse_discover(raw_dir, &s, NULL);
	if (rc)
		return rc;
	if ((rc = parse_src_ranks(&s, &ranks)) != 0) {
		parse_srcs_free(&s);
		return rc;
	}
	size_t k = 0;
	for (size_t i = 0; i < s.n; i++)
		if (ranks[i] >= 0)
			ranks[k++] = ranks[i];
	qsort(ranks, k, sizeof *ranks, cmp_i64);
	size_t m = 0;
	for (size_t i = 0; i < k; i++)
		if (m == 0 || ranks[m - 1] != ranks[i])
			ranks[m++] = ranks[i];
	parse_srcs_free(&s);
	if (m == 0) {
		free(ranks);
		return 0;
	}
	*out = ranks;
	*n = m;
	return 0;
}

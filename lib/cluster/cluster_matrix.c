/*
 * cluster_communication_matrix.json: the ranks' communication_matrix.json
 * merged, group-local ranks mapped to global ones, keyed as msprof-analyze
 * keys it: {"(r0, r1, ...)": {"step<N>": {"<type>-<agg>@<group>":
 * {"<global src>-<global dst>": {...}}}}}.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster.h"
#include "common/fsutil.h"
#include "common/idmap.h"
#include "common/json_out.h"
#include "common/strbuf.h"
#include "outputs/out_file.h"

struct group {
	char *name;
	int *ranks;
	size_t n;
};

struct groups {
	struct group *v;
	size_t n, cap;
};

static void groups_free(struct groups *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->v[i].name);
		free(g->v[i].ranks);
	}
	free(g->v);
	memset(g, 0, sizeof *g);
}

static const struct group *groups_find(const struct groups *g, const char *name, size_t len)
{
	for (size_t i = 0; i < g->n; i++)
		if (strlen(g->v[i].name) == len && memcmp(g->v[i].name, name, len) == 0)
			return &g->v[i];
	return NULL;
}

/* The string value of `"key"` on a line, up to its closing quote (group
 * names and rank lists hold no escaped quote); with or without spaces
 * around the colon, as traces of earlier versions have them. */
static const char *str_arg(const char *line, const char *key, size_t *len)
{
	const char *p = strstr(line, key);
	if (!p)
		return NULL;
	p += strlen(key);
	p += strspn(p, " ");
	if (*p++ != ':')
		return NULL;
	p += strspn(p, " ");
	if (*p++ != '"')
		return NULL;
	const char *q = strchr(p, '"');
	if (!q)
		return NULL;
	*len = (size_t)(q - p);
	return p;
}

static void groups_add(struct groups *g, const char *name, size_t nlen,
		       const char *ranks, size_t rlen)
{
	if (groups_find(g, name, nlen))
		return;
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 8;
		struct group *v = realloc(g->v, cap * sizeof *v);
		if (!v)
			return;
		g->v = v;
		g->cap = cap;
	}
	struct group *e = &g->v[g->n];
	e->name = strndup(name, nlen);
	e->ranks = malloc((rlen / 2 + 1) * sizeof *e->ranks);
	e->n = 0;
	if (!e->name || !e->ranks) {
		free(e->name);
		free(e->ranks);
		return;
	}
	for (size_t i = 0; i < rlen;) {
		if (ranks[i] >= '0' && ranks[i] <= '9') {
			long v = 0;
			while (i < rlen && ranks[i] >= '0' && ranks[i] <= '9' && v < 0x7fffffff)
				v = v * 10 + (ranks[i++] - '0');
			e->ranks[e->n++] = (int)v;
		} else {
			i++;
		}
	}
	g->n++;
}

/* The process groups' rank lists, from the collectives of trace_view.json
 * (one event per line). */
static void read_groups(const char *run_dir, struct groups *g)
{
	char *p = fs_join(run_dir, "PROFILER_OUTPUT/trace_view.json");
	FILE *f = p ? fopen(p, "r") : NULL;
	free(p);
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		size_t nl, rl;
		const char *name = str_arg(line, "\"Process Group Name\"", &nl);
		const char *ranks = str_arg(line, "\"Process Group Ranks\"", &rl);
		if (name && ranks)
			groups_add(g, name, nl, ranks, rl);
	}
	free(line);
	fclose(f);
}

/* The merged tree's members by (parent, name): cJSON finds a member by
 * scanning its parent, which made a long job's merge quadratic (a group
 * holds a member a step, an op one a rank). Entries of one hash are
 * chained (parse_idmap's way); when memory runs out the index is
 * dropped and cJSON's scan used, slow but right. */
struct members {
	struct parse_idmap map;
	struct member { const cJSON *parent, *child; size_t next; } *v;
	size_t n, cap;
	int off;
};

static uint64_t member_hash(const cJSON *parent, const char *name)
{
	return parse_idmap_hash2((uint64_t)(uintptr_t)parent,
				 parse_idmap_hash_text(PARSE_IDMAP_TEXT0, name));
}

static cJSON *member_get(struct members *m, cJSON *parent, const char *name)
{
	if (m->off)
		return cJSON_GetObjectItemCaseSensitive(parent, name);
	for (size_t i = parse_idmap_pos(&m->map, member_hash(parent, name)); i;
	     i = m->v[i - 1].next)
		if (m->v[i - 1].parent == parent && strcmp(m->v[i - 1].child->string, name) == 0)
			return (cJSON *)m->v[i - 1].child;
	return NULL;
}

static void member_add(struct members *m, const cJSON *parent, const cJSON *child)
{
	uint64_t h = member_hash(parent, child->string);
	if (!m->off && m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		struct member *v = realloc(m->v, cap * sizeof *v);
		m->off = !v;
		m->v = v ? v : m->v;
		m->cap = v ? cap : m->cap;
	}
	if (m->off)
		return;
	m->v[m->n] = (struct member){ parent, child, parse_idmap_pos(&m->map, h) };
	m->off = parse_idmap_put_pos(&m->map, h, m->n) != 0;
	m->n++;
}

static void members_free(struct members *m)
{
	parse_idmap_free(&m->map);
	free(m->v);
}

static cJSON *child_obj(struct members *m, cJSON *parent, const char *key)
{
	cJSON *o = member_get(m, parent, key);
	if (!o && (o = cJSON_AddObjectToObject(parent, key)))
		member_add(m, parent, o);
	return o;
}

static void merge_rank(cJSON *out, const struct cluster_rank *r, const cJSON *m,
		       const struct groups *g, struct members *idx)
{
	const cJSON *step, *kind, *op, *link;
	cJSON_ArrayForEach(step, m) {
		cJSON_ArrayForEach(kind, step) {
			cJSON_ArrayForEach(op, kind) {
				const char *at = strrchr(op->string, '@');
				const char *gname = at ? at + 1 : "";
				const struct group *gr = groups_find(g, gname, strlen(gname));
				struct strbuf key = STRBUF_INIT;
				if (gr) {
					sb_putc(&key, '(');
					for (size_t i = 0; i < gr->n; i++)
						sb_printf(&key, "%s%d", i ? ", " : "", gr->ranks[i]);
					sb_putc(&key, ')');
				} else {
					sb_printf(&key, "(group %s)", gname);
				}
				cJSON *o = key.buf ? child_obj(idx, out, key.buf) : NULL;
				sb_free(&key);
				o = o ? child_obj(idx, o, step->string) : NULL;
				o = o ? child_obj(idx, o, op->string) : NULL;
				if (!o)
					continue;
				cJSON_ArrayForEach(link, op) {
					long a, b;
					char buf[64];
					if (sscanf(link->string, "%ld-%ld", &a, &b) == 2) {
						if (gr && a >= 0 && (size_t)a < gr->n)
							a = gr->ranks[a];
						if (gr && b >= 0 && (size_t)b < gr->n)
							b = gr->ranks[b];
						snprintf(buf, sizeof buf, "%ld-%ld", a, b);
					} else {
						snprintf(buf, sizeof buf, "%.60s", link->string);
					}
					if (member_get(idx, o, buf))
						continue; /* the first rank's (the sender's) wins */
					cJSON *dup = cJSON_Duplicate(link, 1);
					if (dup && cJSON_AddItemToObject(o, buf, dup))
						member_add(idx, o, dup);
					else
						cJSON_Delete(dup);
				}
			}
		}
	}
	(void)r;
}

/* As jo_cjson, with numbers as the ranks' files print them: bandwidths and
 * ratios with four decimals, times and sizes with six. */
static void emit(struct jo *j, const cJSON *v)
{
	const cJSON *e;
	if (cJSON_IsObject(v)) {
		jo_obj_begin(j);
		cJSON_ArrayForEach(e, v) {
			jo_key(j, e->string);
			emit(j, e);
		}
		jo_obj_end(j);
	} else if (cJSON_IsNumber(v)) {
		int four = v->string && (strstr(v->string, "Bandwidth") || strstr(v->string, "Ratio"));
		jo_fixed(j, v->valuedouble, four ? 4 : 6);
	} else {
		jo_cjson(j, v);
	}
}

int cluster_write_matrix(const char *out_dir, const struct cluster *c, FILE *log)
{
	cJSON *out = cJSON_CreateObject();
	struct members idx = { 0 };
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		const struct cluster_rank *r = &c->ranks[i];
		char *p = fs_join(r->dir, "PROFILER_OUTPUT/communication_matrix.json"), *text = NULL;
		size_t len;
		if (!p || fs_read_file(p, &text, &len) != 0) {
			fprintf(log, "prof parse: %s: no communication_matrix.json\n", r->dir);
			free(p);
			continue;
		}
		cJSON *m = cJSON_ParseWithLength(text, len);
		if (!cJSON_IsObject(m)) {
			fprintf(log, "prof parse: %s: communication_matrix.json does not parse\n",
				r->dir);
		} else if (cJSON_GetArraySize(m) > 0) {
			struct groups g = { 0 };
			read_groups(r->dir, &g);
			merge_rank(out, r, m, &g, &idx);
			groups_free(&g);
		}
		cJSON_Delete(m);
		free(text);
		free(p);
	}
	members_free(&idx);
	struct out_file of;
	int rc = out_file_open(&of, out_dir, "cluster_communication_matrix.json");
	if (rc) {
		cJSON_Delete(out);
		return rc;
	}
	struct jo j;
	jo_init_file(&j, of.f, 4);
	emit(&j, out);
	int err = jo_finish(&j);
	if (!err && fputc('\n', of.f) == EOF)
		err = 1;
	cJSON_Delete(out);
	return out_file_commit(&of, err);
}

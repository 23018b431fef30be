#include "ingest/parse_discover.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/agent_env.h"
#include "common/fsutil.h"

int parse_image_name(const char *s, long *pid, long *n)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	*pid = strtol(s, &end, 10);
	*n = 0;
	if (*end == '\0')
		return 0;
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return -1;
	*n = strtol(end + 1, &end, 10);
	return *end == '\0' ? 0 : -1;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int add(struct parse_srcs *s, const char *dir, const char *file,
	       const char *image, long pid, long n, int launcher)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct parse_src *v = realloc(s->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	struct parse_src *p = &s->v[s->n];
	p->path = fs_join(dir, file);
	p->image = strdup(image);
	if (!p->path || !p->image) {
		free(p->path);
		free(p->image);
		return -ENOMEM;
	}
	p->pid = pid;
	p->n = n;
	p->launcher = launcher;
	s->n++;
	return 0;
}

static int scan_image(struct parse_srcs *s, const char *raw_dir, const char *image,
		      long pid, long n, int launcher)
{
	char *dir = fs_join(raw_dir, image);
	DIR *d = dir ? opendir(dir) : NULL;
	int rc = 0;
	if (!d) {
		/* a file of an image's name, or one gone since: not an image */
		rc = !dir ? -ENOMEM : errno == ENOTDIR || errno == ENOENT ? 0 : -errno;
		free(dir);
		return rc;
	}
	struct dirent *e;
	while (rc == 0 && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && ends_with(e->d_name, ".raw"))
			rc = add(s, dir, e->d_name, image, pid, n, launcher);
	closedir(d);
	free(dir);
	return rc;
}

static int src_cmp(const void *pa, const void *pb)
{
	const struct parse_src *a = pa, *b = pb;
	if (a->launcher != b->launcher)
		return a->launcher - b->launcher;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	return strcmp(a->path, b->path);
}

int parse_discover(const char *raw_dir, struct parse_srcs *out, FILE *log)
{
	memset(out, 0, sizeof *out);
	DIR *d = opendir(raw_dir);
	if (!d)
		return -errno;
	struct dirent *e;
	int rc = 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		long pid, n;
		if (strcmp(e->d_name, PROF_LAUNCHER_STREAMS) == 0)
			rc = scan_image(out, raw_dir, e->d_name, -1, 0, 1);
		else if (parse_image_name(e->d_name, &pid, &n) == 0)
			rc = scan_image(out, raw_dir, e->d_name, pid, n, 0);
	}
	closedir(d);
	if (rc) {
		parse_srcs_free(out);
		return rc;
	}
	if (out->n)
		qsort(out->v, out->n, sizeof *out->v, src_cmp);
	return 0;
}

void parse_srcs_free(struct parse_srcs *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].image);
	}
	free(s->v);
	memset(s, 0, sizeof *s);
}

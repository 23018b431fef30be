#define _GNU_SOURCE
#include "launcher/embed_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"

/* What a step gave: done, worth trying the next place (read-only, no
 * room), or refused (a message was printed; stop). */
enum { CACHE_OK = 0, CACHE_SOFT = 1, CACHE_REFUSED = -1 };

struct cache_err {
	char where[4096];  /* the directory that failed softly, for the note */
	int err;
};

const struct embed_table *embed_table(void)
{
	return &prof_embed && prof_embed.n ? &prof_embed : NULL;
}

static bool soft_errno(int e)
{
	return e == EROFS || e == EACCES || e == EPERM || e == ENOSPC || e == EDQUOT ||
	       e == ENOENT || e == ENOTDIR;
}

/* The directory `name` in `dirfd` (`path` for messages), made 0700 when
 * missing and opened without following a link: one we did not make or
 * that others could change is refused. A descriptor, or -1 with *rc set. */
static int cache_dir(int dirfd, const char *name, const char *path, struct cache_err *ce,
		     int *rc)
{
	if (mkdirat(dirfd, name, 0700) != 0 && errno != EEXIST) {
		snprintf(ce->where, sizeof ce->where, "%s", path);
		ce->err = errno;
		*rc = soft_errno(errno) ? CACHE_SOFT : CACHE_REFUSED;
		if (*rc == CACHE_REFUSED)
			fprintf(stderr, "prof: cache directory %s: %s\n", path, strerror(errno));
		return -1;
	}
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) &&
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		fprintf(stderr, "prof: cache directory %s is %s: refused (remove it)\n", path,
			S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory");
		*rc = CACHE_REFUSED;
		return -1;
	}
	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "prof: cache directory %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		*rc = CACHE_REFUSED;
		return -1;
	}
	const char *why = NULL;
	if (st.st_uid != geteuid())
		why = "is owned by another user";
	else if (st.st_mode & 022)
		why = "can be written by others";
	if (why) {
		fprintf(stderr, "prof: cache directory %s %s (uid %u, mode %03o): refused\n", path,
			why, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
		close(fd);
		*rc = CACHE_REFUSED;
		return -1;
	}
	return fd;
}

/* Opens the directory holding `f` under the root, making what is missing;
 * *base is the file's own name. */
static int cache_file_dir(int rootfd, const char *root, const struct embed_file *f,
			  const char **base, struct cache_err *ce, int *rc)
{
	int fd = dup(rootfd);
	const char *p = f->path;
	const char *slash;
	while (fd >= 0 && (slash = strchr(p, '/'))) {
		char name[256], path[4096];
		snprintf(name, sizeof name, "%.*s", (int)(slash - p), p);
		snprintf(path, sizeof path, "%s/%.*s", root, (int)(slash - f->path), f->path);
		int sub = cache_dir(fd, name, path, ce, rc);
		close(fd);
		fd = sub;
		p = slash + 1;
	}
	*base = p;
	return fd;
}

/* 1 when `name` in `dirfd` is a regular file of ours with f's hash, 0 when
 * it is missing, -1 when it is there but different (changed, truncated, a
 * link, someone else's). */
static int cache_file_ok(int dirfd, const char *name, const struct embed_file *f)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	struct stat st;
	int ok = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    (size_t)st.st_size == f->size) {
		struct sha256 s;
		sha256_init(&s);
		unsigned char buf[65536];
		ssize_t n;
		size_t total = 0;
		while ((n = read(fd, buf, sizeof buf)) > 0) {
			sha256_update(&s, buf, (size_t)n);
			total += (size_t)n;
		}
		uint8_t h[SHA256_LEN];
		sha256_final(&s, h);
		if (n == 0 && total == f->size && memcmp(h, f->sha256, SHA256_LEN) == 0)
			ok = 1;
	}
	close(fd);
	return ok;
}

/* Writes f under a temporary name of its own (O_EXCL: never through a
 * link, never another process's) and renames it over `name`. */
static int cache_file_write(int dirfd, const char *name, const struct embed_file *f)
{
	char tmp[300];
	int fd = -1;
	for (unsigned i = 0; fd < 0 && i < 100; i++) {
		snprintf(tmp, sizeof tmp, ".%s.%ld.%u.tmp", name, (long)getpid(), i);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	int rc = fs_write_all(fd, f->data, f->size);
	if (rc == 0 && fchmod(fd, f->mode & 0700) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && renameat(dirfd, tmp, dirfd, name) != 0)
		rc = -errno;
	if (rc)
		unlinkat(dirfd, tmp, 0);
	return rc;
}

/* Every file in place under rootfd: checked first without the lock (the
 * common case: all there), then the missing or different ones written
 * under it, each checked again once the lock is held, since another
 * process may have written it meanwhile. */
static int cache_fill(const struct embed_table *t, int rootfd, const char *root,
		      struct cache_err *ce)
{
	int lockfd = -1, rc = CACHE_OK;
	for (size_t i = 0; i < t->n && rc == CACHE_OK; i++) {
		const struct embed_file *f = &t->files[i];
		const char *name;
		int dfd = cache_file_dir(rootfd, root, f, &name, ce, &rc);
		if (dfd < 0)
			break;
		int ok = cache_file_ok(dfd, name, f);
		if (ok != 1 && lockfd < 0) {
			lockfd = openat(rootfd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (lockfd < 0 || flock(lockfd, LOCK_EX) != 0) {
				snprintf(ce->where, sizeof ce->where, "%s/.lock", root);
				ce->err = errno;
				rc = CACHE_SOFT;
				close(dfd);
				break;
			}
			ok = cache_file_ok(dfd, name, f);
		}
		if (ok == -1)
			fprintf(stderr, "prof: cache file %s/%s differs from the one built in "
				"(changed or truncated): replaced\n", root, f->path);
		if (ok != 1) {
			int w = cache_file_write(dfd, name, f);
			if (w) {
				snprintf(ce->where, sizeof ce->where, "%s/%s", root, f->path);
				ce->err = -w;
				rc = CACHE_SOFT;
			}
		}
		close(dfd);
	}
	if (lockfd >= 0)
		close(lockfd);  /* releases the flock */
	return rc;
}

/* One place to try: `parent` (made when missing, links allowed: it is the
 * user's own) holding `profdir` (ours: refused when a link or another's). */
static int cache_try(const struct embed_table *t, const char *parent, const char *profdir,
		     char **root, struct cache_err *ce)
{
	int rc = CACHE_SOFT;
	fs_mkdir_p(parent);
	int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		snprintf(ce->where, sizeof ce->where, "%.4000s", parent);
		ce->err = errno;
		return CACHE_SOFT;
	}
	char *profpath = fs_join(parent, profdir);
	char *rootpath = profpath ? fs_join(profpath, t->build_id) : NULL;
	int dfd = -1, rootfd = -1;
	if (!rootpath)
		goto out;
	if ((dfd = cache_dir(pfd, profdir, profpath, ce, &rc)) < 0)
		goto out;
	if ((rootfd = cache_dir(dfd, t->build_id, rootpath, ce, &rc)) < 0)
		goto out;
	rc = cache_fill(t, rootfd, rootpath, ce);
	if (rc == CACHE_OK) {
		*root = rootpath;
		rootpath = NULL;
	}
out:
	if (rootfd >= 0)
		close(rootfd);
	if (dfd >= 0)
		close(dfd);
	close(pfd);
	free(rootpath);
	free(profpath);
	return rc;
}

int embed_cache_root(const struct embed_table *t, const char *base, char **root)
{
	char places[3][4096], profdirs[3][64];
	int n = 0;
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (base) {
		snprintf(places[n], sizeof places[n], "%s", base);
		snprintf(profdirs[n++], sizeof profdirs[0], "prof");
	} else {
		if (xdg && xdg[0] == '/') {
			snprintf(places[n], sizeof places[n], "%s", xdg);
			snprintf(profdirs[n++], sizeof profdirs[0], "prof");
		}
		if (home && home[0] == '/') {
			snprintf(places[n], sizeof places[n], "%s/.cache", home);
			snprintf(profdirs[n++], sizeof profdirs[0], "prof");
		}
		const char *tmp = getenv("TMPDIR");
		snprintf(places[n], sizeof places[n], "%s", tmp && tmp[0] == '/' ? tmp : "/tmp");
		snprintf(profdirs[n++], sizeof profdirs[0], "prof-%u", (unsigned)geteuid());
	}
	struct cache_err ce = { "", 0 };
	for (int i = 0; i < n; i++) {
		int rc = cache_try(t, places[i], profdirs[i], root, &ce);
		if (rc == CACHE_OK)
			return 0;
		if (rc == CACHE_REFUSED)
			return -1;
		if (i + 1 < n)
			fprintf(stderr, "prof: cache: cannot use %s (%s); trying %s\n", ce.where,
				strerror(ce.err), places[i + 1]);
	}
	fprintf(stderr, "prof: cannot unpack the embedded agent and Python files: %s: %s\n",
		ce.where, strerror(ce.err));
	return -1;
}

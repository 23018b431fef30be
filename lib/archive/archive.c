/*
 * Run-directory archives: pack and safe extraction with libarchive,
 * streaming in ARC_BUF-sized blocks. See archive.h.
 */
#define _GNU_SOURCE
#include "archive/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"

#define ARC_BUF (64 * 1024)
#define ARC_MAX_DEPTH 64
#define ARC_MAX_PATH 4096

static enum arc_status arc_fail(struct arc_error *err, enum arc_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum arc_status arc_fail(struct arc_error *err, enum arc_status st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return st;
}

static const struct { const char *name; enum arc_format f; } arc_names[] = {
	{ "none", ARC_NONE }, { "tar.gz", ARC_TAR_GZ }, { "tgz", ARC_TAR_GZ },
	{ "tar.zst", ARC_TAR_ZST }, { "zip", ARC_ZIP },
};

int arc_format_from_name(const char *name, enum arc_format *out)
{
	for (size_t i = 0; i < sizeof arc_names / sizeof arc_names[0]; i++)
		if (strcmp(name, arc_names[i].name) == 0) {
			*out = arc_names[i].f;
			return 0;
		}
	return -1;
}

const char *arc_format_ext(enum arc_format f)
{
	switch (f) {
	case ARC_TAR_GZ: return "tar.gz";
	case ARC_TAR_ZST: return "tar.zst";
	case ARC_ZIP: return "zip";
	case ARC_NONE: break;
	}
	return "";
}

static const char *arc_exts[] = { ".tar.gz", ".tgz", ".tar.zst", ".zip" };

/* Length of the archive extension `path` ends in, 0 if none. */
static size_t arc_ext_len(const char *path)
{
	size_t n = strlen(path);
	for (size_t i = 0; i < sizeof arc_exts / sizeof arc_exts[0]; i++) {
		size_t m = strlen(arc_exts[i]);
		if (n > m && strcmp(path + n - m, arc_exts[i]) == 0)
			return m;
	}
	return 0;
}

int arc_is_archive_name(const char *path)
{
	return arc_ext_len(path) != 0;
}

/* ---- pack ---- */

struct pack_ctx {
	struct archive *a;
	struct archive_entry *e;
	char *buf;
	uint64_t skipped;
	struct arc_error *err;
	const char *run_dir;
};

static int name_cmp(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The names in the directory `dfd`, sorted (so archives are reproducible). */
static int list_dir(int dfd, char ***names, size_t *count)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	rewinddir(d);
	char **v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			char **nv = realloc(v, cap * sizeof *v);
			if (!nv) { rc = -ENOMEM; break; }
			v = nv;
		}
		if (!(v[n] = strdup(de->d_name))) { rc = -ENOMEM; break; }
		n++;
	}
	closedir(d);
	if (rc) {
		while (n)
			free(v[--n]);
		free(v);
		return rc;
	}
	if (n)   /* v is NULL for an empty directory */
		qsort(v, n, sizeof *v, name_cmp);
	*names = v;
	*count = n;
	return 0;
}

static int pack_header(struct pack_ctx *p, const char *rel, const struct stat *st)
{
	archive_entry_clear(p->e);
	archive_entry_set_pathname(p->e, rel);
	archive_entry_set_filetype(p->e, S_ISDIR(st->st_mode) ? AE_IFDIR : AE_IFREG);
	archive_entry_set_perm(p->e, st->st_mode & 07777);
	archive_entry_set_size(p->e, S_ISREG(st->st_mode) ? st->st_size : 0);
	archive_entry_set_mtime(p->e, st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
	archive_entry_set_uid(p->e, st->st_uid);
	archive_entry_set_gid(p->e, st->st_gid);
	if (archive_write_header(p->a, p->e) < ARCHIVE_WARN) {
		arc_fail(p->err, ARC_IO, "%s: cannot write the archive entry %s: %s", p->run_dir,
			 rel, archive_error_string(p->a));
		return -1;
	}
	return 0;
}

static int pack_file(struct pack_ctx *p, int dfd, const char *name, const char *rel)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		arc_fail(p->err, ARC_IO, "%s: cannot read %s: %s", p->run_dir, rel, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	int rc = pack_header(p, rel, &st);
	uint64_t left = (uint64_t)st.st_size;
	while (!rc && left) {
		ssize_t n = read(fd, p->buf, left < ARC_BUF ? left : ARC_BUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			arc_fail(p->err, ARC_IO, "%s: cannot read %s: %s", p->run_dir, rel,
				 strerror(errno));
			rc = -1;
		} else if (n == 0) {
			break;   /* shrank while read: libarchive pads the entry */
		} else if (archive_write_data(p->a, p->buf, (size_t)n) != n) {
			arc_fail(p->err, ARC_IO, "%s: cannot write %s into the archive: %s",
				 p->run_dir, rel, archive_error_string(p->a));
			rc = -1;
		} else {
			left -= (uint64_t)n;
		}
	}
	close(fd);
	return rc;
}

static int pack_tree(struct pack_ctx *p, int dfd, const char *rel, int depth)
{
	if (depth > ARC_MAX_DEPTH) {
		arc_fail(p->err, ARC_IO, "%s: %s: directories nested too deep", p->run_dir, rel);
		return -1;
	}
	char **names;
	size_t n;
	int rc = list_dir(dfd, &names, &n);
	if (rc) {
		arc_fail(p->err, ARC_IO, "%s: cannot list %s: %s", p->run_dir, rel, strerror(-rc));
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char sub[ARC_MAX_PATH];
		struct stat st;
		if (rc)
			goto next;
		if ((size_t)snprintf(sub, sizeof sub, "%s/%s", rel, names[i]) >= sizeof sub) {
			p->skipped++;
			goto next;
		}
		if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno != ENOENT) {
				arc_fail(p->err, ARC_IO, "%s: cannot stat %s: %s", p->run_dir, sub,
					 strerror(errno));
				rc = -1;
			}
			goto next;
		}
		if (S_ISREG(st.st_mode)) {
			rc = pack_file(p, dfd, names[i], sub);
		} else if (S_ISDIR(st.st_mode)) {
			int cfd = openat(dfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd < 0) {
				arc_fail(p->err, ARC_IO, "%s: cannot open %s: %s", p->run_dir, sub,
					 strerror(errno));
				rc = -1;
				goto next;
			}
			rc = pack_header(p, sub, &st);
			if (!rc)
				rc = pack_tree(p, cfd, sub, depth + 1);
			close(cfd);
		} else {
			p->skipped++;   /* links, FIFOs, sockets: not part of a run */
		}
next:
		free(names[i]);
	}
	free(names);
	return rc;
}

/* `run_dir` without trailing slashes, and its last component. */
static char *clean_dir(const char *run_dir, const char **base)
{
	char *d = strdup(run_dir);
	if (!d)
		return NULL;
	size_t n = strlen(d);
	while (n > 1 && d[n - 1] == '/')
		d[--n] = '\0';
	const char *b = strrchr(d, '/');
	b = b ? b + 1 : d;
	if (!*b || strcmp(b, ".") == 0 || strcmp(b, "..") == 0) {
		char *r = realpath(d, NULL);
		free(d);
		if (!r)
			return NULL;
		d = r;
		b = strrchr(d, '/');
		b = b ? b + 1 : d;
	}
	*base = b;
	return d;
}

static enum arc_status pack_open(struct archive *a, enum arc_format f, struct arc_error *err)
{
	int rc;
	if (f == ARC_ZIP) {
		rc = archive_write_set_format_zip(a);
	} else {
		rc = archive_write_set_format_pax_restricted(a);
		if (rc == ARCHIVE_OK && f == ARC_TAR_GZ)
			rc = archive_write_add_filter_gzip(a);
		else if (rc == ARCHIVE_OK && archive_write_add_filter_zstd(a) != ARCHIVE_OK)
			return arc_fail(err, ARC_UNSUPPORTED, "this prof's libarchive (%s) has no "
					"zstd compression: use --archive tar.gz or zip",
					archive_version_string());
	}
	if (rc != ARCHIVE_OK)
		return arc_fail(err, ARC_UNSUPPORTED, "libarchive (%s) cannot write %s: %s",
				archive_version_string(), arc_format_ext(f), archive_error_string(a));
	archive_write_set_bytes_in_last_block(a, 1);
	return ARC_OK;
}

/* The archive's name and the temporary name it is written under: 0, or
 * -1 (out of memory; what was made is the caller's to free). */
static int pack_names(const char *dir, enum arc_format f, char **out, char **tmp)
{
	if (asprintf(out, "%s.%s", dir, arc_format_ext(f)) < 0) {
		*out = NULL;
		return -1;
	}
	if (asprintf(tmp, "%s.%ld.tmp", *out, (long)getpid()) < 0) {
		*tmp = NULL;
		return -1;
	}
	return 0;
}

/* Opens the run directory (*dfd) and readies libarchive for format `f`. */
static enum arc_status pack_start(struct pack_ctx *p, enum arc_format f, int *dfd)
{
	*dfd = open(p->run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*dfd < 0)
		return arc_fail(p->err, ARC_IO, "%s: cannot open the run directory: %s",
				p->run_dir, strerror(errno));
	p->a = archive_write_new();
	p->e = archive_entry_new();
	p->buf = malloc(ARC_BUF);
	if (!p->a || !p->e || !p->buf)
		return arc_fail(p->err, ARC_IO, "out of memory");
	return pack_open(p->a, f, p->err);
}

static enum arc_status pack_create(const char *tmp, int *ofd, struct arc_error *err)
{
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, PROF_FILE_MODE);
	if (fd >= 0 && fchmod(fd, PROF_FILE_MODE) != 0) {   /* past the umask */
		int e = errno;
		close(fd);
		fd = -1;
		errno = e;
	}
	if (fd < 0)
		return arc_fail(err, ARC_IO, "%s: cannot create: %s", tmp, strerror(errno));
	*ofd = fd;
	return ARC_OK;
}

/* The whole archive of the directory `dfd` through `ofd`, closed. */
static enum arc_status pack_write(struct pack_ctx *p, int dfd, const char *base, int ofd,
				  const char *out)
{
	if (archive_write_open_fd(p->a, ofd) != ARCHIVE_OK)
		return arc_fail(p->err, ARC_IO, "%s: %s", out, archive_error_string(p->a));
	struct stat sb;
	if (fstat(dfd, &sb) != 0 || pack_header(p, base, &sb) || pack_tree(p, dfd, base, 0))
		return ARC_IO;
	if (archive_write_close(p->a) != ARCHIVE_OK)
		return arc_fail(p->err, ARC_IO, "%s: %s", out, archive_error_string(p->a));
	return ARC_OK;
}

/* Makes the written archive durable, then gives it its name. The caller
 * forgets `ofd` whatever this returns. */
static enum arc_status pack_commit(int ofd, const char *tmp, const char *out,
				   struct arc_error *err)
{
	int bad = fsync(ofd) != 0;
	int e = errno;
	if (close(ofd) != 0 && !bad) {   /* closed whatever fsync said */
		bad = 1;
		e = errno;
	}
	if (bad)
		return arc_fail(err, ARC_IO, "%s: %s", out, strerror(e));
	if (rename(tmp, out) != 0)
		return arc_fail(err, ARC_IO, "%s: cannot rename to %s: %s", tmp, out,
				strerror(errno));
	return ARC_OK;
}

enum arc_status arc_pack(const char *run_dir, enum arc_format f, char **out_path,
			 uint64_t *skipped, struct arc_error *err)
{
	*out_path = NULL;
	if (f == ARC_NONE)
		return arc_fail(err, ARC_UNSUPPORTED, "no archive format given");
	const char *base;
	char *dir = clean_dir(run_dir, &base);
	if (!dir)
		return arc_fail(err, ARC_IO, "%s: %s", run_dir, strerror(errno));
	enum arc_status st = ARC_OK;
	char *out = NULL, *tmp = NULL;
	int ofd = -1, dfd = -1;
	struct pack_ctx p = { .err = err, .run_dir = dir };
	if (pack_names(dir, f, &out, &tmp) != 0) {
		st = arc_fail(err, ARC_IO, "out of memory");
		goto done;
	}
	if ((st = pack_start(&p, f, &dfd)) || (st = pack_create(tmp, &ofd, err)) ||
	    (st = pack_write(&p, dfd, base, ofd, out)))
		goto done;
	st = pack_commit(ofd, tmp, out, err);
	ofd = -1;
	if (st == ARC_OK) {
		*out_path = out;
		out = NULL;
	}
done:
	if (p.a)
		archive_write_free(p.a);   /* closes nothing: the fd is ours */
	if (ofd >= 0)
		close(ofd);
	if (st != ARC_OK && tmp)
		unlink(tmp);
	if (dfd >= 0)
		close(dfd);
	if (skipped)
		*skipped = p.skipped;
	archive_entry_free(p.e);
	free(p.buf);
	free(tmp);
	free(out);
	free(dir);
	return st;
}

/* ---- extract ---- */

/* Removes everything under the directory `dfd` (which we created: only
 * directories and regular files). */
static void rm_under(int dfd, int depth)
{
	char **names;
	size_t n;
	if (depth > ARC_MAX_DEPTH + 2 || list_dir(dfd, &names, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (unlinkat(dfd, names[i], 0) != 0 && (errno == EISDIR || errno == EPERM)) {
			int cfd = openat(dfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd >= 0) {
				rm_under(cfd, depth + 1);
				close(cfd);
			}
			unlinkat(dfd, names[i], AT_REMOVEDIR);
		}
		free(names[i]);
	}
	free(names);
}

struct ext_ctx {
	struct archive *a;
	const char *archive;
	struct arc_error *err;
	struct arc_limits lim;
	int root;            /* the fresh directory */
	char *top;           /* the one top-level directory of the archive */
	uint64_t total;
	char *buf;
};

static enum arc_status refuse(struct ext_ctx *x, const char *entry, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum arc_status refuse(struct ext_ctx *x, const char *entry, const char *fmt, ...)
{
	char why[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	if (entry)
		return arc_fail(x->err, ARC_REFUSED, "%s: refused: entry \"%.200s\": %s",
				x->archive, entry, why);
	return arc_fail(x->err, ARC_REFUSED, "%s: refused: %s", x->archive, why);
}

static const char *type_name(mode_t t)
{
	switch (t) {
	case AE_IFLNK: return "a symbolic link";
	case AE_IFCHR: return "a character device";
	case AE_IFBLK: return "a block device";
	case AE_IFIFO: return "a FIFO";
	case AE_IFSOCK: return "a socket";
	default: return "an unknown file type";
	}
}

/* Splits `path` (modified) into components; refuses absolute paths, ".."
 * and empty names. Returns the count, or -1 (refused). */
static int split_path(struct ext_ctx *x, const char *name, char *path, char **comp, int max)
{
	if (path[0] == '/')
		return refuse(x, name, "an absolute path"), -1;
	int n = 0;
	char *save, *c;
	for (c = strtok_r(path, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0)
			return refuse(x, name, "a \"..\" component (would write outside "
				      "the extraction directory)"), -1;
		if (n == max)
			return refuse(x, name, "nested too deep"), -1;
		comp[n++] = c;
	}
	if (n == 0)
		return refuse(x, name, "an empty name"), -1;
	return n;
}

/* Opens (creating) the directories comp[0..n-1] under the root; returns
 * the last one's descriptor (the root's dup when n == 0), or -1. */
static int open_dirs(struct ext_ctx *x, const char *name, char **comp, int n,
		     enum arc_status *st)
{
	int fd = dup(x->root);
	if (fd < 0)
		*st = arc_fail(x->err, ARC_IO, "%s: %s", x->archive, strerror(errno));
	for (int i = 0; fd >= 0 && i < n; i++) {
		if (mkdirat(fd, comp[i], PROF_DIR_MODE) != 0 && errno != EEXIST) {
			*st = arc_fail(x->err, ARC_IO, "%s: entry \"%.200s\": cannot create directory "
				 "%s: %s", x->archive, name, comp[i], strerror(errno));
			close(fd);
			return -1;
		}
		int nfd = openat(fd, comp[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0)
			*st = refuse(x, name, "%s is already there and is not a directory", comp[i]);
		else
			fchmod(nfd, PROF_DIR_MODE);   /* past the umask */
		close(fd);
		fd = nfd;
	}
	return fd;
}

static enum arc_status write_data(struct ext_ctx *x, const char *name, int fd)
{
	uint64_t size = 0;
	for (;;) {
		la_ssize_t n = archive_read_data(x->a, x->buf, ARC_BUF);
		if (n == 0)
			return ARC_OK;
		if (n < 0)
			return refuse(x, name, "cannot read its data: %s",
				      archive_error_string(x->a));
		size += (uint64_t)n;
		x->total += (uint64_t)n;
		if (size > x->lim.max_entry)
			return refuse(x, name, "larger than the limit of %llu bytes per entry",
				      (unsigned long long)x->lim.max_entry);
		if (x->total > x->lim.max_total)
			return refuse(x, name, "the archive's contents exceed the limit of %llu "
				      "bytes in all", (unsigned long long)x->lim.max_total);
		for (la_ssize_t off = 0; off < n;) {
			ssize_t w = write(fd, x->buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return arc_fail(x->err, ARC_IO, "%s: entry \"%.200s\": cannot write: "
						"%s", x->archive, name, strerror(errno));
			off += w;
		}
	}
}

/* Links, devices and the like: a run directory holds only directories
 * and regular files. */
static enum arc_status check_kind(struct ext_ctx *x, struct archive_entry *e,
				  const char *name, mode_t type)
{
	const char *hl = archive_entry_hardlink(e);
	if (hl)
		return refuse(x, name, "a hard link (to \"%.200s\"); a run directory has no links",
			      hl);
	if (type == AE_IFLNK)
		return refuse(x, name, "a symbolic link (to \"%.200s\"); a run directory has no "
			      "links", archive_entry_symlink(e) ? archive_entry_symlink(e) : "?");
	if (type != AE_IFREG && type != AE_IFDIR)
		return refuse(x, name, "%s; only regular files and directories are extracted",
			      type_name(type));
	return ARC_OK;
}

/* Everything under the one top-level directory that the first entry names. */
static enum arc_status check_top(struct ext_ctx *x, const char *name, char **comp, int n,
				 mode_t type)
{
	if (!x->top) {
		if (!(x->top = strdup(comp[0])))
			return arc_fail(x->err, ARC_IO, "out of memory");
	} else if (strcmp(x->top, comp[0]) != 0) {
		return refuse(x, name, "outside the top-level directory \"%.200s\" (an archive "
			      "of a run directory holds one directory)", x->top);
	}
	if (n == 1 && type == AE_IFREG)
		return refuse(x, name, "a file at the top level (an archive of a run directory "
			      "holds one directory)");
	return ARC_OK;
}

/* The size the header declares, before a byte is written; write_data
 * counts what really comes. */
static enum arc_status check_size(struct ext_ctx *x, struct archive_entry *e, const char *name)
{
	if (archive_entry_size_is_set(e) && archive_entry_size(e) > 0) {
		uint64_t sz = (uint64_t)archive_entry_size(e);
		if (sz > x->lim.max_entry)
			return refuse(x, name, "%llu bytes, larger than the limit of %llu bytes "
				      "per entry", (unsigned long long)sz,
				      (unsigned long long)x->lim.max_entry);
		if (x->total + sz > x->lim.max_total)
			return refuse(x, name, "the archive's contents exceed the limit of %llu "
				      "bytes in all", (unsigned long long)x->lim.max_total);
	}
	return ARC_OK;
}

/* Creates `leaf` in `dfd`, never over what is there, and writes the data. */
static enum arc_status extract_file(struct ext_ctx *x, const char *name, int dfd,
				    const char *leaf)
{
	int fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			PROF_FILE_MODE);
	if (fd < 0 && errno == EEXIST)
		return refuse(x, name, "a duplicate entry (already extracted)");
	if (fd < 0)
		return arc_fail(x->err, ARC_IO, "%s: entry \"%.200s\": cannot create: %s",
				x->archive, name, strerror(errno));
	enum arc_status st;
	if (fchmod(fd, PROF_FILE_MODE) != 0)   /* past the umask */
		st = arc_fail(x->err, ARC_IO, "%s: entry \"%.200s\": %s",
			      x->archive, name, strerror(errno));
	else
		st = write_data(x, name, fd);
	if (close(fd) != 0 && st == ARC_OK)
		st = arc_fail(x->err, ARC_IO, "%s: entry \"%.200s\": %s",
			      x->archive, name, strerror(errno));
	return st;
}

static enum arc_status extract_entry(struct ext_ctx *x, struct archive_entry *e)
{
	const char *name = archive_entry_pathname(e);
	if (!name)
		name = archive_entry_pathname_utf8(e);
	if (!name)
		return refuse(x, NULL, "an entry without a readable name");
	if (strlen(name) >= ARC_MAX_PATH)
		return refuse(x, NULL, "an entry name longer than %d bytes", ARC_MAX_PATH);
	char path[ARC_MAX_PATH], *comp[ARC_MAX_DEPTH + 2];
	strcpy(path, name);
	int n = split_path(x, name, path, comp, ARC_MAX_DEPTH + 2);
	if (n < 0)
		return ARC_REFUSED;
	mode_t type = archive_entry_filetype(e);
	enum arc_status st = check_kind(x, e, name, type);
	if (st == ARC_OK)
		st = check_top(x, name, comp, n, type);
	if (st == ARC_OK)
		st = check_size(x, e, name);
	if (st != ARC_OK)
		return st;
	st = ARC_IO;
	int dfd = open_dirs(x, name, comp, type == AE_IFDIR ? n : n - 1, &st);
	if (dfd < 0)
		return st;
	st = type == AE_IFREG ? extract_file(x, name, dfd, comp[n - 1]) : ARC_OK;
	close(dfd);
	return st;
}

/* Makes the fresh directory under `parent`; *made is its path. */
static int make_fresh(const char *parent, const char *stem, char **made)
{
	char *t;
	if (asprintf(&t, "%s/%s.XXXXXX", parent, stem) < 0)
		return -ENOMEM;
	if (!mkdtemp(t)) {
		int e = errno;
		free(t);
		return -e;
	}
	*made = t;
	return 0;
}

static enum arc_status extract_open(struct ext_ctx *x, int fd)
{
	struct archive *a = archive_read_new();
	if (!(x->a = a))
		return arc_fail(x->err, ARC_IO, "out of memory");
	archive_read_support_format_tar(a);
	archive_read_support_format_zip(a);
	archive_read_support_filter_gzip(a);
	int zst = archive_read_support_filter_zstd(a);
	size_t n = strlen(x->archive);
	if (zst != ARCHIVE_OK && n > 8 && strcmp(x->archive + n - 8, ".tar.zst") == 0)
		return arc_fail(x->err, ARC_UNSUPPORTED, "%s: this prof's libarchive (%s) cannot "
				"read zstd", x->archive, archive_version_string());
	if (archive_read_open_fd(a, fd, ARC_BUF) != ARCHIVE_OK)
		return refuse(x, NULL, "not a readable archive: %s", archive_error_string(a));
	return ARC_OK;
}

/* Moves <fresh>/<top> to <parent>/<top> when that name is free. */
static char *settle(const char *parent, const char *fresh, int root, const char *top)
{
	char *out = NULL;
	int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd >= 0 && renameat2(root, top, pfd, top, RENAME_NOREPLACE) == 0) {
		if (rmdir(fresh) != 0 || asprintf(&out, "%s/%s", parent, top) < 0)
			out = NULL;
	}
	if (pfd >= 0)
		close(pfd);
	if (!out && asprintf(&out, "%s/%s", fresh, top) < 0)
		out = NULL;
	return out;
}

/* The caller's limits, where given (0: the default). */
static struct arc_limits ext_limits(const struct arc_limits *lim)
{
	struct arc_limits l = { ARC_MAX_ENTRY_DEFAULT, ARC_MAX_TOTAL_DEFAULT };
	if (lim && lim->max_entry)
		l.max_entry = lim->max_entry;
	if (lim && lim->max_total)
		l.max_total = lim->max_total;
	return l;
}

/* The archive, opened: it must be a regular file. */
static enum arc_status ext_open_file(const char *archive, int *fd, struct arc_error *err)
{
	struct stat sb;
	*fd = open(archive, O_RDONLY | O_CLOEXEC);
	if (*fd < 0 || fstat(*fd, &sb) != 0)
		return arc_fail(err, ARC_IO, "%s: %s", archive, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return arc_fail(err, ARC_IO, "%s: not a regular file", archive);
	return ARC_OK;
}

/* *stem: the archive's name without directory and extension; *pdir:
 * `parent`, else the archive's directory. 0, or -1 (out of memory; what
 * was made is the caller's to free). */
static int ext_names(const char *archive, const char *parent, char **stem, char **pdir)
{
	const char *b = strrchr(archive, '/');
	b = b ? b + 1 : archive;
	*stem = strndup(b, strlen(b) - arc_ext_len(b));
	if (parent)
		*pdir = strdup(parent);
	else
		*pdir = b == archive ? strdup(".") : strndup(archive, (size_t)(b - 1 - archive));
	if (!*stem || !*pdir)
		return -1;
	if (!**pdir) {   /* "/x.tar.gz" */
		free(*pdir);
		*pdir = strdup("/");
	}
	return 0;
}

/* Makes the fresh directory under *pdir; when the archive's own directory
 * cannot be written (no `parent` given), under $TMPDIR instead. */
static enum arc_status ext_fresh(const char *archive, const char *parent, const char *stem,
				 char **pdir, char **fresh, struct arc_error *err)
{
	int rc = make_fresh(*pdir, *stem ? stem : "archive", fresh);
	if (rc && !parent && (rc == -EACCES || rc == -EROFS || rc == -EPERM)) {
		const char *tmpdir = getenv("TMPDIR");
		free(*pdir);
		*pdir = strdup(tmpdir && *tmpdir ? tmpdir : "/tmp");
		rc = *pdir ? make_fresh(*pdir, *stem ? stem : "archive", fresh) : -ENOMEM;
	}
	if (rc)
		return arc_fail(err, ARC_IO, "%s: cannot create a directory to extract into under "
				"%s: %s", archive, *pdir ? *pdir : "?", strerror(-rc));
	return ARC_OK;
}

/* Every entry; an archive without one is refused. */
static enum arc_status extract_all(struct ext_ctx *x)
{
	struct archive_entry *e = NULL;
	uint64_t entries = 0;
	for (;;) {
		int r = archive_read_next_header(x->a, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN)
			return refuse(x, NULL, "cannot read the archive after %llu entries: %s",
				      (unsigned long long)entries, archive_error_string(x->a));
		enum arc_status st = extract_entry(x, e);
		if (st != ARC_OK)
			return st;
		entries++;
	}
	if (!entries)
		return refuse(x, NULL, "an empty archive");
	return ARC_OK;
}

enum arc_status arc_extract(const char *archive, const char *parent,
			    const struct arc_limits *lim, char **out_dir,
			    struct arc_error *err)
{
	*out_dir = NULL;
	err->msg[0] = '\0';
	struct ext_ctx x = { .archive = archive, .err = err, .root = -1,
			     .lim = ext_limits(lim) };
	char *fresh = NULL, *pdir = NULL, *stem = NULL;
	int fd = -1;
	enum arc_status st = ext_open_file(archive, &fd, err);
	if (st)
		goto done;
	if (ext_names(archive, parent, &stem, &pdir) != 0) {
		st = arc_fail(err, ARC_IO, "out of memory");
		goto done;
	}
	if ((st = ext_fresh(archive, parent, stem, &pdir, &fresh, err)))
		goto done;
	x.root = open(fresh, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	x.buf = malloc(ARC_BUF);
	if (x.root < 0 || !x.buf) {
		st = arc_fail(err, ARC_IO, "%s: %s", fresh, strerror(x.root < 0 ? errno : ENOMEM));
		goto done;
	}
	if ((st = extract_open(&x, fd)) || (st = extract_all(&x)))
		goto done;
	fchmod(x.root, PROF_DIR_MODE);
	if (!(*out_dir = settle(pdir, fresh, x.root, x.top)))
		st = arc_fail(err, ARC_IO, "out of memory");
done:
	if (x.a)
		archive_read_free(x.a);
	if (st != ARC_OK && x.root >= 0) {
		rm_under(x.root, 0);
		rmdir(fresh);
	}
	if (x.root >= 0)
		close(x.root);
	if (fd >= 0)
		close(fd);
	free(x.buf);
	free(x.top);
	free(fresh);
	free(pdir);
	free(stem);
	return st;
}

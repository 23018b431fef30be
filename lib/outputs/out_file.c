#include "outputs/out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/nomem.h"

static void clear(struct out_file *o)
{
	free(o->path);
	free(o->tmp);
	free(o->vbuf);
	memset(o, 0, sizeof *o);
}

#define OUT_FILE_BUF (1u << 20)

/* Without it the stream keeps its own small buffer: slower, not wrong. */
static void big_buffer(struct out_file *o)
{
	o->vbuf = malloc(OUT_FILE_BUF);
	if (o->vbuf)
		setvbuf(o->f, o->vbuf, _IOFBF, OUT_FILE_BUF);
	else
		prof_nomem_recovered();
}

int out_file_open(struct out_file *o, const char *dir, const char *name)
{
	memset(o, 0, sizeof *o);
	o->path = fs_join(dir, name);
	size_t n = o->path ? strlen(o->path) + 8 : 0;
	o->tmp = n ? malloc(n) : NULL;
	if (!o->tmp) {
		clear(o);
		return -ENOMEM;
	}
	snprintf(o->tmp, n, "%s.tmp", o->path);
	int fd = fs_create_file(o->tmp, O_WRONLY);
	if (fd < 0) {
		clear(o);
		return fd;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int rc = -errno;
		close(fd);
		unlink(o->tmp);
		clear(o);
		return rc;
	}
	big_buffer(o);
	return 0;
}

int out_file_commit(struct out_file *o, int write_err)
{
	/* the writer's failure came first; the FILE's follow from it */
	int rc = write_err < 0 ? write_err : 0;
	errno = 0;
	if ((fflush(o->f) != 0 || ferror(o->f)) && !rc)
		rc = errno ? -errno : -EIO;
	if (fclose(o->f) != 0 && !rc)
		rc = -errno;
	o->f = NULL;
	if (!rc && write_err)
		rc = -EIO;
	if (!rc && rename(o->tmp, o->path) != 0)
		rc = -errno;
	if (rc)
		unlink(o->tmp);
	clear(o);
	return rc;
}

void out_file_abort(struct out_file *o)
{
	if (o->f)
		fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	clear(o);
}

int out_file_write(const char *dir, const char *name, const char *data, size_t len)
{
	struct out_file o;
	int rc = out_file_open(&o, dir, name);
	if (rc)
		return rc;
	int failed = len && fwrite(data, 1, len, o.f) != len;
	return out_file_commit(&o, failed);
}

int out_file_scratch(struct out_file *o, const char *dir)
{
	memset(o, 0, sizeof *o);
	char *tmpl = fs_join(dir, ".scratch.XXXXXX");
	if (!tmpl)
		return -ENOMEM;
	int fd = mkstemp(tmpl);
	int rc = fd < 0 ? -errno : 0;
	if (fd >= 0) {
		unlink(tmpl);
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	free(tmpl);
	o->f = fd >= 0 ? fdopen(fd, "w+") : NULL;
	if (!o->f && fd >= 0) {
		rc = -errno;
		close(fd);
	}
	if (o->f)
		big_buffer(o);
	return rc;
}

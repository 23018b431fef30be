#define _GNU_SOURCE
#include "run/rundir.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/agent_env.h"
#include "common/fsutil.h"

static int rundir_fail(int rc, char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int rundir_fail(int rc, char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return rc;
}

int rundir_name(char *buf, size_t len, const char *host, pid_t pid, uint64_t real_ns)
{
	char h[65];
	size_t i = 0;
	for (; host[i] && i < sizeof h - 1; i++) {
		unsigned char c = (unsigned char)host[i];
		h[i] = isalnum(c) || c == '-' || c == '.' ? (char)c : '_';
	}
	h[i] = '\0';
	time_t secs = (time_t)(real_ns / 1000000000u);
	struct tm tm;
	localtime_r(&secs, &tm);
	char stamp[32];
	strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tm);
	return snprintf(buf, len, "%s_%d_%s%03u_prof", h[0] ? h : "host", (int)pid, stamp,
			(unsigned)(real_ns / 1000000u % 1000u));
}

/* "out/" would make lstat and O_NOFOLLOW follow a link named out: the
 * checks see the path without trailing slashes. */
static char *rundir_trim(const char *path)
{
	char *p = strdup(path);
	size_t n = p ? strlen(p) : 0;
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	return p;
}

static int rundir_check_trimmed(const char *output, char *err, size_t errlen)
{
	struct stat st;
	if (lstat(output, &st) != 0 && errno == ENOENT) {
		int rc = fs_mkdir_p(output);
		if (rc)
			return rundir_fail(rc, err, errlen, "cannot create output directory %s: %s",
					   output, strerror(-rc));
	}
	if (lstat(output, &st) != 0)
		return rundir_fail(-errno, err, errlen, "output directory %s: %s",
				   output, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return rundir_fail(-ELOOP, err, errlen, "output path %s is a symbolic link; "
				   "refusing to follow it (give the directory it points to)",
				   output);
	if (!S_ISDIR(st.st_mode))
		return rundir_fail(-ENOTDIR, err, errlen, "output path %s is not a directory",
				   output);
	if (access(output, W_OK | X_OK) != 0)
		return rundir_fail(-errno, err, errlen, "output directory %s is not writable: %s",
				   output, strerror(errno));
	return 0;
}

int rundir_check_output(const char *output, char *err, size_t errlen)
{
	char *p = rundir_trim(output);
	int rc = p ? rundir_check_trimmed(p, err, errlen) : -ENOMEM;
	free(p);
	return rc;
}

/* mkdir + open relative to `at`, never through a link, mode forced. */
static int rundir_mkdirat(int at, const char *name)
{
	if (mkdirat(at, name, PROF_DIR_MODE) != 0)
		return -errno;
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* mkdir's mode went through the umask; the run dir's modes are fixed. */
	if (fchmod(fd, PROF_DIR_MODE) != 0) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

static void rundir_switch_note(struct rundir *rd, bool on)
{
	if (!rd->switches.hdr)
		return;
	struct raw_recording r = { on, RAW_CAUSE_LAUNCHER };
	raw_writer_emit(&rd->switches, RAW_REC_RECORDING, raw_clock_ns(CLOCK_MONOTONIC), &r, sizeof r);
}

/* Without this stream the parse only loses the exact moment recording
 * switched; so a failure to open it is not fatal. */
static void rundir_switches_open(struct rundir *rd, bool recording)
{
	struct raw_writer_opts o = {
		.clock = RAW_CLOCK_MONOTONIC, .kind = RAW_STREAM_LAUNCHER,
		.chunk_size = RAW_CHUNK_MIN, .pid = (int32_t)getpid(),
		.tid = (int32_t)getpid(), .ppid = (int32_t)getppid(), .comm = "prof launcher",
		.disk_full = &rd->control->streams_disk_full,
	};
	if (raw_writer_open(&rd->switches, rd->launcher_fd, "switches.raw", &o) != 0)
		return;
	if (!recording)
		rundir_switch_note(rd, false);
}

static int rundir_control_create(struct rundir *rd, bool recording)
{
	long page = sysconf(_SC_PAGESIZE);
	rd->control_len = page > 0 ? (size_t)page : 4096;
	int fd = openat(rd->raw_fd, RAW_CONTROL_FILE,
			O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, PROF_FILE_MODE);
	if (fd < 0)
		return -errno;
	/* Blocks given now, not a hole: a store into a hole on a full disk
	 * would be a SIGBUS. */
	int rc = fchmod(fd, PROF_FILE_MODE) != 0 ? -errno
		 : -posix_fallocate(fd, 0, (off_t)rd->control_len);
	void *p = rc ? MAP_FAILED : mmap(NULL, rd->control_len, PROT_READ | PROT_WRITE,
					  MAP_SHARED, fd, 0);
	if (!rc && p == MAP_FAILED)
		rc = -errno;
	close(fd);
	if (rc)
		return rc;
	rd->control = p;
	rundir_switches_open(rd, recording);
	rd->control->version = RAW_CONTROL_VERSION;
	rd->control->recording = recording;
	rd->control->generation = 1;
	/* The magic goes last: an agent that sees it sees the rest. */
	__atomic_store_n(&rd->control->magic, RAW_CONTROL_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

/* raw/, raw/launcher/, logs/ and the control page. */
static int rundir_populate(struct rundir *rd, bool recording, char *err, size_t errlen)
{
	int fd;
	if ((fd = rundir_mkdirat(rd->fd, PROF_RAW_DIR)) < 0)
		return rundir_fail(fd, err, errlen, "cannot create %s/%s: %s",
				   rd->path, PROF_RAW_DIR, strerror(-fd));
	rd->raw_fd = fd;
	if ((fd = rundir_mkdirat(rd->raw_fd, PROF_LAUNCHER_STREAMS)) < 0)
		return rundir_fail(fd, err, errlen, "cannot create %s/%s/%s: %s", rd->path,
				   PROF_RAW_DIR, PROF_LAUNCHER_STREAMS, strerror(-fd));
	rd->launcher_fd = fd;
	if ((fd = rundir_mkdirat(rd->fd, PROF_LOG_DIR)) < 0)
		return rundir_fail(fd, err, errlen, "cannot create %s/%s: %s",
				   rd->path, PROF_LOG_DIR, strerror(-fd));
	close(fd);
	int rc = rundir_control_create(rd, recording);
	if (rc)
		return rundir_fail(rc, err, errlen, "cannot create %s/%s/%s: %s", rd->path,
				   PROF_RAW_DIR, RAW_CONTROL_FILE, strerror(-rc));
	return 0;
}

/* The absolute path of `name` under `output`, for the agent and messages. */
static char *rundir_abs_path(const char *output, const char *name)
{
	char *real = realpath(output, NULL);
	if (!real)
		return NULL;
	char *p = fs_join(strcmp(real, "/") == 0 ? "" : real, name);
	free(real);
	return p;
}

static int rundir_create_trimmed(struct rundir *rd, const char *output, const char *name,
				 bool recording, char *err, size_t errlen)
{
	int out = open(output, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (out < 0)
		return rundir_fail(-errno, err, errlen, "cannot open output directory %s: %s",
				   output, strerror(errno));
	rd->path = rundir_abs_path(output, name);
	int fd = rd->path ? rundir_mkdirat(out, name) : -ENOMEM;
	close(out);
	if (fd < 0) {
		int rc = fd;
		rundir_fail(rc, err, errlen, "cannot create run directory %s/%s: %s%s", output,
			    name, strerror(-rc), rc == -EEXIST ? " (something is already there)" : "");
		rundir_close(rd);
		return rc;
	}
	rd->fd = fd;
	/* Held until rundir_close: a parse that finds it taken knows the run
	 * is still going (rundir_live). Without locks (some network file
	 * systems) the parse cannot tell, and says so. */
	flock(fd, LOCK_EX | LOCK_NB);
	int rc = rundir_populate(rd, recording, err, errlen);
	if (rc)
		rundir_close(rd);
	return rc;
}

int rundir_create(struct rundir *rd, const char *output, const char *name,
		  bool recording, char *err, size_t errlen)
{
	memset(rd, 0, sizeof *rd);
	rd->fd = rd->raw_fd = rd->launcher_fd = -1;
	char *p = rundir_trim(output);
	int rc = p ? rundir_create_trimmed(rd, p, name, recording, err, errlen) : -ENOMEM;
	free(p);
	return rc;
}

void rundir_set_recording(struct rundir *rd, bool on)
{
	struct raw_control *c = rd->control;
	if (!c || __atomic_load_n(&c->recording, __ATOMIC_RELAXED) == (uint32_t)on)
		return;
	__atomic_store_n(&c->recording, (uint32_t)on, __ATOMIC_RELEASE);
	__atomic_add_fetch(&c->generation, 1, __ATOMIC_RELEASE);
	rundir_switch_note(rd, on);
}

void rundir_set_budget(struct rundir *rd, uint64_t bytes)
{
	if (rd->control)
		__atomic_store_n(&rd->control->raw_budget_bytes, bytes, __ATOMIC_RELEASE);
}

static bool budget_reached(const struct raw_control *c, uint64_t *used)
{
	uint64_t budget = __atomic_load_n(&c->raw_budget_bytes, __ATOMIC_ACQUIRE);
	uint64_t u = __atomic_load_n(&c->raw_used_bytes, __ATOMIC_ACQUIRE);
	if (used)
		*used = u;
	return budget && u > budget;
}

bool rundir_budget_reached(const struct rundir *rd, uint64_t *used)
{
	if (used)
		*used = 0;
	return rd->control && budget_reached(rd->control, used);
}

uint32_t rundir_execs_apart(const struct rundir *rd, char *path, size_t len, int *pid)
{
	const struct raw_control *c = rd->control;
	if (len)
		*path = '\0';
	*pid = 0;
	uint32_t n = c ? __atomic_load_n(&c->execs_apart, __ATOMIC_ACQUIRE) : 0;
	if (n) {
		snprintf(path, len, "%.*s", (int)sizeof c->exec_apart_path, c->exec_apart_path);
		*pid = __atomic_load_n(&c->exec_apart_pid, __ATOMIC_RELAXED);
	}
	return n;
}

int rundir_budget_of(const char *run_dir, uint64_t *budget)
{
	*budget = 0;
	char *path = fs_join(run_dir, PROF_RAW_DIR "/" RAW_CONTROL_FILE);
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
	free(path);
	if (fd < 0)
		return -1;
	struct raw_control c;
	ssize_t n = pread(fd, &c, sizeof c, 0);
	close(fd);
	if (n != (ssize_t)sizeof c || c.magic != RAW_CONTROL_MAGIC)
		return -1;
	*budget = c.raw_budget_bytes;
	return budget_reached(&c, NULL);
}

int rundir_live(const char *run_dir)
{
	int fd = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = flock(fd, LOCK_SH | LOCK_NB) == 0 ? 0 : errno == EWOULDBLOCK ? 1 : -errno;
	close(fd);   /* and with it a lock this took */
	return rc;
}

void rundir_finish(struct rundir *rd)
{
	if (rd->switches.hdr)
		raw_writer_close(&rd->switches);
}

void rundir_close(struct rundir *rd)
{
	rundir_finish(rd);
	if (rd->control)
		munmap(rd->control, rd->control_len);
	int fds[] = { rd->launcher_fd, rd->raw_fd, rd->fd };
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(rd->path);
	memset(rd, 0, sizeof *rd);
	rd->fd = rd->raw_fd = rd->launcher_fd = -1;
}

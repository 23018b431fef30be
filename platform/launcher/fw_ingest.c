#define _GNU_SOURCE
#include "launcher/fw_ingest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/grow.h"
#include "ingest/parse_discover.h"
#include "ingest/parse_kineto.h"
#include "launcher/ticker.h"
#include "raw/raw_clock.h"

/* One process image's directory with flushes seen: its stream, and the
 * flushes that could not be read (left for the parse, not tried again). */
struct image {
	char name[64];
	int dirfd;
	struct raw_writer w;
	int opened;           /* 1 open, -1 cannot be */
	long *bad;
	size_t nbad, cap_bad;
};

struct fw_ingest {
	int raw_fd;
	int stop_fd[2];
	uint64_t interval_ns;
	uint64_t *disk_full;
	pthread_t thread;
	struct image *img;
	size_t nimg, cap_img;
	uint64_t flushes;
};

/* The image's entry, made on its first flush; it keeps dirfd (else closed). */
static struct image *image_of(struct fw_ingest *f, const char *name, int dirfd)
{
	for (size_t i = 0; i < f->nimg; i++)
		if (strcmp(f->img[i].name, name) == 0) {
			close(dirfd);
			return &f->img[i];
		}
	struct image *v = grow_room(f->img, f->nimg, &f->cap_img, sizeof *v);
	if (!v || strlen(name) >= sizeof v->name) {
		close(dirfd);
		if (v)
			f->img = v;
		return NULL;
	}
	f->img = v;
	struct image *im = &v[f->nimg++];
	memset(im, 0, sizeof *im);
	strcpy(im->name, name);
	im->dirfd = dirfd;
	im->w.fd = -1;
	return im;
}

static int was_bad(const struct image *im, long k)
{
	for (size_t i = 0; i < im->nbad; i++)
		if (im->bad[i] == k)
			return 1;
	return 0;
}

static void note_bad(struct image *im, long k)
{
	long *v = grow_room(im->bad, im->nbad, &im->cap_bad, sizeof *v);
	if (v) {
		im->bad = v;
		v[im->nbad++] = k;
	}
}

static int stream_open(const struct fw_ingest *f, struct image *im)
{
	if (im->opened)
		return im->opened > 0;
	struct raw_writer_opts o = { .clock = RAW_CLOCK_MONOTONIC, .kind = RAW_STREAM_FRAMEWORK,
				     .pid = (int32_t)strtol(im->name, NULL, 10),
				     .comm = "framework", .disk_full = f->disk_full };
	im->opened = raw_writer_open(&im->w, im->dirfd, "fwk.raw", &o) == 0 ? 1 : -1;
	return im->opened > 0;
}

/* The image's waiting flushes (ks, in order) into its stream. Once the
 * stream has stopped (a full disk), the later flushes stay for the parse:
 * written into it they would only be counted lost, and removed. */
static void image_look(struct fw_ingest *f, struct image *im, const long *ks, long n)
{
	long ops = 0;
	for (long i = 0; i < n && stream_open(f, im) && !im->w.broken; i++) {
		if (was_bad(im, ks[i]))
			continue;
		if (kineto_flush_into(im->dirfd, im->name, ks[i], &im->w, NULL, &ops) == 0) {
			kineto_flush_remove(im->dirfd, ks[i]);
			f->flushes++;
		} else {
			note_bad(im, ks[i]);   /* the parse tries it and says why */
		}
	}
}

static void look(struct fw_ingest *f)
{
	DIR *d = fdopendir(dup(f->raw_fd));
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		long pid, n;
		if (parse_image_name(e->d_name, &pid, &n) != 0)
			continue;
		int fd = openat(f->raw_fd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		long *ks = NULL, orphans = 0, nk = fd >= 0 ? kineto_list(fd, &ks, &orphans) : 0;
		/* only a directory with a flush in it gets an entry and a stream */
		struct image *im = nk > 0 ? image_of(f, e->d_name, fd) : NULL;
		if (im)
			image_look(f, im, ks, nk);
		else if (nk <= 0 && fd >= 0)
			close(fd);
		free(ks);
	}
	closedir(d);
}

static void *ingest_main(void *arg)
{
	struct fw_ingest *f = arg;
	uint64_t next = raw_clock_ns(CLOCK_MONOTONIC) + f->interval_ns;
	while (!ticker_wait(f->stop_fd[0], next)) {
		look(f);
		next = ticker_next(next, raw_clock_ns(CLOCK_MONOTONIC), f->interval_ns);
	}
	return NULL;
}

int fw_ingest_start(struct fw_ingest **out, int raw_fd, uint32_t interval_ms,
		    uint64_t *disk_full)
{
	struct fw_ingest *f = calloc(1, sizeof *f);
	if (!f)
		return -ENOMEM;
	if (pipe2(f->stop_fd, O_CLOEXEC) != 0) {
		int rc = -errno;
		free(f);
		return rc;
	}
	f->raw_fd = raw_fd;
	f->disk_full = disk_full;
	f->interval_ns = (uint64_t)interval_ms * 1000000u;
	int rc = -pthread_create(&f->thread, NULL, ingest_main, f);
	if (rc) {
		close(f->stop_fd[0]);
		close(f->stop_fd[1]);
		free(f);
		return rc;
	}
	pthread_setname_np(f->thread, "prof-fwingest");
	*out = f;
	return 0;
}

uint64_t fw_ingest_stop(struct fw_ingest *f)
{
	if (!f)
		return 0;
	ticker_stop(f->stop_fd[1], f->thread);
	look(f);   /* what the program wrote as it ended */
	for (size_t i = 0; i < f->nimg; i++) {
		struct image *im = &f->img[i];
		if (im->opened > 0)
			raw_writer_close(&im->w);
		close(im->dirfd);
		free(im->bad);
	}
	uint64_t n = f->flushes;
	close(f->stop_fd[0]);
	close(f->stop_fd[1]);
	free(f->img);
	free(f);
	return n;
}

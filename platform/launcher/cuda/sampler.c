#define _GNU_SOURCE
#include "launcher/ticker.h"
#include "launcher/cuda/sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "launcher/cuda/sampler_nvml.h"
#include "raw/raw_clock.h"
#include "raw/raw_writer.h"

struct nvml_sampler {
	pthread_t thread;
	int stop_fd[2];
	uint64_t interval_ns;
	struct nvml_lib nvml;
	unsigned n;                         /* devices the program sees */
	unsigned order[NVML_MAX_DEVICES];   /* CUDA device k is NVML's order[k] */
	struct raw_writer w;
	uint64_t *disk_full;
	uint64_t samples;
};

static void nvml_log(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void nvml_log(int fd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
	va_end(ap);
	if (fd < 0 || n < 0)
		return;
	if (n > (int)sizeof buf - 2)
		n = (int)sizeof buf - 2;
	buf[n++] = '\n';
	ssize_t w = write(fd, buf, (size_t)n);
	(void)w;
}

static int nvml_open_stream(struct nvml_sampler *s, int dirfd)
{
	struct raw_writer_opts o = {
		.clock = RAW_CLOCK_MONOTONIC,
		.kind = RAW_STREAM_DEVICE_SAMPLES,
		.chunk_size = 64u << 10,
		.pid = (int32_t)getpid(),
		.tid = (int32_t)gettid(),
		.ppid = (int32_t)getppid(),
		.comm = "nvml sampler",
		.disk_full = s->disk_full,
	};
	return raw_writer_open(&s->w, dirfd, NVML_SAMPLER_STREAM, &o);
}

static void nvml_write_infos(struct nvml_sampler *s)
{
	char name[NVML_NAME_MAX], uuid[NVML_UUID_MAX];
	uint64_t now = raw_clock_ns(CLOCK_MONOTONIC);
	for (unsigned k = 0; k < s->n; k++) {
		struct raw_dev_info info;
		nvml_read_info(&s->nvml, s->order[k], &info, name, uuid);
		info.device = k;
		info.name_id = name[0] ? raw_writer_intern(&s->w, name, now) : 0;
		info.uuid_id = uuid[0] ? raw_writer_intern(&s->w, uuid, now) : 0;
		raw_writer_emit(&s->w, RAW_REC_DEV_INFO, now, &info, sizeof info);
	}
}

static void nvml_take(struct nvml_sampler *s)
{
	for (unsigned k = 0; k < s->n; k++) {
		struct raw_dev_sample ds;
		uint64_t now = raw_clock_ns(CLOCK_MONOTONIC);
		nvml_read_sample(&s->nvml, s->order[k], &ds);
		ds.device = k;
		if (raw_writer_emit(&s->w, RAW_REC_DEV_SAMPLE, now, &ds, sizeof ds) == 0)
			s->samples++;
	}
}

static void *nvml_main(void *arg)
{
	struct nvml_sampler *s = arg;
	uint64_t next = raw_clock_ns(CLOCK_MONOTONIC);
	do {
		nvml_take(s);
		next = ticker_next(next, raw_clock_ns(CLOCK_MONOTONIC), s->interval_ns);
	} while (!ticker_wait(s->stop_fd[0], next));
	return NULL;
}

static void nvml_free(struct nvml_sampler *s)
{
	if (s->stop_fd[0] >= 0)
		close(s->stop_fd[0]);
	if (s->stop_fd[1] >= 0)
		close(s->stop_fd[1]);
	nvml_close(&s->nvml);
	free(s);
}

/* The devices the program will see, numbered as CUDA numbers them. */
static void nvml_pick_devices(struct nvml_sampler *s, int log_fd)
{
	char uuids[NVML_MAX_DEVICES][NVML_UUID_MAX];   /* 6 KiB */
	char name[NVML_NAME_MAX];
	struct raw_dev_info info;
	for (unsigned i = 0; i < s->nvml.count; i++)
		nvml_read_info(&s->nvml, i, &info, name, uuids[i]);
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	int n = nvml_cuda_order(cvd, (const char (*)[NVML_UUID_MAX])uuids, s->nvml.count,
				s->order);
	if (n < 0) {
		nvml_log(log_fd, "nvml sampler: CUDA_VISIBLE_DEVICES=%s names MIG instances: "
			 "every GPU sampled, in NVML's order", cvd);
		n = nvml_cuda_order(NULL, NULL, s->nvml.count, s->order);
	}
	s->n = (unsigned)n;
}

/* NVML and the stream are ready: the infos, then the thread. */
static int nvml_run(struct nvml_sampler *s, int dirfd)
{
	int rc = nvml_open_stream(s, dirfd);
	if (rc)
		return rc;
	nvml_write_infos(s);
	if (pipe2(s->stop_fd, O_CLOEXEC) != 0)
		rc = -errno;
	else if ((rc = -pthread_create(&s->thread, NULL, nvml_main, s)) == 0)
		pthread_setname_np(s->thread, "prof-nvml");
	if (rc)
		raw_writer_close(&s->w);
	return rc;
}

int nvml_sampler_start(struct nvml_sampler **out, int dirfd, uint32_t interval_ms, int log_fd,
		       uint64_t *disk_full)
{
	char why[256] = "";
	struct nvml_sampler *s = calloc(1, sizeof *s);
	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->stop_fd[0] = s->stop_fd[1] = -1;
	s->disk_full = disk_full;
	uint32_t ms = interval_ms < NVML_SAMPLER_MIN_MS ? NVML_SAMPLER_MIN_MS : interval_ms;
	s->interval_ns = (uint64_t)ms * 1000000u;
	int rc = nvml_open(&s->nvml, NULL, why, sizeof why);
	if (rc == 0)
		nvml_pick_devices(s, log_fd);
	if (rc == 0 && (rc = nvml_run(s, dirfd)) != 0)
		snprintf(why, sizeof why, "cannot start: %s", strerror(-rc));
	if (rc) {
		nvml_log(log_fd, "nvml sampler: off: %s", why);
		nvml_free(s);
		return rc;
	}
	nvml_log(log_fd, "nvml sampler: %u of %u device(s), every %u ms", s->n, s->nvml.count, ms);
	*out = s;
	return 0;
}

uint64_t nvml_sampler_stop(struct nvml_sampler *s)
{
	if (!s)
		return 0;
	ticker_stop(s->stop_fd[1], s->thread);
	raw_writer_close(&s->w);
	uint64_t n = s->samples;
	nvml_free(s);
	return n;
}

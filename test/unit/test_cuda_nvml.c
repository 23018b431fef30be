/*
 * The NVML sampler: its loader fails cleanly when there is no library or
 * the library lacks a function; with a stand-in libnvidia-ml
 * (unit/cuda/stub_nvml.c) it reads every device and the sampler thread
 * writes raw/launcher/device.raw as the parse expects.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "launcher/cuda/sampler.h"
#include "launcher/cuda/sampler_nvml.h"
#include "raw/raw_reader.h"
#include "unit/unit.h"

#ifndef PROF_TEST_NVML_STUB
#error "the build passes the stand-in library's path"
#endif

static void test_absent(void)
{
	struct nvml_lib l;
	char why[256] = "";
	const char *none[] = { "/nonexistent/libnvidia-ml.so.1", NULL };
	CHECK(nvml_open(&l, none, why, sizeof why) == -ENOENT);
	CHECK(l.handle == NULL && l.count == 0);
	CHECK_CONTAINS(why, "no NVML library");
	nvml_close(&l);   /* harmless on a closed one */

	/* A library that loads but is not NVML: closed again, no crash. */
	const char *libm[] = { "libm.so.6", NULL };
	CHECK(nvml_open(&l, libm, why, sizeof why) == -ENOSYS);
	CHECK(l.handle == NULL);
	CHECK_CONTAINS(why, "nvmlInit_v2");
}

static void test_stub_reads(void)
{
	struct nvml_lib l;
	char why[256] = "", name[NVML_NAME_MAX], uuid[NVML_UUID_MAX];
	const char *stub[] = { "/nonexistent/first", PROF_TEST_NVML_STUB, NULL };
	CHECK(nvml_open(&l, stub, why, sizeof why) == 0);
	CHECK(l.count == 2);
	struct raw_dev_info info;
	nvml_read_info(&l, 1, &info, name, uuid);
	CHECK(info.device == 1 && info.vendor == RAW_VENDOR_CUDA);
	CHECK(info.total_mem_bytes == 80ull << 30);
	CHECK(info.compute_major == 9 && info.compute_minor == 0);
	CHECK_STR(name, "Stub GPU 1");
	CHECK_STR(uuid, "GPU-00000001-0000-0000-0000-000000000000");
	struct raw_dev_sample s;
	nvml_read_sample(&l, 0, &s);
	CHECK(s.device == 0 && s.util_pct == 50 && s.mem_util_pct == 20);
	CHECK(s.mem_used_bytes == 1ull << 30 && s.mem_total_bytes == 80ull << 30);
	CHECK(s.power_mw == 300000 && s.sm_clock_mhz == 1980 && s.temperature_c == 60);
	nvml_read_sample(&l, 1, &s);
	CHECK(s.util_pct == 51 && s.power_mw == 0);   /* not supported: 0 */
	nvml_close(&l);
	CHECK(l.handle == NULL);
}

static void test_cuda_order(void)
{
	const char uuids[3][NVML_UUID_MAX] = {
		"GPU-aaaa0000-0000-0000-0000-000000000000",
		"GPU-bbbb0000-0000-0000-0000-000000000000",
		"GPU-cccc0000-0000-0000-0000-000000000000",
	};
	unsigned o[8];
	CHECK(nvml_cuda_order(NULL, uuids, 3, o) == 3 && o[0] == 0 && o[2] == 2);
	CHECK(nvml_cuda_order("2", uuids, 3, o) == 1 && o[0] == 2);   /* Slurm's one GPU */
	CHECK(nvml_cuda_order("2,0", uuids, 3, o) == 2 && o[0] == 2 && o[1] == 0);
	CHECK(nvml_cuda_order(" 1, 2", uuids, 3, o) == 2 && o[0] == 1 && o[1] == 2);
	CHECK(nvml_cuda_order("GPU-bbbb,GPU-aaaa0000-0000-0000-0000-000000000000", uuids, 3, o) == 2 &&
	      o[0] == 1 && o[1] == 0);
	/* As in CUDA: an entry naming nothing hides itself and what follows. */
	CHECK(nvml_cuda_order("1,7,0", uuids, 3, o) == 1 && o[0] == 1);
	CHECK(nvml_cuda_order("GPU-dddd,0", uuids, 3, o) == 0);
	CHECK(nvml_cuda_order("", uuids, 3, o) == 0);
	CHECK(nvml_cuda_order("-1", uuids, 3, o) == 0);
	CHECK(nvml_cuda_order("MIG-GPU-aaaa/1/0", uuids, 3, o) == -1);
}

static int make_dir(char *out, size_t len)
{
	const char *tmp = getenv("PROF_TEST_TMP");
	mkdir(tmp && *tmp ? tmp : "/tmp", 0755);
	snprintf(out, len, "%.900s/cuda_nvml_XXXXXX", tmp && *tmp ? tmp : "/tmp");
	return mkdtemp(out) ? open(out, O_RDONLY | O_DIRECTORY) : -1;
}

static void check_stream(const char *dir, uint64_t samples)
{
	char path[PATH_MAX], why[256];
	struct raw_file f;
	snprintf(path, sizeof path, "%s/%s", dir, NVML_SAMPLER_STREAM);
	CHECK(raw_file_open(&f, path, NULL, why, sizeof why) == 0);
	CHECK(f.hdr.kind == RAW_STREAM_DEVICE_SAMPLES && f.hdr.clock == RAW_CLOCK_MONOTONIC);
	CHECK(f.hdr.flags & RAW_FILE_CLOSED);
	struct raw_cursor c;
	struct raw_rec r;
	enum raw_next n;
	unsigned infos = 0, per_dev[2] = { 0, 0 }, bad = 0;
	raw_cursor_init(&c, &f, 0);
	while ((n = raw_cursor_next(&c, &r)) != RAW_NEXT_END) {
		if (n != RAW_NEXT_RECORD)
			continue;
		if (r.type == RAW_REC_DEV_INFO) {
			struct raw_dev_info i;
			memcpy(&i, r.payload, sizeof i);
			char want[32];
			snprintf(want, sizeof want, "Stub GPU %u", i.device);
			bad += infos != i.device || strcmp(raw_cursor_name(&c, i.name_id), want) != 0;
			bad += strncmp(raw_cursor_name(&c, i.uuid_id), "GPU-0000000", 11) != 0;
			bad += per_dev[0] + per_dev[1] != 0;   /* infos come first */
			infos++;
		} else if (r.type == RAW_REC_DEV_SAMPLE) {
			struct raw_dev_sample s;
			memcpy(&s, r.payload, sizeof s);
			bad += s.device > 1 || s.util_pct != 50 + s.device || s.sm_clock_mhz != 1980;
			if (s.device <= 1)
				per_dev[s.device]++;
		}
	}
	raw_cursor_free(&c);
	raw_file_close(&f);
	CHECK(infos == 2 && bad == 0);
	CHECK(per_dev[0] >= 2 && per_dev[0] == per_dev[1]);
	CHECK(per_dev[0] + per_dev[1] == samples);
}

/* CUDA_VISIBLE_DEVICES=1: NVML's device 1 is the program's device 0. */
static void check_one(const char *dir)
{
	char path[PATH_MAX], why[256];
	struct raw_file f;
	snprintf(path, sizeof path, "%.2000s/%s", dir, NVML_SAMPLER_STREAM);
	CHECK(raw_file_open(&f, path, NULL, why, sizeof why) == 0);
	struct raw_cursor c;
	struct raw_rec r;
	unsigned infos = 0, samples = 0, bad = 0;
	raw_cursor_init(&c, &f, 0);
	while (raw_cursor_next(&c, &r) != RAW_NEXT_END) {
		if (r.type == RAW_REC_DEV_INFO) {
			struct raw_dev_info i;
			memcpy(&i, r.payload, sizeof i);
			infos++;
			bad += i.device != 0 || strcmp(raw_cursor_name(&c, i.name_id), "Stub GPU 1");
		} else if (r.type == RAW_REC_DEV_SAMPLE) {
			struct raw_dev_sample d;
			memcpy(&d, r.payload, sizeof d);
			samples++;
			bad += d.device != 0 || d.util_pct != 51;
		}
	}
	raw_cursor_free(&c);
	raw_file_close(&f);
	CHECK(infos == 1 && samples >= 1 && bad == 0);
}

static void test_sampler(void)
{
	char dir[1024], log[1100];
	int dirfd = make_dir(dir, sizeof dir);
	CHECK(dirfd >= 0);
	snprintf(log, sizeof log, "%s/log", dir);
	int logfd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0640);

	/* No NVML: nothing starts, no stream, one line saying why. */
	struct nvml_sampler *s = (struct nvml_sampler *)1;
	setenv("PROF_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	CHECK(nvml_sampler_start(&s, dirfd, 100, logfd, NULL) == -ENOENT);
	CHECK(s == NULL);
	CHECK(faccessat(dirfd, NVML_SAMPLER_STREAM, F_OK, 0) != 0);
	CHECK(nvml_sampler_stop(NULL) == 0);

	/* Only what the program sees, renumbered as CUDA numbers it. */
	struct nvml_sampler *one = NULL;
	setenv("PROF_NVML_LIBRARY", PROF_TEST_NVML_STUB, 1);
	setenv("CUDA_VISIBLE_DEVICES", "1", 1);
	char sub[1100];
	snprintf(sub, sizeof sub, "%s/one", dir);
	mkdir(sub, 0750);
	int subfd = open(sub, O_RDONLY | O_DIRECTORY);
	CHECK(nvml_sampler_start(&one, subfd, 100, logfd, NULL) == 0);
	CHECK(nvml_sampler_stop(one) >= 1);
	check_one(sub);
	close(subfd);

	/* The stand-in: infos, then a sample per device each 100 ms (the
	 * floor: 20 ms is asked for). */
	setenv("PROF_NVML_LIBRARY", PROF_TEST_NVML_STUB, 1);
	unsetenv("CUDA_VISIBLE_DEVICES");
	CHECK(nvml_sampler_start(&s, dirfd, 20, logfd, NULL) == 0);
	struct timespec ts = { 0, 350 * 1000000L };
	nanosleep(&ts, NULL);
	uint64_t n = nvml_sampler_stop(s);
	CHECK(n >= 6 && n <= 12);   /* ~4 ticks of 2 devices, not 17 */
	check_stream(dir, n);
	unsetenv("PROF_NVML_LIBRARY");

	char text[1024] = "";
	close(logfd);
	int fd = open(log, O_RDONLY);
	ssize_t got = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
	text[got > 0 ? got : 0] = 0;
	if (fd >= 0)
		close(fd);
	CHECK_CONTAINS(text, "nvml sampler: off: no NVML library");
	CHECK_CONTAINS(text, "nvml sampler: 2 of 2 device(s), every 100 ms");
	close(dirfd);
}

int main(void)
{
	test_absent();
	test_stub_reads();
	test_cuda_order();
	test_sampler();
	return unit_done();
}

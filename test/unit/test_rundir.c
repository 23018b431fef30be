/* The run directory (naming, modes, refusals, the control page) and
 * profiler_info.json. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unit/unit.h"
#include "common/fsutil.h"
#include "config/config.h"
#include "run/info.h"
#include "run/rundir.h"

static char tmp[512];

static void make_tmp(void)
{
	const char *base = getenv("PROF_TEST_TMP");
	if (base && *base)
		mkdir(base, 0755);
	if (snprintf(tmp, sizeof tmp, "%.480s/rundir-XXXXXX", base && *base ? base : "/tmp")
	    >= (int)sizeof tmp || !mkdtemp(tmp)) {
		perror("mkdtemp");
		exit(1);
	}
}

static mode_t mode_of(const char *dir, const char *rel)
{
	char p[1024];
	struct stat st;
	snprintf(p, sizeof p, "%s/%s", dir, rel);
	return lstat(p, &st) == 0 ? st.st_mode : 0;
}

static void test_name(void)
{
	/* 2021-03-04 05:06:07.089 local time */
	struct tm tm = { .tm_year = 121, .tm_mon = 2, .tm_mday = 4, .tm_hour = 5,
			 .tm_min = 6, .tm_sec = 7, .tm_isdst = -1 };
	uint64_t ns = (uint64_t)mktime(&tm) * 1000000000ull + 89123456ull;
	char buf[256];
	rundir_name(buf, sizeof buf, "node-1.example", 4242, ns);
	CHECK_STR(buf, "node-1.example_4242_20210304050607089_prof");
	rundir_name(buf, sizeof buf, "a/b c", 7, ns);
	CHECK_STR(buf, "a_b_c_7_20210304050607089_prof");
	rundir_name(buf, sizeof buf, "", 7, ns);
	CHECK_STR(buf, "host_7_20210304050607089_prof");
}

static void test_check_output(void)
{
	char out[1024], link[1024], file[1024], err[RUNDIR_ERR_MAX];
	snprintf(out, sizeof out, "%s/new/nested", tmp);
	CHECK(rundir_check_output(out, err, sizeof err) == 0);
	CHECK(S_ISDIR(mode_of(out, ".")));

	snprintf(link, sizeof link, "%s/link", tmp);
	CHECK(symlink(out, link) == 0);
	CHECK(rundir_check_output(link, err, sizeof err) == -ELOOP);
	CHECK_CONTAINS(err, link);
	CHECK_CONTAINS(err, "symbolic link");
	/* A trailing slash would make lstat follow the link. */
	char slashed[1100];
	snprintf(slashed, sizeof slashed, "%s//", link);
	CHECK(rundir_check_output(slashed, err, sizeof err) == -ELOOP);
	struct rundir rd;
	CHECK(rundir_create(&rd, slashed, "x_prof", true, err, sizeof err) < 0);
	CHECK(mode_of(out, "x_prof") == 0);   /* nothing made through the link */

	snprintf(file, sizeof file, "%s/plain", tmp);
	close(open(file, O_CREAT | O_WRONLY, 0644));
	CHECK(rundir_check_output(file, err, sizeof err) == -ENOTDIR);
	CHECK_CONTAINS(err, file);

	if (geteuid() != 0) {   /* root writes anywhere */
		char ro[1024];
		snprintf(ro, sizeof ro, "%s/readonly", tmp);
		mkdir(ro, 0555);
		CHECK(rundir_check_output(ro, err, sizeof err) == -EACCES);
		CHECK_CONTAINS(err, "not writable");
	}
}

static void test_create(void)
{
	char out[1024], err[RUNDIR_ERR_MAX];
	snprintf(out, sizeof out, "%s/out", tmp);
	CHECK(rundir_check_output(out, err, sizeof err) == 0);
	mode_t old = umask(077);   /* the modes must not depend on it */
	struct rundir rd;
	CHECK(rundir_create(&rd, out, "h_1_20210304050607089_prof", true, err, sizeof err) == 0);
	umask(old);
	CHECK(rd.path && rd.path[0] == '/');
	CHECK(strstr(rd.path, "/out/h_1_20210304050607089_prof") != NULL);
	CHECK((mode_of(rd.path, ".") & 07777) == 0750);
	CHECK((mode_of(rd.path, "raw") & 07777) == 0750);
	CHECK((mode_of(rd.path, "raw/launcher") & 07777) == 0750);
	CHECK((mode_of(rd.path, "logs") & 07777) == 0750);
	CHECK((mode_of(rd.path, "raw/control") & 07777) == 0640);

	/* The control page as an agent sees it. */
	struct raw_control c;
	char p[1100];
	snprintf(p, sizeof p, "%s/raw/control", rd.path);
	int fd = open(p, O_RDONLY);
	CHECK(fd >= 0 && read(fd, &c, sizeof c) == (ssize_t)sizeof c);
	CHECK(c.magic == RAW_CONTROL_MAGIC && c.version == RAW_CONTROL_VERSION);
	CHECK(c.recording == 1 && c.generation == 1);
	rundir_set_recording(&rd, false);
	rundir_set_recording(&rd, false);   /* no change: no new generation */
	CHECK(pread(fd, &c, sizeof c, 0) == (ssize_t)sizeof c);
	CHECK(c.recording == 0 && c.generation == 2);
	rundir_set_recording(&rd, true);
	CHECK(pread(fd, &c, sizeof c, 0) == (ssize_t)sizeof c);
	CHECK(c.recording == 1 && c.generation == 3);
	struct stat st;
	CHECK(fstat(fd, &st) == 0 && st.st_size == sysconf(_SC_PAGESIZE));
	close(fd);
	rundir_close(&rd);

	/* The same name again, or something planted there: refused. */
	CHECK(rundir_create(&rd, out, "h_1_20210304050607089_prof", true, err, sizeof err) == -EEXIST);
	CHECK_CONTAINS(err, "h_1_20210304050607089_prof");
	char planted[1100];
	snprintf(planted, sizeof planted, "%s/h_2_x_prof", out);
	CHECK(symlink(tmp, planted) == 0);
	CHECK(rundir_create(&rd, out, "h_2_x_prof", true, err, sizeof err) == -EEXIST);
	CHECK(rd.fd < 0 && rd.path == NULL);
}

static void test_delay_starts_off(void)
{
	char out[1024], err[RUNDIR_ERR_MAX];
	snprintf(out, sizeof out, "%s/out", tmp);
	struct rundir rd;
	CHECK(rundir_create(&rd, out, "h_3_x_prof", false, err, sizeof err) == 0);
	CHECK(rd.control && rd.control->recording == 0 && rd.control->generation == 1);
	rundir_close(&rd);
}

static cJSON *info_json(const struct run_info *ri)
{
	char *text = info_to_json(ri);
	cJSON *j = text ? cJSON_Parse(text) : NULL;
	free(text);
	return j;
}

static void test_info_start(const struct run_info *ri)
{
	cJSON *j = info_json(ri);
	CHECK(j != NULL);
	cJSON *cmd = cJSON_GetObjectItem(j, "command");
	CHECK(cJSON_GetArraySize(cmd) == 3);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(cmd, 2)), "a b");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "child_pid")));
	CHECK(cJSON_GetObjectItem(j, "rank")->valuedouble == 3);
	cJSON *cfg = cJSON_GetObjectItem(j, "config");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "output_path")), "./prof_data");
	cJSON *env = cJSON_GetObjectItem(j, "env");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(env, "RANK")), "3");
	CHECK(cJSON_GetObjectItem(env, "HOME") == NULL);
	cJSON *clock = cJSON_GetObjectItem(j, "clock");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(clock, "raw_clock")), "tsc");
	CHECK(cJSON_GetObjectItem(clock, "end") == NULL);
	CHECK(cJSON_GetObjectItem(j, "end_info") == NULL);
	CHECK_CONTAINS(cJSON_GetStringValue(cJSON_GetObjectItem(j, "start_time")), "T");
	cJSON_Delete(j);
	/* Wall-clock ns exceed a double's exact range: written as integers. */
	char *text = info_to_json(ri);
	CHECK_CONTAINS(text, "\"real_ns\":\t1700000000123456789");
	free(text);
}

static void test_info_end(struct run_info *ri)
{
	ri->complete = true;
	ri->child_pid = 99;
	ri->end = (struct raw_clock_pair){ 3000, 2000, 1700000001123456789ull };
	ri->end_info = (struct info_end){ .exit_code = -1, .signal = 9, .signal_name = "SIGKILL",
					  .duration_ns = 1000, .totals_ok = true,
					  .totals = { 4, 100, 2, 1, 0 } };
	cJSON *j = info_json(ri);
	cJSON *e = cJSON_GetObjectItem(j, "end_info");
	CHECK(cJSON_GetObjectItem(j, "child_pid")->valuedouble == 99);
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(e, "exit_code")));
	CHECK(cJSON_GetObjectItem(e, "signal")->valuedouble == 9);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(e, "signal_name")), "SIGKILL");
	CHECK(cJSON_GetObjectItem(e, "records")->valuedouble == 100);
	CHECK(cJSON_GetObjectItem(e, "damaged_streams")->valuedouble == 1);
	CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "clock"), "end") != NULL);
	cJSON_Delete(j);

	ri->end_info = (struct info_end){ .exit_code = 3 };
	j = info_json(ri);
	e = cJSON_GetObjectItem(j, "end_info");
	CHECK(cJSON_GetObjectItem(e, "exit_code")->valuedouble == 3);
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(e, "signal")));
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(e, "records")));   /* totals unknown */
	cJSON_Delete(j);
}

static void test_info(void)
{
	struct prof_config cfg;
	cfg_defaults(&cfg);
	char *argv[] = { "python", "train.py", "a b", NULL };
	struct run_info ri = { .argv = argv, .host = "h", .launcher_pid = 10, .cfg = &cfg,
			       .clock = RAW_CLOCK_TSC, .tsc_hz = 3e9,
			       .start = { 1000, 1000, 1700000000123456789ull } };
	setenv("RANK", "3", 1);
	unsetenv("OMPI_COMM_WORLD_RANK");
	CHECK(info_rank() == 3);
	test_info_start(&ri);
	test_info_end(&ri);
	setenv("RANK", "x", 1);
	setenv("SLURM_PROCID", "5", 1);
	CHECK(info_rank() == 5);
	unsetenv("RANK");
	unsetenv("SLURM_PROCID");
	CHECK(info_rank() == -1);

	mode_t old = umask(077);
	CHECK(info_write(&ri, tmp) == 0);
	umask(old);
	CHECK((mode_of(tmp, RUNDIR_INFO_FILE) & 07777) == 0640);
	char *path = fs_join(tmp, RUNDIR_INFO_FILE), *text = NULL;
	CHECK(fs_read_file(path, &text, NULL) == 0);
	cJSON *j = text ? cJSON_Parse(text) : NULL;
	CHECK(j && cJSON_GetObjectItem(j, "end_info"));
	cJSON_Delete(j);
	free(text);
	free(path);
	cfg_free(&cfg);
}

int main(void)
{
	make_tmp();
	test_name();
	test_check_output();
	test_create();
	test_delay_starts_off();
	test_info();
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	CHECK(system(cmd) == 0);
	return unit_done();
}

/*
 * libFuzzer harness for the whole parse (lib/pipeline/parse.h), where
 * fuzz_raw stops at the reader: the input is the one raw stream of a run
 * directory in tmpfs (in the launcher's directory when its header says a
 * launcher's kind, else in a process image's), parsed by parse_run_dir as
 * `prof parse` parses it; its outputs are removed again. Checks the
 * contract: a parse that fails says why and leaves no parse.done; one
 * that does not leaves parse.done, and JSON and CSV outputs that prof's
 * own readers read back.
 * PROF_FUZZ_TMP names where the work directory goes (default /dev/shm).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cjson/cJSON.h>
#include <dirent.h>
#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/agent_env.h"
#include "common/fsutil.h"
#include "pipeline/parse.h"
#include "raw/raw_format.h"
#include "stats/csv_read.h"

static char fp_run[4096], fp_out[4200], fp_image_dir[4200], fp_launcher_dir[4200];

static int fp_rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(p);
}

static void fp_rm_tree(const char *dir)
{
	nftw(dir, fp_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void fp_cleanup(void)
{
	fp_rm_tree(fp_run);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	const char *base = getenv("PROF_FUZZ_TMP");
	if (!base || !*base)
		base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(fp_run, sizeof fp_run, "%s/prof-fuzz-parse.XXXXXX", base);
	if (!mkdtemp(fp_run)) {
		perror(fp_run);
		abort();
	}
	snprintf(fp_out, sizeof fp_out, "%s/PROFILER_OUTPUT", fp_run);
	snprintf(fp_image_dir, sizeof fp_image_dir, "%s/%s/100.0", fp_run, PROF_RAW_DIR);
	snprintf(fp_launcher_dir, sizeof fp_launcher_dir, "%s/%s/%s", fp_run, PROF_RAW_DIR,
		 PROF_LAUNCHER_STREAMS);
	char info[4300];
	snprintf(info, sizeof info, "%s/profiler_info.json", fp_run);
	static const char text[] = "{\"clock\": {\"start\": {\"mono_ns\": 1000, "
				   "\"real_ns\": 1700000000000000000}}}\n";
	FILE *f = fopen(info, "w");
	if (fs_mkdir_p(fp_image_dir) != 0 || fs_mkdir_p(fp_launcher_dir) != 0 || !f ||
	    fputs(text, f) < 0 || fclose(f) != 0)
		abort();
	atexit(fp_cleanup);
	return 0;
}

/* Where the stream goes: by the kind its header says, when it has one. */
static const char *fp_dir_for(const uint8_t *data, size_t size)
{
	uint32_t kind = 0;
	if (size >= offsetof(struct raw_file_header, kind) + sizeof kind)
		memcpy(&kind, data + offsetof(struct raw_file_header, kind), sizeof kind);
	return kind == RAW_STREAM_HOST || kind == RAW_STREAM_LAUNCHER ||
	       kind == RAW_STREAM_DEVICE_SAMPLES ? fp_launcher_dir : fp_image_dir;
}

static void fp_write_stream(const char *dir, const uint8_t *data, size_t size)
{
	char path[4300];
	snprintf(path, sizeof path, "%s/s.raw", dir);
	FILE *f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		abort();
}

/* Every output read back: JSON by cJSON, CSV by prof stats' reader. */
static void fp_check_outputs(void)
{
	DIR *d = opendir(fp_out);
	struct dirent *e;
	if (!d)
		__builtin_trap();
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		int json = n > 5 && !strcmp(e->d_name + n - 5, ".json");
		int csv = n > 4 && !strcmp(e->d_name + n - 4, ".csv");
		char path[4500], *text = NULL, err[256];
		size_t len = 0;
		snprintf(path, sizeof path, "%s/%s", fp_out, e->d_name);
		if ((!json && !csv) || fs_read_file(path, &text, &len) != 0)
			continue;
		if (json) {
			cJSON *v = cJSON_ParseWithLength(text, len);
			if (!v)
				__builtin_trap();   /* an output that is not JSON */
			cJSON_Delete(v);
		} else {
			struct csv_table t;
			if (csv_table_parse(&t, text, len, err, sizeof err) != 0)
				__builtin_trap();   /* a table prof stats cannot read */
			csv_table_free(&t);
		}
		free(text);
	}
	closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dir = fp_dir_for(data, size);
	fp_write_stream(dir, data, size);
	char *log_text = NULL, done[4300];
	size_t log_len = 0;
	FILE *log = open_memstream(&log_text, &log_len);
	if (!log)
		abort();
	struct parse_opts o = { .log = log, .quiet = 1 };
	struct parse_report r;
	enum parse_status st = parse_run_dir(fp_run, &o, &r);
	fclose(log);
	snprintf(done, sizeof done, "%s/parse.done", fp_out);
	int has_done = access(done, F_OK) == 0;
	if (st == PARSE_FAILED && (has_done || log_len == 0))
		__builtin_trap();   /* a failure without its reason, or with outputs */
	if (st != PARSE_FAILED && (!has_done || (st != PARSE_OK && st != PARSE_DAMAGED)))
		__builtin_trap();
	if (st != PARSE_FAILED)
		fp_check_outputs();
	free(log_text);
	fp_rm_tree(fp_out);
	char path[4300];
	snprintf(path, sizeof path, "%s/s.raw", dir);
	remove(path);
	return 0;
}

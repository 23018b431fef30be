/*
 * Replays the fuzzers' corpora (test/fixtures/fuzz/<name>/: the seeds and
 * every input that once crashed a harness, regress-*) through the very
 * harnesses of test/fuzz/, so that a plain build catches a regression
 * without clang. A harness that finds a fault traps; ctest sees the crash.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdlib.h>

#define LLVMFuzzerTestOneInput fuzz_raw_one
#include "fuzz/fuzz_raw.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_config_one
#include "fuzz/fuzz_config.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_archive_one
#define LLVMFuzzerInitialize fuzz_archive_init
#include "fuzz/fuzz_archive.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_csv_one
#include "fuzz/fuzz_csv.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize
#define LLVMFuzzerTestOneInput fuzz_parse_one
#define LLVMFuzzerInitialize fuzz_parse_init
#include "fuzz/fuzz_parse.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize
#define LLVMFuzzerTestOneInput fuzz_kineto_one
#include "fuzz/fuzz_kineto.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_nvtx_one
#include "fuzz/fuzz_nvtx.c"
#undef LLVMFuzzerTestOneInput

#include "common/fsutil.h"
#include "unit.h"

static int replay(const char *name, int (*one)(const uint8_t *, size_t))
{
	const char *fx = getenv("PROF_TEST_FIXTURES");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/fuzz/%s", fx && *fx ? fx : "test/fixtures", name);
	DIR *d = opendir(dir);
	CHECK(d != NULL);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[4400];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		CHECK(f != NULL);
		if (!f)
			continue;
		uint8_t *buf = malloc(1u << 20);
		size_t len = fread(buf, 1, 1u << 20, f);
		fclose(f);
		/* an exact-size copy, as libFuzzer passes it */
		uint8_t *in = malloc(len ? len : 1);
		memcpy(in, buf, len);
		CHECK(one(in, len) == 0);
		/* the input is const: a harness (or the reader) must not change it */
		CHECK(memcmp(in, buf, len) == 0);
		free(buf);
		free(in);
		n++;
	}
	closedir(d);
	printf("%s: %d inputs\n", name, n);
	return n;
}

int main(void)
{
	const char *tmp = getenv("PROF_TEST_TMP");
	if (tmp && *tmp) {
		fs_mkdir_p(tmp);
		setenv("PROF_FUZZ_TMP", tmp, 1);
	}
	CHECK(replay("raw", fuzz_raw_one) >= 4);
	CHECK(replay("config", fuzz_config_one) >= 4);
	fuzz_archive_init(NULL, NULL);
	CHECK(replay("archive", fuzz_archive_one) >= 3);
	CHECK(replay("csv", fuzz_csv_one) >= 4);
	fuzz_parse_init(NULL, NULL);
	CHECK(replay("raw", fuzz_parse_one) >= 4);   /* its seeds, as run.sh gives them */
	CHECK(replay("parse", fuzz_parse_one) >= 1);
	CHECK(replay("kineto", fuzz_kineto_one) >= 1);
	CHECK(replay("nvtx", fuzz_nvtx_one) >= 5);
	return unit_done();
}

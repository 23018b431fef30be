/*
 * libFuzzer harness for archive input (lib/archive/archive.h): the input
 * is an archive's bytes, written to a work directory in tmpfs and
 * extracted with small limits into a fresh directory, which is removed
 * again. Checks the contract too: on failure nothing is kept, and nothing
 * is ever written beside the extraction directory.
 * PROF_FUZZ_TMP names where the work directory goes (default /dev/shm).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive.h"

static char work[4096], in_path[4200], out_dir[4200];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	/* a directory extracted without write permission still goes */
	if (flag == FTW_DP)
		chmod(p, 0700);
	return remove(p);
}

/* Entries of `dir` other than "." and ".."; -1 if it can't be read. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void cleanup(void)
{
	nftw(work, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	const char *base = getenv("PROF_FUZZ_TMP");
	if (!base || !*base)
		base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(work, sizeof work, "%s/prof-fuzz-archive.XXXXXX", base);
	if (!mkdtemp(work)) {
		perror(work);
		abort();
	}
	snprintf(in_path, sizeof in_path, "%s/in.tar.gz", work);
	snprintf(out_dir, sizeof out_dir, "%s/out", work);
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nftw(out_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	if (mkdir(out_dir, 0700) != 0)
		abort();
	int fd = open(in_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || close(fd) != 0)
		abort();

	struct arc_limits lim = { .max_entry = 1u << 20, .max_total = 4u << 20 };
	struct arc_error err;
	char *dir = NULL;
	enum arc_status st = arc_extract(in_path, out_dir, &lim, &dir, &err);
	if (st == ARC_OK) {
		if (!dir || strncmp(dir, out_dir, strlen(out_dir)) != 0)
			__builtin_trap();  /* extracted somewhere else */
	} else {
		if (dir || !err.msg[0])
			__builtin_trap();  /* failure without a message, or with a result */
		if (entries(out_dir) != 0)
			__builtin_trap();  /* a refused archive left something behind */
	}
	if (entries(work) != 2)
		__builtin_trap();          /* something was written beside out/ */
	free(dir);
	return 0;
}

/* lib/archive: pack and extract round trips, and every kind of hostile
 * archive refused with its reason and nothing left behind. The archives
 * are built here with libarchive. */
#define _GNU_SOURCE
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive.h"
#include "config/config.h"
#include "unit.h"

static char base[512];
static int case_no;

struct ent {
	const char *name;
	mode_t type;          /* AE_IF*; 0 ends the list */
	const char *data;     /* regular files */
	long long size;       /* -1: strlen(data); else header size, data repeated */
	const char *link;     /* symlink target or hardlink source */
	int hard;
};

enum kind { K_TARGZ, K_ZIP, K_TARZST };

static int write_archive(const char *path, enum kind k, const struct ent *e)
{
	struct archive *a = archive_write_new();
	if (k == K_ZIP) {
		archive_write_set_format_zip(a);
	} else {
		archive_write_set_format_pax_restricted(a);
		if ((k == K_TARGZ ? archive_write_add_filter_gzip(a)
				  : archive_write_add_filter_zstd(a)) != ARCHIVE_OK) {
			archive_write_free(a);
			return -1;
		}
	}
	if (archive_write_open_filename(a, path) != ARCHIVE_OK) {
		archive_write_free(a);
		return -1;
	}
	struct archive_entry *ae = archive_entry_new();
	for (; e->type; e++) {
		archive_entry_clear(ae);
		archive_entry_set_pathname(ae, e->name);
		archive_entry_set_filetype(ae, e->type);
		archive_entry_set_perm(ae, e->type == AE_IFDIR ? 0755 : 0644);
		long long size = 0;
		if (e->type == AE_IFREG && !e->hard)
			size = e->size >= 0 ? e->size : (long long)strlen(e->data);
		archive_entry_set_size(ae, size);
		if (e->link && e->hard)
			archive_entry_set_hardlink(ae, e->link);
		else if (e->link)
			archive_entry_set_symlink(ae, e->link);
		archive_write_header(a, ae);
		size_t dl = e->data ? strlen(e->data) : 0;
		for (long long done = 0; dl && done < size;) {
			size_t n = size - done < (long long)dl ? (size_t)(size - done) : dl;
			archive_write_data(a, e->data, n);
			done += (long long)n;
		}
	}
	archive_entry_free(ae);
	archive_write_close(a);
	archive_write_free(a);
	return 0;
}

static char *new_case(void)
{
	char *d;
	if (asprintf(&d, "%s/c%d", base, ++case_no) < 0 || mkdir(d, 0755) != 0)
		return NULL;
	return d;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *de;
	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* Builds the archive in a fresh case directory, extracts it into case/x
 * with `lim`, expects a refusal whose message contains `why`, and checks
 * that nothing was left in case/x nor created in case/. */
static void refused(const char *label, enum kind k, const struct ent *e,
		    const struct arc_limits *lim, const char *why)
{
	char *c = new_case(), arch[600], parent[600], *out = NULL;
	struct arc_error err;
	snprintf(arch, sizeof arch, "%s/a.%s", c, k == K_ZIP ? "zip" : "tar.gz");
	snprintf(parent, sizeof parent, "%s/x", c);
	mkdir(parent, 0755);
	CHECK(write_archive(arch, k, e) == 0);
	enum arc_status st = arc_extract(arch, parent, lim, &out, &err);
	if (st != ARC_REFUSED)
		fprintf(stderr, "case %s: status %d: %s\n", label, st, err.msg);
	CHECK(st == ARC_REFUSED);
	if (getenv("ARC_TEST_VERBOSE"))
		printf("%s: %s\n", label, err.msg);
	CHECK(out == NULL);
	CHECK_CONTAINS(err.msg, why);
	CHECK_CONTAINS(err.msg, arch);
	CHECK(count_entries(parent) == 0);   /* the fresh directory was removed */
	CHECK(count_entries(c) == 2);        /* a.*, x: nothing escaped */
	free(c);
}

static void test_hostile(void)
{
	struct arc_limits small = { 100, 150 };
	char abs_target[600];
	snprintf(abs_target, sizeof abs_target, "%s/c%d/evil", base, case_no + 1);
	const struct ent absolute[] = {
		{ "top/", AE_IFDIR, NULL, 0, NULL, 0 },
		{ abs_target, AE_IFREG, "pwned", -1, NULL, 0 }, { 0 } };
	refused("absolute", K_TARGZ, absolute, NULL, "an absolute path");
	CHECK(!exists(abs_target));
	const struct ent dotdot[] = {
		{ "top/a", AE_IFREG, "ok", -1, NULL, 0 },
		{ "top/../../evil", AE_IFREG, "pwned", -1, NULL, 0 }, { 0 } };
	refused("dotdot", K_TARGZ, dotdot, NULL, "\"..\" component");
	const struct ent dotdot_zip[] = {
		{ "../evil", AE_IFREG, "pwned", -1, NULL, 0 }, { 0 } };
	refused("dotdot zip", K_ZIP, dotdot_zip, NULL, "\"..\" component");
	const struct ent symlink[] = {
		{ "top/", AE_IFDIR, NULL, 0, NULL, 0 },
		{ "top/link", AE_IFLNK, NULL, 0, "/etc", 0 },
		{ "top/link/passwd", AE_IFREG, "pwned", -1, NULL, 0 }, { 0 } };
	refused("symlink", K_TARGZ, symlink, NULL, "entry \"top/link\": a symbolic link");
	const struct ent symlink_zip[] = {
		{ "top/link", AE_IFLNK, NULL, 0, "../..", 0 }, { 0 } };
	refused("symlink zip", K_ZIP, symlink_zip, NULL, "a symbolic link");
	const struct ent hardlink[] = {
		{ "top/a", AE_IFREG, "ok", -1, NULL, 0 },
		{ "top/b", AE_IFREG, NULL, 0, "top/a", 1 }, { 0 } };
	refused("hardlink", K_TARGZ, hardlink, NULL, "entry \"top/b\": a hard link");
	const struct ent chr[] = {
		{ "top/null", AE_IFCHR, NULL, 0, NULL, 0 }, { 0 } };
	refused("chardev", K_TARGZ, chr, NULL, "a character device");
	const struct ent blk[] = {
		{ "top/sda", AE_IFBLK, NULL, 0, NULL, 0 }, { 0 } };
	refused("blockdev", K_TARGZ, blk, NULL, "a block device");
	const struct ent fifo[] = {
		{ "top/", AE_IFDIR, NULL, 0, NULL, 0 },
		{ "top/fifo", AE_IFIFO, NULL, 0, NULL, 0 }, { 0 } };
	refused("fifo", K_TARGZ, fifo, NULL, "entry \"top/fifo\": a FIFO");
	const struct ent big[] = {
		{ "top/small", AE_IFREG, "0123456789", 50, NULL, 0 },
		{ "top/big", AE_IFREG, "0123456789", 101, NULL, 0 }, { 0 } };
	refused("oversized entry", K_TARGZ, big, &small,
		"entry \"top/big\": 101 bytes, larger than the limit of 100 bytes per entry");
	refused("oversized entry zip", K_ZIP, big, &small, "larger than the limit of 100");
	const struct ent total[] = {
		{ "top/a", AE_IFREG, "0123456789", 80, NULL, 0 },
		{ "top/b", AE_IFREG, "0123456789", 80, NULL, 0 }, { 0 } };
	refused("total", K_TARGZ, total, &small, "exceed the limit of 150 bytes in all");
	const struct ent two_tops[] = {
		{ "one/a", AE_IFREG, "ok", -1, NULL, 0 },
		{ "two/b", AE_IFREG, "ok", -1, NULL, 0 }, { 0 } };
	refused("two tops", K_TARGZ, two_tops, NULL,
		"entry \"two/b\": outside the top-level directory \"one\"");
	const struct ent top_file[] = {
		{ "lonely.txt", AE_IFREG, "ok", -1, NULL, 0 }, { 0 } };
	refused("top file", K_ZIP, top_file, NULL, "a file at the top level");
	const struct ent dup[] = {
		{ "top/a", AE_IFREG, "one", -1, NULL, 0 },
		{ "top/a", AE_IFREG, "two", -1, NULL, 0 }, { 0 } };
	refused("duplicate", K_TARGZ, dup, NULL, "a duplicate entry");
	const struct ent empty[] = { { 0 } };
	refused("empty", K_TARGZ, empty, NULL, "an empty archive");
}

/* A file that is not an archive, and a good archive cut in half. */
static void test_damaged(void)
{
	char *c = new_case(), path[600], parent[600], *out = NULL;
	struct arc_error err;
	snprintf(parent, sizeof parent, "%s/x", c);
	mkdir(parent, 0755);
	snprintf(path, sizeof path, "%s/garbage.tar.gz", c);
	FILE *f = fopen(path, "w");
	for (int i = 0; i < 4096; i++)
		fputc((i * 7919) & 0xff, f);
	fclose(f);
	CHECK(arc_extract(path, parent, NULL, &out, &err) == ARC_REFUSED);
	CHECK_CONTAINS(err.msg, "garbage.tar.gz: refused");
	CHECK(count_entries(parent) == 0);

	static char data[300000];
	for (size_t i = 0; i < sizeof data - 1; i++)
		data[i] = (char)('a' + (i * 31 + i / 7) % 26);
	const struct ent good[] = {
		{ "top/raw/big", AE_IFREG, data, -1, NULL, 0 }, { 0 } };
	snprintf(path, sizeof path, "%s/cut.tar.gz", c);
	CHECK(write_archive(path, K_TARGZ, good) == 0);
	struct stat st;
	CHECK(stat(path, &st) == 0);
	CHECK(truncate(path, st.st_size / 2) == 0);
	CHECK(arc_extract(path, parent, NULL, &out, &err) == ARC_REFUSED);
	CHECK_CONTAINS(err.msg, "cut.tar.gz: refused");
	CHECK(out == NULL);
	CHECK(count_entries(parent) == 0);

	snprintf(path, sizeof path, "%s/missing.zip", c);
	CHECK(arc_extract(path, parent, NULL, &out, &err) == ARC_IO);
	CHECK_CONTAINS(err.msg, "No such file");
	free(c);
}

static void good_one(enum kind k, const char *ext)
{
	static char data[200000];
	for (size_t i = 0; i < sizeof data - 1; i++)
		data[i] = (char)('A' + i % 23);
	const struct ent good[] = {
		{ "./run_prof/", AE_IFDIR, NULL, 0, NULL, 0 },
		{ "./run_prof/profiler_info.json", AE_IFREG, "{\"a\": 1}", -1, NULL, 0 },
		{ "run_prof/raw/p1/stream.bin", AE_IFREG, data, -1, NULL, 0 },
		{ "run_prof//logs/", AE_IFDIR, NULL, 0, NULL, 0 }, { 0 } };
	char *c = new_case(), arch[600], parent[600], p[700], *out = NULL, *out2 = NULL;
	struct arc_error err;
	snprintf(arch, sizeof arch, "%s/run_prof.%s", c, ext);
	snprintf(parent, sizeof parent, "%s/x", c);
	mkdir(parent, 0755);
	if (write_archive(arch, k, good) != 0) {
		printf("skipped: cannot write %s here\n", ext);
		free(c);
		return;
	}
	CHECK(arc_extract(arch, parent, NULL, &out, &err) == ARC_OK);
	snprintf(p, sizeof p, "%s/run_prof", parent);
	CHECK_STR(out, p);   /* moved to parent/top: the name was free */
	snprintf(p, sizeof p, "%s/run_prof/raw/p1/stream.bin", parent);
	CHECK_STR(slurp(p), data);
	struct stat st;
	CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0640);
	snprintf(p, sizeof p, "%s/run_prof/raw", parent);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0750);
	snprintf(p, sizeof p, "%s/run_prof/logs", parent);
	CHECK(stat(p, &st) == 0 && S_ISDIR(st.st_mode));
	snprintf(p, sizeof p, "%s/run_prof/profiler_info.json", parent);
	CHECK_STR(slurp(p), "{\"a\": 1}");
	CHECK(count_entries(parent) == 1);
	/* again: parent/run_prof is taken, so it stays in its fresh directory */
	CHECK(arc_extract(arch, parent, NULL, &out2, &err) == ARC_OK);
	CHECK(out2 && strcmp(out, out2) != 0);
	CHECK_CONTAINS(out2, "/run_prof.");
	snprintf(p, sizeof p, "%s/raw/p1/stream.bin", out2 ? out2 : "");
	CHECK_STR(slurp(p), data);
	CHECK(count_entries(parent) == 2);
	free(out);
	free(out2);
	free(c);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror(path);
		close(fd);
	}
}

static void pack_round_trip(enum arc_format f)
{
	char *c = new_case(), d[600], p[700], *out = NULL, *back = NULL;
	struct arc_error err;
	uint64_t skipped = 0;
	snprintf(d, sizeof d, "%s/h_1_2_prof", c);
	mkdir(d, 0750);
	snprintf(p, sizeof p, "%s/raw", d);
	mkdir(p, 0750);
	snprintf(p, sizeof p, "%s/raw/s.bin", d);
	write_file(p, "stream bytes");
	chmod(p, 0600);
	snprintf(p, sizeof p, "%s/profiler_info.json", d);
	write_file(p, "{}");
	snprintf(p, sizeof p, "%s/raw/link", d);
	CHECK(symlink("/etc/passwd", p) == 0);
	snprintf(p, sizeof p, "%s/raw/fifo", d);
	CHECK(mkfifo(p, 0600) == 0);
	strcat(d, "/");   /* a trailing slash names the same directory */
	enum arc_status st = arc_pack(d, f, &out, &skipped, &err);
	if (st == ARC_UNSUPPORTED) {
		printf("skipped: %s\n", err.msg);
		free(c);
		return;
	}
	CHECK(st == ARC_OK);
	CHECK(skipped == 2);
	snprintf(p, sizeof p, "%s/h_1_2_prof.%s", c, arc_format_ext(f));
	CHECK_STR(out, p);
	CHECK(count_entries(c) == 2);   /* no temporary left */
	/* extract it elsewhere: the listing is the directory's, modes kept */
	snprintf(p, sizeof p, "%s/y", c);
	mkdir(p, 0755);
	CHECK(arc_extract(out, p, NULL, &back, &err) == ARC_OK);
	snprintf(p, sizeof p, "%s/raw/s.bin", back ? back : "");
	CHECK_STR(slurp(p), "stream bytes");
	snprintf(p, sizeof p, "%s/raw", back ? back : "");
	CHECK(count_entries(p) == 1);   /* neither the link nor the FIFO */
	struct archive *a = archive_read_new();
	archive_read_support_format_all(a);
	archive_read_support_filter_all(a);
	struct archive_entry *e;
	int n = 0, mode_ok = 0;
	if (archive_read_open_filename(a, out, 10240) == ARCHIVE_OK)
		while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
			n++;
			CHECK(strncmp(archive_entry_pathname(e), "h_1_2_prof", 10) == 0);
			if (strcmp(archive_entry_pathname(e), "h_1_2_prof/raw/s.bin") == 0)
				mode_ok = (archive_entry_perm(e) & 0777) == 0600;
		}
	archive_read_free(a);
	CHECK(n == 4);   /* the dir, raw/, raw/s.bin, profiler_info.json */
	CHECK(mode_ok);
	free(out);
	free(back);
	free(c);
}

static void test_names_and_config(void)
{
	enum arc_format f;
	CHECK(arc_format_from_name("tar.gz", &f) == 0 && f == ARC_TAR_GZ);
	CHECK(arc_format_from_name("zip", &f) == 0 && f == ARC_ZIP);
	CHECK(arc_format_from_name("rar", &f) != 0);
	CHECK(arc_is_archive_name("a/b_prof.tgz"));
	CHECK(arc_is_archive_name("b_prof.tar.zst"));
	CHECK(!arc_is_archive_name("b_prof"));
	CHECK(!arc_is_archive_name(".zip"));

	struct prof_config c;
	struct cfg_error e;
	char pending[256];
	cfg_defaults(&c);
	CHECK(c.archive == CFG_ARCHIVE_NONE);
	CHECK(cfg_apply_json(&c, "{\"archive\": true}", "T", &e) == 0);
	CHECK(c.archive == CFG_ARCHIVE_TAR_GZ);
	cfg_pending_keys(&c, pending, sizeof pending);
	CHECK_STR(pending, "");   /* acted on now */
	CHECK(cfg_apply_json(&c, "{\"archive\": \"zip\"}", "T", &e) == 0);
	CHECK(c.archive == CFG_ARCHIVE_ZIP);
	char *json = cfg_to_json(&c);
	CHECK_CONTAINS(json, "\"archive\":\t\"zip\"");
	free(json);
	CHECK(cfg_set(&c, "archive", "tar.zst", "--archive", &e) == 0);
	CHECK(c.archive == CFG_ARCHIVE_TAR_ZST);
	CHECK(cfg_apply_json(&c, "{\"archive\": false}", "T", &e) == 0);
	CHECK(c.archive == CFG_ARCHIVE_NONE);
	CHECK(cfg_set(&c, "archive", "rar", "--archive", &e) != 0);
	CHECK_CONTAINS(e.msg, "archive");
	CHECK_CONTAINS(e.msg, "none, tar.gz, tar.zst, zip");
	CHECK(cfg_apply_json(&c, "{\"archive\": 3}", "T", &e) != 0);
	cfg_free(&c);
}

int main(void)
{
	const char *t = getenv("PROF_TEST_TMP");
	if (!t || !*t)
		t = "/tmp";
	mkdir(t, 0755);
	snprintf(base, sizeof base, "%s/test_archive.XXXXXX", t);
	if (!mkdtemp(base)) {
		perror(base);
		return 1;
	}
	test_names_and_config();
	test_hostile();
	test_damaged();
	good_one(K_TARGZ, "tar.gz");
	good_one(K_ZIP, "zip");
	good_one(K_TARZST, "tar.zst");
	pack_round_trip(ARC_TAR_GZ);
	pack_round_trip(ARC_ZIP);
	pack_round_trip(ARC_TAR_ZST);
	int rc = unit_done();
	if (!rc) {
		char cmd[600];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", base);
	}
	return rc;
}

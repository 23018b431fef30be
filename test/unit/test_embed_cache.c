/* The static build's cache (launcher/embed_cache.c) with a table made
 * here, so the normal build tests it too: SHA-256 against FIPS 180-4's
 * vectors (fed in odd pieces), a first unpack, a second use that writes
 * nothing, a changed and a truncated file replaced, a link where the cache
 * directory should be refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/sha256.h"
#include "launcher/embed_cache.h"
#include "unit/unit.h"

static void hex(const uint8_t h[SHA256_LEN], char out[2 * SHA256_LEN + 1])
{
	for (int i = 0; i < SHA256_LEN; i++)
		sprintf(out + 2 * i, "%02x", h[i]);
}

static void test_sha256(void)
{
	uint8_t h[SHA256_LEN];
	char s[2 * SHA256_LEN + 1];
	sha256_of("", 0, h);
	hex(h, s);
	CHECK_STR(s, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha256_of("abc", 3, h);
	hex(h, s);
	CHECK_STR(s, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	struct sha256 c;
	sha256_init(&c);
	char a[1000];
	memset(a, 'a', sizeof a);
	for (size_t left = 1000000, n = 1; left; n = n % 997 + 1) {
		size_t take = n < left ? n : left;
		sha256_update(&c, a, take);
		left -= take;
	}
	sha256_final(&c, h);
	hex(h, s);
	CHECK_STR(s, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static char *slurp(const char *dir, const char *rel)
{
	char *p = fs_join(dir, rel), *data = NULL;
	size_t len;
	if (fs_read_file(p, &data, &len) != 0)
		data = NULL;
	free(p);
	return data;
}

static void test_cache(void)
{
	static const char agent[] = "not really an agent\n", hook[] = "print('hook')\n";
	struct embed_file f[2] = {
		{ "lib/prof/libprof_agent.so", (const unsigned char *)agent, sizeof agent - 1, 0755, { 0 } },
		{ "share/prof/python/sitecustomize.py", (const unsigned char *)hook, sizeof hook - 1, 0644, { 0 } },
	};
	for (int i = 0; i < 2; i++)
		sha256_of(f[i].data, f[i].size, f[i].sha256);
	struct embed_table t = { "0.0.0-test", 2, f };

	char base[] = "/tmp/prof-embed-XXXXXX";
	CHECK(mkdtemp(base) != NULL);
	char *root = NULL;
	CHECK(embed_cache_root(&t, base, &root) == 0);
	char *got = root ? slurp(root, f[0].path) : NULL;
	CHECK_STR(got, agent);
	free(got);
	struct stat st;
	char *p = root ? fs_join(root, "lib/prof") : NULL;
	CHECK(p && stat(p, &st) == 0 && (st.st_mode & 0777) == 0700);
	free(p);

	/* changed, then truncated: both written again */
	p = root ? fs_join(root, f[1].path) : NULL;
	FILE *w = p ? fopen(p, "a") : NULL;
	CHECK(w != NULL);
	if (w) {
		fputs("x = 1\n", w);
		fclose(w);
	}
	char *again = NULL;
	CHECK(embed_cache_root(&t, base, &again) == 0);
	got = root ? slurp(root, f[1].path) : NULL;
	CHECK_STR(got, hook);
	free(got);
	CHECK(p && truncate(p, 3) == 0);
	free(again);
	CHECK(embed_cache_root(&t, base, &again) == 0);
	got = root ? slurp(root, f[1].path) : NULL;
	CHECK_STR(got, hook);
	free(got);
	free(again);
	free(p);

	/* the prof directory a link: refused, nothing written where it points */
	char *prof = fs_join(base, "prof"), *moved = fs_join(base, "moved");
	CHECK(rename(prof, moved) == 0);
	CHECK(symlink(moved, prof) == 0);
	again = NULL;
	CHECK(embed_cache_root(&t, base, &again) == -1);
	CHECK(again == NULL);
	free(prof);
	free(moved);
	free(root);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf %s", base);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	test_sha256();
	test_cache();
	return unit_done();
}

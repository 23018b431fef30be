/* The JSON and CSV writers: escaping, layout, number formats. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>
#include <unistd.h>

#include "common/copy.h"
#include "common/csv_out.h"
#include "common/json_out.h"
#include "common/scan.h"
#include "unit/unit.h"

static char *esc(const char *s, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	jo_escape(&sb, s, n);
	return sb_detach(&sb);
}

static void check_esc(const char *in, size_t n, const char *want)
{
	char *got = esc(in, n);
	CHECK_STR(got, want);
	free(got);
}

static void test_escape(void)
{
	check_esc("plain", 5, "plain");
	check_esc("a\"b\\c", 5, "a\\\"b\\\\c");
	check_esc("l1\nl2\r\t", 7, "l1\\nl2\\r\\t");
	check_esc("\x01\x1f", 2, "\\u0001\\u001f");
	check_esc("nul\0in", 6, "nul\\u0000in");
	check_esc("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	check_esc("bad\xff", 4, "bad\\ufffd");
	check_esc("\xc3", 1, "\\ufffd");                /* cut short */
	check_esc("\xc0\xaf", 2, "\\ufffd\\ufffd");     /* overlong */
	check_esc("\xed\xa0\x80", 3, "\\ufffd\\ufffd\\ufffd"); /* surrogate */
	check_esc("\xf4\x90\x80\x80", 4, "\\ufffd\\ufffd\\ufffd\\ufffd"); /* > U+10FFFF */
}

static void check_us(int64_t ns, const char *want)
{
	char b[32];
	CHECK(jo_fmt_us3(b, ns) == strlen(want));
	CHECK_STR(b, want);
}

static void test_us(void)
{
	check_us(0, "0.000");
	check_us(1, "0.001");
	check_us(999, "0.999");
	check_us(1000, "1.000");
	check_us(1234567, "1234.567");
	check_us(-1500, "-1.500");
	check_us(-1, "-0.001");
	check_us(INT64_MAX, "9223372036854775.807");
	check_us(INT64_MIN, "-9223372036854775.808");
	/* the short form below 10 ms, and past it, against printf */
	char want[32];
	for (int64_t v = 0; v < 10020000; v += v < 20000 || v > 9990000 ? 1 : 37) {
		snprintf(want, sizeof want, "%lld.%03lld", (long long)(v / 1000), (long long)(v % 1000));
		check_us(v, want);
	}
}

/* Integers against printf at every digit-count boundary and the extremes. */
static void test_ints(void)
{
	char b[32], want[32];
	uint64_t p = 1;
	for (int k = 0; k <= 20; k++) {
		uint64_t vs[3] = { p - 1, p, p + 1 };
		for (int i = 0; i < 3; i++) {
			size_t n = jo_fmt_uint(b, vs[i]);
			snprintf(want, sizeof want, "%llu", (unsigned long long)vs[i]);
			CHECK(n == strlen(want) && memcmp(b, want, n) == 0);
			int64_t sv = (int64_t)vs[i];
			n = jo_fmt_int(b, -sv);
			snprintf(want, sizeof want, "%lld", (long long)-sv);
			CHECK(n == strlen(want) && memcmp(b, want, n) == 0);
		}
		p = k < 19 ? p * 10 : p;
	}
	size_t n = jo_fmt_uint(b, UINT64_MAX);
	CHECK(n == 20 && memcmp(b, "18446744073709551615", 20) == 0);
	n = jo_fmt_int(b, INT64_MIN);
	CHECK(n == 20 && memcmp(b, "-9223372036854775808", 20) == 0);
	n = jo_fmt_int(b, 0);
	CHECK(n == 1 && b[0] == '0');
	/* every length, every digit (zeros inside): against printf */
	uint64_t x = 88172645463325252ull;
	int bad = 0;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t v = x >> (x % 64);
		n = jo_fmt_uint(b, v);
		snprintf(want, sizeof want, "%llu", (unsigned long long)v);
		bad += n != strlen(want) || memcmp(b, want, n) != 0;
		int64_t sv = (int64_t)v;
		n = jo_fmt_us3(b, sv);
		snprintf(want, sizeof want, "%s%llu.%03llu", sv < 0 ? "-" : "",
			 (unsigned long long)(sv < 0 ? 0 - v : v) / 1000,
			 (unsigned long long)(sv < 0 ? 0 - v : v) % 1000);
		bad += n != strlen(want) || strcmp(b, want) != 0;
	}
	CHECK(bad == 0);
}

static void test_layout(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct jo j;
	jo_init_sb(&j, &sb, 2);
	jo_obj_begin(&j);
	jo_kint(&j, "schemaVersion", 1);
	jo_key(&j, "distributedInfo");
	jo_obj_begin(&j);
	jo_kint(&j, "rank", 3);
	jo_obj_end(&j);
	jo_key(&j, "traceEvents");
	jo_arr_begin(&j);
	jo_obj_begin(&j);
	jo_kstr(&j, "ph", "X");
	jo_kns_us(&j, "ts", 1500);
	jo_kfixed(&j, "nan", NAN, 2);
	jo_kfixed(&j, "pct", 12.3456, 2);
	jo_obj_end(&j);
	jo_obj_begin(&j);
	jo_obj_end(&j);
	jo_arr_end(&j);
	jo_key(&j, "empty");
	jo_arr_begin(&j);
	jo_arr_end(&j);
	jo_obj_end(&j);
	CHECK(jo_finish(&j) == 0);
	CHECK_STR(sb.buf,
		  "{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\n    \"rank\": 3\n  },\n"
		  "  \"traceEvents\": [\n"
		  "    {\"ph\": \"X\", \"ts\": 1.500, \"nan\": null, \"pct\": 12.35},\n"
		  "    {}\n  ],\n  \"empty\": []\n}");
	cJSON *back = cJSON_Parse(sb.buf);
	CHECK(back != NULL);
	cJSON_Delete(back);
	sb_free(&sb);
}

/* jo_tight: the items of an event line without spaces, the event head's
 * shortcut included; keys that start a line keep ": " (HTA's rank regex). */
static void test_tight(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct jo j;
	jo_init_sb(&j, &sb, 2);
	jo_tight(&j);
	jo_obj_begin(&j);
	jo_key(&j, "distributedInfo");
	jo_obj_begin(&j);
	jo_kint(&j, "rank", 3);
	jo_obj_end(&j);
	jo_key(&j, "traceEvents");
	jo_arr_begin(&j);
	jo_event_head(&j, "X", "kernel", "k \"1\"", 7, -2, 1500);
	jo_kns_us(&j, "dur", 2000);
	jo_key(&j, "args");
	jo_obj_begin(&j);
	jo_kuint(&j, "grid", 4);
	jo_key(&j, "block");
	jo_arr_begin(&j);
	jo_int(&j, 1);
	jo_str(&j, "a");
	jo_arr_end(&j);
	jo_obj_end(&j);
	jo_obj_end(&j);
	jo_event_head(&j, "i", NULL, NULL, 1, 1, 0);
	jo_obj_end(&j);
	jo_arr_end(&j);
	jo_obj_end(&j);
	CHECK(jo_finish(&j) == 0);
	CHECK_STR(sb.buf,
		  "{\n  \"distributedInfo\": {\n    \"rank\": 3\n  },\n  \"traceEvents\": [\n"
		  "    {\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k \\\"1\\\"\",\"pid\":7,"
		  "\"tid\":-2,\"ts\":1.500,\"dur\":2.000,\"args\":{\"grid\":4,\"block\":[1,\"a\"]}},\n"
		  "    {\"ph\":\"i\",\"name\":null,\"pid\":1,\"tid\":1,\"ts\":0.000}\n  ]\n}");
	sb_free(&sb);
}

static size_t json_plain_ref(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x80 &&
	       s[i] != '"' && s[i] != '\\')
		i++;
	return i;
}

static size_t csv_plain_ref(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && !strchr(",\"\r\n", s[i]))
		i++;
	return i;
}

/* A writable page with an unreadable one after it (two pages to unmap). */
static char *guarded_page(long page)
{
	char *map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(map != MAP_FAILED);
	if (map == MAP_FAILED)
		return NULL;
	CHECK(mprotect(map + page, (size_t)page, PROT_NONE) == 0);
	return map;
}

/* The scans against a byte-at-a-time reference, for every length to 40 and
 * every position of a special byte, with strings placed to end right before
 * an unreadable page (the tail's 16-byte load must not cross into it) and
 * anywhere else; copy_short against memcpy for the same lengths. */
static void test_scan(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *map = guarded_page(page);
	if (!map)
		return;
	memset(map, 'a', (size_t)page);
	static const char specials[] = { '"', '\\', '\n', ',', '\r', 0x01, (char)0xc3, ' ' };
	for (size_t n = 0; n <= 40; n++) {
		char *at[2] = { map + page - n, map + 100 };
		for (int w = 0; w < 2; w++) {
			char *str = at[w];
			for (size_t pos = 0; pos <= n; pos++) {
				for (size_t k = 0; k < sizeof specials; k++) {
					memset(str, 'a', n);
					if (pos < n)
						str[pos] = specials[k];
					CHECK(scan_json_plain(str, n) == json_plain_ref(str, n));
					CHECK(scan_csv_plain(str, n) == csv_plain_ref(str, n));
				}
			}
			char d[64];
			memset(d, '#', sizeof d);
			for (size_t i = 0; i < n; i++)
				str[i] = (char)('A' + i % 26);
			copy_short(d + 1, str, n);
			CHECK(memcmp(d + 1, str, n) == 0 && d[0] == '#' && d[n + 1] == '#');
		}
	}
	munmap(map, (size_t)page * 2);
}

/* jo_fmt_fixed against printf: chosen edges (ties, subnormals, -0, the
 * 2^53 border where it hands over to printf, the largest double) and a
 * million doubles from random bits and from random decimals near ties. */
static void check_fixed(double v, int d)
{
	char want[400], got[JO_FIXED_MAX];
	snprintf(want, sizeof want, "%.*f", d, v);
	size_t n = jo_fmt_fixed(got, v, d);
	if (n != strlen(want) || strcmp(got, want) != 0) {
		fprintf(stderr, "jo_fmt_fixed(%a, %d): '%s', printf '%s'\n", v, d, got, want);
		CHECK(0);
	}
}

static void test_fixed(void)
{
	static const double edge[] = { 0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 0.0005, 0.0015, 0.0025,
		0.125, 0.375, 1e-320, -1e-320, 4.9e-324, 1.0 / 3.0, 349.5252533333, 123456.789,
		9007199254740991.0, 9007199254740992.0, 9007199254740993.0, 1e19, 1.8446744073709552e19,
		1e300, -1e300, 1.7976931348623157e308, 0.9999999995, 0.99999999949999 };
	for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
		for (int d = 0; d <= 9; d++)
			check_fixed(edge[i], d);
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < 1000000 && unit_failed == 0; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		double v;
		if (i % 2) {
			uint64_t bits = x & ~(0x7ffull << 52);   /* keep it finite: exponent */
			bits |= (uint64_t)(x % 1100) << 52;       /* from 2^-1023 to 2^76 */
			memcpy(&v, &bits, sizeof v);
		} else {   /* k / 10^e and the ties between: 0.0005, 12.345 ... */
			v = (double)(x % 100000000) / (double)(1u << (x >> 60)) * 0.0005;
		}
		check_fixed(v, (int)(x >> 56) % 10);
	}
	char b[JO_FIXED_MAX];
	CHECK(jo_fmt_fixed(b, 1.0, 12) == 14 && strcmp(b, "1.000000000000") == 0);
}

/* Items written in place: the same text as the general writer, for
 * strings ending right before an unreadable page with a special byte at
 * every position, to a strbuf and to a FILE (whose buffer fills up, so
 * items meet its end at every offset). */
static void in_place_pair(struct jo *a, struct jo *b, char *end)
{
	static const char *specials[] = { "\"", "\\", "\n", "\x01", "\xc3\xa9", "\xff", "," };
	jo_arr_begin(a);
	jo_arr_begin(b);
	for (size_t n = 0; n <= 40; n++) {
		for (size_t pos = 0; pos <= n; pos++) {
			for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++) {
				size_t sl = pos < n ? strlen(specials[k]) : 0;
				char *str = end - n - sl - 1;
				memset(str, 'a', n + sl);
				if (sl)
					memcpy(str + pos, specials[k], sl);
				str[n + sl] = '\0';
				jo_str(a, str);
				jo_strn(a, str, n + sl);
				char *p = jo_item_at(b);
				*p++ = '"';
				p = jo_cstr_at(b, p, str);
				*p++ = '"';
				jo_item_end(b, p);
				p = jo_item_at(b);
				*p++ = '"';
				p = jo_strn_at(b, p, str, n + sl);
				*p++ = '"';
				jo_item_end(b, p);
			}
		}
	}
	jo_arr_end(a);
	jo_arr_end(b);
	CHECK(jo_finish(a) == 0 && jo_finish(b) == 0);
}

static void test_in_place(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *map = guarded_page(page);
	if (!map)
		return;
	struct strbuf want = STRBUF_INIT, got = STRBUF_INIT;
	struct jo a, b;
	jo_init_sb(&a, &want, 1);
	jo_init_sb(&b, &got, 1);
	in_place_pair(&a, &b, map + page);
	CHECK(want.len > 10000 && got.len == want.len && memcmp(got.buf, want.buf, want.len) == 0);
	sb_free(&want);
	sb_free(&got);

	char *ta = NULL, *tb = NULL;
	size_t la = 0, lb = 0;
	FILE *fa = open_memstream(&ta, &la), *fb = open_memstream(&tb, &lb);
	jo_init_file(&a, fa, 1);
	jo_init_file(&b, fb, 1);
	in_place_pair(&a, &b, map + page);
	fclose(fa);
	fclose(fb);
	CHECK(la > 3 * JO_BUF && la == lb && memcmp(ta, tb, la) == 0);
	free(ta);
	free(tb);
	munmap(map, (size_t)page * 2);
}

/* Two CSV writers to memory: the same rows written two ways. */
struct csv_pair {
	struct csv a, b;
	FILE *fa, *fb;
	char *ta, *tb;
	size_t la, lb;
};

static void pair_open(struct csv_pair *p)
{
	p->ta = p->tb = NULL;
	p->fa = open_memstream(&p->ta, &p->la);
	p->fb = open_memstream(&p->tb, &p->lb);
	csv_init(&p->a, p->fa);
	csv_init(&p->b, p->fb);
}

/* Both texts the same, and longer than min. */
static void pair_check(struct csv_pair *p, size_t min)
{
	CHECK(csv_finish(&p->a) == 0 && csv_finish(&p->b) == 0);
	fclose(p->fa);
	fclose(p->fb);
	CHECK(p->la > min && p->la == p->lb && memcmp(p->ta, p->tb, p->la) == 0);
	free(p->ta);
	free(p->tb);
}

/* csv_str's one-pass copy against csv_strn, for strings ending right
 * before an unreadable page with a CSV special at every position, in rows
 * long enough to fill the row buffer. */
static void test_csv_str(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *map = guarded_page(page);
	if (!map)
		return;
	static const char specials[] = { ',', '"', '\r', '\n', 'x' };
	static struct csv_pair pr;
	pair_open(&pr);
	struct csv *a = &pr.a, *b = &pr.b;
	for (size_t n = 0; n <= 40; n++) {
		for (size_t pos = 0; pos <= n; pos++) {
			for (size_t k = 0; k < sizeof specials; k++) {
				char *str = map + page - n - 1;
				memset(str, 'a', n);
				if (pos < n)
					str[pos] = specials[k];
				str[n] = '\0';
				csv_strn(a, str, n);
				csv_str(b, str);
				/* and a second one later: a quote after a comma */
				for (size_t p2 = pos + 1; p2 < n; p2++) {
					str[p2] = p2 % 2 ? '"' : ',';
					csv_strn(a, str, n);
					csv_str(b, str);
					str[p2] = 'a';
				}
			}
		}
		csv_end_row(a);
		csv_end_row(b);
	}
	csv_str(a, NULL);
	csv_str(b, NULL);
	csv_end_row(a);
	csv_end_row(b);
	pair_check(&pr, 20000);
	munmap(map, (size_t)page * 2);
}

static void test_misuse(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct jo j;
	jo_init_sb(&j, &sb, 0);
	jo_obj_begin(&j);
	CHECK(jo_finish(&j) != 0);       /* left open */
	jo_init_sb(&j, &sb, 0);
	jo_arr_end(&j);
	CHECK(jo_finish(&j) != 0);       /* closed what was never opened */
	sb_free(&sb);
}

static void test_cjson(void)
{
	cJSON *v = cJSON_Parse("{\"a\": [1, 2.5, \"x\\u0001\", true, null], \"b\": {\"c\": -7}}");
	struct strbuf sb = STRBUF_INIT;
	struct jo j;
	jo_init_sb(&j, &sb, 0);
	jo_cjson(&j, v);
	CHECK(jo_finish(&j) == 0);
	CHECK_STR(sb.buf, "{\"a\": [1, 2.5, \"x\\u0001\", true, null], \"b\": {\"c\": -7}}");
	cJSON_Delete(v);
	sb_free(&sb);
}

static char *csv_text(void (*fill)(struct csv *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct csv c;
	csv_init(&c, f);
	fill(&c);
	CHECK(csv_finish(&c) == 0);
	fclose(f);
	return buf;
}

static void fill_quoting(struct csv *c)
{
	csv_header(c, "Name,Value");
	csv_str(c, "plain");
	csv_str(c, "a,b");
	csv_str(c, "say \"hi\"");
	csv_str(c, "two\nlines");
	csv_str(c, "cr\r");
	csv_str(c, NULL);
	csv_end_row(c);
	csv_int(c, -5);
	csv_uint(c, 18446744073709551615ull);
	csv_ns_us(c, 2500);
	csv_fixed(c, 1.0 / 3.0, 3);
	csv_fixed(c, INFINITY, 3);
	csv_end_row(c);
}

static void fill_empty(struct csv *c)
{
	csv_header(c, "A,B");
}

static void test_csv(void)
{
	char *t = csv_text(fill_quoting);
	CHECK_STR(t, "Name,Value\nplain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\"cr\r\",\n"
		  "-5,18446744073709551615,2.500,0.333,\n");
	free(t);
	t = csv_text(fill_empty);
	CHECK_STR(t, "A,B\n");
	free(t);
}

/* Several megabytes of events, long strings among them (longer than a
 * buffer too), written with and without the background writer: the same
 * bytes, in order. Into memory (no descriptor), and into a file where the
 * writer goes direct when the file system allows (test_direct_write). */
static void events_to(FILE *f, int background)
{
	struct jo j;
	jo_init_file(&j, f, 2);
	static char big[3 << 20];
	memset(big, 'x', sizeof big - 1);
	jo_obj_begin(&j);
	jo_key(&j, "traceEvents");
	jo_arr_begin(&j);
	if (background)   /* with bytes waiting: they move */
		jo_background(&j);
	for (int i = 0; i < 60000; i++) {
		jo_event_head(&j, "X", "cat", i % 7 ? "aten::mm" : "a \"quoted\" name", i, -i,
			      (int64_t)i * 1234567);
		if (i == 30000)
			jo_kstr(&j, "big", big);
		jo_obj_end(&j);
	}
	jo_arr_end(&j);
	jo_obj_end(&j);
	CHECK(jo_finish(&j) == 0);
}

static char *events_text(int background)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	events_to(f, background);
	fclose(f);
	return text;
}

static char *events_file(void)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/csv_json_events.json", unit_tmp_dir());
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return NULL;
	events_to(f, 1);
	fclose(f);
	char *text = NULL;
	size_t len;
	CHECK(fs_read_file(path, &text, &len) == 0);
	unlink(path);
	return text;
}

static void test_background(void)
{
	char *a = events_text(0), *b = events_text(1), *c = events_file();
	CHECK(a && b && strlen(a) > (4u << 20));
	CHECK(a && b && strcmp(a, b) == 0);
	CHECK(a && c && strcmp(a, c) == 0);
	cJSON *j = b ? cJSON_Parse(b) : NULL;
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(j, "traceEvents")) == 60000);
	cJSON_Delete(j);
	free(a);
	free(b);
	free(c);
}

int main(void)
{
	test_background();
	test_escape();
	test_us();
	test_ints();
	test_layout();
	test_tight();
	test_scan();
	test_fixed();
	test_in_place();
	test_csv_str();
	test_misuse();
	test_cjson();
	test_csv();
	return unit_done();
}

/* The id map (parse/parse_idmap): ids put, found and removed as a window
 * slides over them, some removed early, for keys in sequence (placed by
 * their low bits), with gaps, with a power-of-two stride and spread like
 * addresses (both must make the map hash them), and random; every answer
 * checked against the window, absent keys included. (A sequential window
 * wraps the table many times, so absent keys land in runs of live ones.) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/idmap.h"
#include "unit/unit.h"

#define IDS 60000
#define WINDOW 5000

typedef uint64_t (*key_fn)(uint64_t i);

static uint64_t seq(uint64_t i) { return i + 1; }
static uint64_t gaps(uint64_t i) { return 1 + i * 3 + (i % 4 == 0); }
static uint64_t stride(uint64_t i) { return (i + 1) << 20; }
static uint64_t address(uint64_t i) { return 0x7f0000000000ull + i * 0x1000ull + 16 * (i % 3); }
static uint64_t scatter(uint64_t i)
{
	uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull;
	return x ^ (x >> 29);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void *val_of(uint64_t i) { return (void *)(uintptr_t)(i + 1); }

/* Is id i in the map by the reference: in [lo, hi) and not removed early. */
static int live(const unsigned char *gone, uint64_t lo, uint64_t hi, uint64_t i)
{
	return i >= lo && i < hi && !gone[i];
}

static void run(key_fn key, int want_mixed)
{
	struct parse_idmap m;
	memset(&m, 0, sizeof m);
	unsigned char *gone = calloc(IDS, 1);
	uint64_t lo = 0, n = 0;
	int bad = 0;
	for (uint64_t hi = 0; hi < IDS; hi++) {
		bad |= parse_idmap_put(&m, key(hi), val_of(hi)) != NULL;
		n++;
		if (hi - lo >= WINDOW) {   /* the oldest goes */
			void *v = parse_idmap_del(&m, key(lo));
			bad |= v != (gone[lo] ? NULL : val_of(lo));
			n -= !gone[lo];
			lo++;
		}
		uint64_t r = next_rand();
		if (r % 7 == 0 && hi > lo) {   /* one in the window goes early */
			uint64_t i = lo + r / 7 % (hi - lo);
			bad |= parse_idmap_del(&m, key(i)) != (gone[i] ? NULL : val_of(i));
			n -= !gone[i];
			gone[i] = 1;
		}
		/* a lookup in the window, one before it, one after it */
		uint64_t probe[3] = { lo + r % (hi - lo + 1), r % (lo + 1), hi + 1 + r % 100 };
		for (int k = 0; k < 3; k++) {
			uint64_t i = probe[k];
			void *v = parse_idmap_get(&m, key(i));
			bad |= v != (live(gone, lo, hi + 1, i) ? val_of(i) : NULL);
		}
		bad |= m.n != n;
	}
	CHECK(!bad);
	CHECK(want_mixed < 0 || m.mixed == want_mixed);
	/* lookups stay short whatever the keys: placed by their low bits, no
	 * key is ever further than the switch allows */
	CHECK(m.mixed ? m.longest <= 256 : m.longest <= 32);
	size_t count = 0;
	for (size_t i = 0; i < m.cap; i++)
		count += m.slot[i].val != NULL;
	CHECK(count == n);
	parse_idmap_free(&m);
	free(gone);
}

int main(void)
{
	run(seq, 0);
	run(gaps, 0);
	run(stride, 1);
	run(address, 1);
	run(scatter, -1);   /* random low bits: either way */
	return unit_done();
}

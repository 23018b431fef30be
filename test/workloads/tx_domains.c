/*
 * tx_domains N: N times, in each of the domains "a", "b" and the default
 * (spelt NULL, "" and "default" in turn): a mark "m-<d>", a range
 * "r-<d>" (push/pop) holding it, and a cross-thread range "x-<d>"
 * (start/end). Exact counts, for the mstx_domain_* filters.
 */
#include <prof/prof_tx.h>
#include <stdio.h>
#include <stdlib.h>

static void one(const char *domain, const char *d)
{
	char m[16], r[16], x[16];
	snprintf(m, sizeof m, "m-%s", d);
	snprintf(r, sizeof r, "r-%s", d);
	snprintf(x, sizeof x, "x-%s", d);
	prof_range_push_domain(domain, r);
	prof_mark_domain(domain, m);
	prof_range_pop();
	prof_range_end(prof_range_start_domain(domain, x));
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	static const char *const defaults[] = { NULL, "", "default" };
	for (int i = 0; i < n; i++) {
		one("a", "a");
		one("b", "b");
		one(defaults[i % 3], "default");
	}
	printf("tx_domains: %d each\n", n);
	return 0;
}

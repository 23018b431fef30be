#include "outputs/tables/out_host_sum.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/csv_out.h"
#include "common/fsutil.h"
#include "outputs/out_file.h"
#include "outputs/tables/out_host.h"

#define RECOMMEND_QUANTILE 0.98
#define RECOMMEND_HEADROOM 0.8

void out_host_sum_init(struct out_host_sum *h)
{
	memset(h, 0, sizeof *h);
}

static double kb_per_s(uint64_t bytes, uint64_t interval_ns)
{
	return (double)bytes / OUT_KB * 1e9 / (double)interval_ns;
}

void out_host_sum_disk(struct out_host_sum *h, uint64_t read_bytes, uint64_t write_bytes,
		       uint64_t interval_ns)
{
	h->disk_samples++;
	if (!interval_ns)
		return;
	out_rate_add(&h->read, kb_per_s(read_bytes, interval_ns));
	out_rate_add(&h->write, kb_per_s(write_bytes, interval_ns));
}

static struct out_host_if *out_host_if_of(struct out_host_sum *h, const char *name)
{
	for (size_t i = 0; i < h->nifs; i++)
		if (strcmp(h->ifs[i].name, name) == 0)
			return &h->ifs[i];
	if (h->nifs == h->capifs) {
		size_t cap = h->capifs ? h->capifs * 2 : 8;
		struct out_host_if *v = realloc(h->ifs, cap * sizeof *v);
		if (!v)
			return NULL;
		h->ifs = v;
		h->capifs = cap;
	}
	struct out_host_if *f = &h->ifs[h->nifs++];
	*f = (struct out_host_if){ .name = name };
	return f;
}

int out_host_sum_net(struct out_host_sum *h, const char *name, const struct raw_host_net *n)
{
	struct out_host_if *f = out_host_if_of(h, name);
	if (!f)
		return -ENOMEM;
	f->speed_mbps = n->speed_mbps;
	f->rx_bytes += n->rx_bytes;
	f->rx_packets += n->rx_packets;
	f->tx_bytes += n->tx_bytes;
	f->tx_packets += n->tx_packets;
	return n->interval_ns ? out_rate_add(&f->used, kb_per_s(n->rx_bytes + n->tx_bytes,
								n->interval_ns)) : 0;
}

static void peak_and_recommend(struct csv *c, const struct out_rate *r)
{
	csv_fixed(c, r->peak, 3);
	csv_fixed(c, out_rate_quantile(r, RECOMMEND_QUANTILE) / RECOMMEND_HEADROOM, 3);
}

static void disk_rows(const struct out_host_sum *h, struct csv *c)
{
	csv_lit(c, "host");
	peak_and_recommend(c, &h->read);
	peak_and_recommend(c, &h->write);
	csv_end_row(c);
}

static void net_rows(const struct out_host_sum *h, struct csv *c)
{
	for (size_t i = 0; i < h->nifs; i++) {
		const struct out_host_if *f = &h->ifs[i];
		csv_lit(c, "host");
		if (f->speed_mbps)   /* Mb/s: 10^6 bits */
			csv_fixed(c, (double)f->speed_mbps * 1e6 / 8 / OUT_KB, 3);
		else
			csv_str(c, NULL);
		peak_and_recommend(c, &f->used);
		csv_str(c, f->name);
		csv_uint(c, f->rx_bytes);
		csv_uint(c, f->rx_packets);
		csv_uint(c, f->tx_bytes);
		csv_uint(c, f->tx_packets);
		csv_end_row(c);
	}
}

/* dir/name with its rows, or no dir/name at all when there are none. */
static int write_or_remove(const struct out_host_sum *h, const char *dir, const char *name,
			   const char *header, int any,
			   void (*rows)(const struct out_host_sum *, struct csv *))
{
	if (!any) {
		char *p = fs_join(dir, name);
		int rc = !p ? -ENOMEM : unlink(p) == 0 || errno == ENOENT ? 0 : -errno;
		free(p);
		return rc;
	}
	struct out_file f;
	struct csv c;
	int rc = out_file_open(&f, dir, name);
	if (rc)
		return rc;
	csv_init(&c, f.f);
	csv_header(&c, header);
	rows(h, &c);
	return out_file_commit(&f, csv_finish(&c));
}

int out_host_sum_write(const struct out_host_sum *h, const char *dir)
{
	int rd = write_or_remove(h, dir, "host_disk_usage.csv", OUT_DISK_SUM_HEADER,
				 h->disk_samples > 0, disk_rows);
	int rn = write_or_remove(h, dir, "host_network_usage.csv", OUT_NET_SUM_HEADER,
				 h->nifs > 0, net_rows);
	return rd ? rd : rn;
}

void out_host_sum_free(struct out_host_sum *h)
{
	out_rate_free(&h->read);
	out_rate_free(&h->write);
	for (size_t i = 0; i < h->nifs; i++)
		out_rate_free(&h->ifs[i].used);
	free(h->ifs);
	memset(h, 0, sizeof *h);
}

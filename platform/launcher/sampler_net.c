/*
 * host_sys network: each interface's bytes and packets since the previous
 * sample, from /proc/net/dev. The table of interfaces is fixed
 * (SAMPLER_NET_MAX): one that vanishes keeps its place, in case it comes
 * back; one past the table is not followed.
 */
#include "launcher/sampler.h"

#include <string.h>

static struct sampler_if *sampler_if_find(struct sampler_state *st, const char *name)
{
	for (size_t i = 0; i < st->nifs; i++)
		if (strcmp(st->ifs[i].last.name, name) == 0)
			return &st->ifs[i];
	return NULL;
}

static uint64_t sampler_net_delta(uint64_t now, uint64_t before)
{
	/* a counter that went back was reset (the interface re-created) */
	return now >= before ? now - before : 0;
}

/* The record for `cur`, or 0 when there is none to write: an idle
 * interface is written once, when it falls idle. */
static int sampler_if_record(struct sampler_state *st, const struct procfs_netdev *cur,
			     uint64_t interval_ns, struct raw_host_net *out)
{
	struct sampler_if *f = sampler_if_find(st, cur->name);
	if (!f) {
		if (st->nifs == SAMPLER_NET_MAX)
			return 0;
		f = &st->ifs[st->nifs++];
		*f = (struct sampler_if){ .last = *cur, .speed_mbps = procfs_net_speed(cur->name),
					  .idle = true };
		*out = (struct raw_host_net){ .speed_mbps = f->speed_mbps };
		return 1;
	}
	*out = (struct raw_host_net){
		.speed_mbps = f->speed_mbps, .interval_ns = interval_ns,
		.rx_bytes = sampler_net_delta(cur->rx_bytes, f->last.rx_bytes),
		.rx_packets = sampler_net_delta(cur->rx_packets, f->last.rx_packets),
		.tx_bytes = sampler_net_delta(cur->tx_bytes, f->last.tx_bytes),
		.tx_packets = sampler_net_delta(cur->tx_packets, f->last.tx_packets),
	};
	f->last = *cur;
	bool idle = !out->rx_bytes && !out->rx_packets && !out->tx_bytes && !out->tx_packets;
	int write = !(idle && f->idle);
	f->idle = idle;
	return write;
}

size_t sampler_net_take(struct sampler_state *st, uint64_t now_ns, struct raw_host_net *out,
			const char **names)
{
	struct procfs_netdev cur[SAMPLER_NET_MAX];
	size_t n, k = 0;
	if (procfs_net_dev(cur, SAMPLER_NET_MAX, &n) != 0)
		return 0;
	uint64_t interval = st->net_prev_ns && now_ns > st->net_prev_ns ? now_ns - st->net_prev_ns
									 : 0;
	for (size_t i = 0; i < n; i++) {
		if (!sampler_if_record(st, &cur[i], interval, &out[k]))
			continue;
		names[k++] = sampler_if_find(st, cur[i].name)->last.name;
	}
	st->net_prev_ns = now_ns;
	return k;
}

/* The device processes of the trace: pid = device index, a thread per
 * stream (and per stream's sync records), named at the end. */
#include "model/parse_model_int.h"

#include <inttypes.h>
#include <stdlib.h>

#include "common/grow.h"
#include "outputs/tables/out_dev_usage.h"

void model_dev_track(struct parse_model *m, uint32_t device, uint32_t vendor, int64_t tid)
{
	uint64_t h = parse_idmap_hash2((uint64_t)vendor << 32 | device, (uint64_t)tid);
	size_t first = parse_idmap_pos(&m->track_at, h);
	for (size_t i = first; i; i = m->tracks[i - 1].next)
		if (m->tracks[i - 1].device == device && m->tracks[i - 1].vendor == vendor &&
		    m->tracks[i - 1].tid == tid)
			return;
	struct model_track *v = grow_room(m->tracks, m->ntracks, &m->captracks, sizeof *v);
	if (!v)
		return;
	m->tracks = v;
	if (parse_idmap_put_pos(&m->track_at, h, m->ntracks) == 0)
		m->tracks[m->ntracks++] = (struct model_track){ device, vendor, tid, first };
}

static int track_cmp(const void *pa, const void *pb)
{
	const struct model_track *a = pa, *b = pb;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->vendor < b->vendor ? -1 : a->vendor > b->vendor;
}

/* "SIM 0", "CUDA 1"; both families on one index: "CUDA 0 / SIM 0". */
static void device_name(const struct model_track *v, size_t n, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (uint32_t vendor = RAW_VENDOR_CUDA + 1; vendor-- > 0;) {
		for (size_t i = 0; i < n; i++) {
			if (v[i].vendor != vendor)
				continue;
			used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s %u",
						 used ? " / " : "", out_vendor_name(vendor), v[i].device);
			break;
		}
	}
}

static void device_meta(struct parse_model *m, const struct model_track *v, size_t n)
{
	char name[128], label[32], tname[64];
	device_name(v, n, name, sizeof name);
	snprintf(label, sizeof label, "GPU %u", v[0].device);
	out_trace_process(m->out.trace, v[0].device, name, label,
			  MODEL_DEV_SORT_BASE + (int64_t)v[0].device);
	for (size_t i = 0; i < n; i++) {
		if (v[i].tid < 0 || (i && v[i].tid == v[i - 1].tid))
			continue;
		if (v[i].tid >= MODEL_SYNC_TID_BASE)
			snprintf(tname, sizeof tname, "stream %" PRId64 " (sync)",
				 v[i].tid - MODEL_SYNC_TID_BASE);
		else
			snprintf(tname, sizeof tname, "stream %" PRId64, v[i].tid);
		out_trace_thread(m->out.trace, v[0].device, v[i].tid, tname, v[i].tid);
	}
}

/* The tracks are sorted here, at the end: their chains no longer hold. */
void model_dev_meta(struct parse_model *m)
{
	parse_idmap_free(&m->track_at);
	if (m->ntracks)
		qsort(m->tracks, m->ntracks, sizeof *m->tracks, track_cmp);
	for (size_t i = 0, end; i < m->ntracks; i = end) {
		for (end = i + 1; end < m->ntracks && m->tracks[end].device == m->tracks[i].device; end++)
			;
		device_meta(m, m->tracks + i, end - i);
	}
}

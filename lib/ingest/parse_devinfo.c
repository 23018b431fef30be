#include "ingest/parse_devinfo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

static char *dup_str(const struct raw_cursor *c, uint32_t id)
{
	const char *s = id ? raw_cursor_str(c, id, NULL) : NULL;
	return s ? strdup(s) : NULL;
}

/* Each field from the first record that has it: NVML knows no SM count,
 * and a backend that came late may have no record of its own. */
static void fill(struct out_dev_info *v, const struct raw_cursor *c, const struct raw_dev_info *in)
{
	if (!v->name)
		v->name = dup_str(c, in->name_id);
	if (!v->uuid)
		v->uuid = dup_str(c, in->uuid_id);
	if (!v->total_mem)
		v->total_mem = in->total_mem_bytes;
	if (!v->major && !v->minor)
		v->major = in->compute_major, v->minor = in->compute_minor;
	if (!v->sms)
		v->sms = in->sm_count;
}

static int add(struct parse_devinfo *d, const struct raw_cursor *c, const struct raw_rec *r)
{
	struct raw_dev_info in;
	memcpy(&in, r->payload, sizeof in);
	uint64_t key = (uint64_t)in.vendor << 32 | in.device;
	size_t at = parse_idmap_pos(&d->at, key);
	if (!at) {
		struct out_dev_info *v = grow_room(d->v, d->n, &d->cap, sizeof *v);
		if (!v)
			return -ENOMEM;
		d->v = v;
		if (parse_idmap_put_pos(&d->at, key, d->n) != 0)
			return -ENOMEM;
		v[d->n] = (struct out_dev_info){ .device = in.device, .vendor = in.vendor };
		at = ++d->n;
	}
	fill(&d->v[at - 1], c, &in);
	return 0;
}

/* The chunks that can hold DEV_INFO records: below the writer's bound, or
 * all of them in a file whose writer kept none. */
static uint64_t devinfo_chunks(const struct raw_file *f)
{
	if (!(f->hdr.flags & RAW_FILE_DEVINFO_BOUND))
		return UINT64_MAX;
	return f->hdr.devinfo_chunks;
}

static int scan_one(struct parse_stream *s, struct parse_devinfo *d)
{
	struct raw_cursor c;
	struct raw_rec r;
	enum raw_next n;
	int rc = 0;
	uint64_t bound = devinfo_chunks(&s->file);
	raw_cursor_init(&c, &s->file, 1);
	c.track_strings = 1;   /* quiet (damage is the main pass's to say) but named */
	while (rc == 0 && (n = raw_cursor_next(&c, &r)) != RAW_NEXT_END) {
		if (n == RAW_NEXT_CHUNK && c.chunk >= bound)
			break;
		if (n == RAW_NEXT_CHUNK && c.chunk > 0)   /* read pages leave as it goes */
			parse_file_release(&s->file, c.chunk - 1, c.chunk);
		if (n == RAW_NEXT_RECORD && r.type == RAW_REC_DEV_INFO)
			rc = add(d, &c, &r);
	}
	raw_cursor_free(&c);
	parse_file_release(&s->file, 0, bound < s->file.nchunks ? bound : s->file.nchunks);
	return rc;
}

static int cmp(const void *pa, const void *pb)
{
	const struct out_dev_info *a = pa, *b = pb;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return a->vendor < b->vendor ? -1 : a->vendor > b->vendor;
}

int parse_devinfo_scan(struct parse_stream *streams, size_t n, struct parse_devinfo *out)
{
	memset(out, 0, sizeof *out);
	/* the device backends' records first (CUPTI's, as Kineto's
	 * properties: cudaDeviceProp's memory), the launcher's NVML ones for
	 * what they lack */
	static const uint32_t kinds[] = { RAW_STREAM_DEVICE, RAW_STREAM_DEVICE_SAMPLES };
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < n; i++) {
			if (streams[i].file.hdr.kind != kinds[k])
				continue;
			int rc = scan_one(&streams[i], out);
			if (rc)
				return rc;
		}
	parse_idmap_free(&out->at);   /* the positions no longer hold */
	if (out->n)
		qsort(out->v, out->n, sizeof *out->v, cmp);
	return 0;
}

void parse_devinfo_free(struct parse_devinfo *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].name);
		free(d->v[i].uuid);
	}
	free(d->v);
	parse_idmap_free(&d->at);
	memset(d, 0, sizeof *d);
}

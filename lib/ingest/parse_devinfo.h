/*
 * The devices' properties for trace_view.json's "deviceProperties", which
 * goes before "traceEvents" (HTA reads the keys before it only), so it is
 * known before the merge: a quick pass over the device streams picks the
 * RAW_REC_DEV_INFO records out, over the chunks below the writer's bound
 * (raw_file_header.devinfo_chunks; every chunk of an older writer's file).
 * Memory: one entry per device. Each of its fields comes from the first
 * record that has it, the device backends' before the launcher's NVML.
 */
#ifndef PROF_PARSE_DEVINFO_H
#define PROF_PARSE_DEVINFO_H

#include <stddef.h>
#include "outputs/trace/out_trace_dev.h"
#include "common/idmap.h"
#include "ingest/parse_stream.h"

struct parse_devinfo {
	struct out_dev_info *v;   /* by device index, then family */
	size_t n, cap;
	struct parse_idmap at;    /* vendor << 32 | device -> position in v, until sorted */
};

/* 0 or -ENOMEM. */
int parse_devinfo_scan(struct parse_stream *streams, size_t n, struct parse_devinfo *out);
void parse_devinfo_free(struct parse_devinfo *d);

#endif

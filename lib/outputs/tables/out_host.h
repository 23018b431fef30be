/*
 * host_usage.csv: one row per host sample (share/prof/doc/outputs.md);
 * the columns of what host_sys did not ask for are empty. The same
 * samples appear in trace_view.json as counter events on the "Host"
 * process; both take their time from the same ts 0.
 */
#ifndef PROF_OUT_HOST_H
#define PROF_OUT_HOST_H

#include <stdint.h>
#include "common/csv_out.h"
#include "outputs/out_file.h"
#include "raw/raw_format.h"

#define OUT_HOST_HEADER "Timestamp(us),Process CPU User(%),Process CPU System(%)," \
	"Process RSS(MB),Processes,Threads,Process Read(KB),Process Write(KB)," \
	"Process Read(KB/s),Process Write(KB/s),System CPU(%),System Memory Used(MB)," \
	"System Memory Available(MB)"

struct out_host {
	struct out_file file;
	struct csv c;
	uint64_t base;
};

int out_host_open(struct out_host *h, const char *dir, uint64_t base_mono_ns);
/* `interval_ns`: time since the previous sample of the same sampler (the
 * I/O byte counts cover it); 0 leaves the rate columns empty. */
void out_host_row(struct out_host *h, uint64_t ns, uint64_t interval_ns,
		  const struct raw_host_sample *s);
int out_host_close(struct out_host *h);
void out_host_abort(struct out_host *h);

/* Units shared with the trace's counters. */
#define OUT_MB (1024.0 * 1024.0)
#define OUT_KB 1024.0

#endif

/*
 * gc_detect: Python's garbage collections, reported by prof's start-up
 * hook (share/prof/python/_prof_hooks/gc_hook.py, through gc.callbacks)
 * as a start and a stop on the thread that collects; the parse pairs them
 * into a "GC" range. Each report is one RAW_REC_GC on the thread's
 * stream, stamped now: no lock, no allocation once the stream exists.
 * Not part of prof_tx.h: an interface between prof's parts.
 */
#include "agent.h"

/* This thread's collection in progress had its start recorded: its stop
 * is recorded exactly then (as a range's pop follows its push), so a
 * pause in between leaves no stop without its start, nor the reverse. */
static __thread uint32_t gc_open __attribute__((tls_model("initial-exec")));

static int gc_write(const struct raw_gc *g)
{
	if (!agent_enter(1))
		return 0;
	struct agent_thread *t = agent_thread();
	int done = t && raw_writer_emit(&t->w, RAW_REC_GC, agent_ticks(), g, sizeof *g) == 0;
	agent_leave();
	return done;
}

__attribute__((visibility("default")))
void prof_fw_gc(uint32_t phase, uint32_t generation, uint64_t collected, uint64_t uncollectable)
{
	struct raw_gc g = { phase, generation, collected, uncollectable };
	if (phase == RAW_GC_START) {
		gc_open = agent.active && agent_recording() && gc_write(&g);
	} else if (phase == RAW_GC_STOP && gc_open) {
		gc_open = 0;
		gc_write(&g);
	}
}

/*
 * The annotation API as the agent records it. These definitions win over
 * libprof_tx.so's empty ones because the agent is preloaded. The hot path:
 * two loads to learn whether to record, the thread's busy mark (agent.h:
 * a call from a signal handler that interrupts another is dropped and
 * counted), a TLS load, the clock, an interned string, one record; no
 * lock, no allocation, no system call.
 *
 * Domains (mstx_domain_include / _exclude): a named domain is interned
 * like a name, and its verdict kept by that id in the thread's small
 * cache, so the filter is asked once per domain and stream; without a
 * filter, or for the default domain, one load decides. A dropped record
 * is not a lost one.
 */
#include "agent.h"

#include "prof/prof_tx.h"

/* Which open ranges on this thread were recorded: a pop must be recorded
 * exactly when its push was, or a pause in between would close the wrong
 * range. Depths past 64 follow the recording state at the pop. */
static __thread uint64_t range_recorded __attribute__((tls_model("initial-exec")));
static __thread uint32_t range_depth __attribute__((tls_model("initial-exec")));

__thread uint32_t agent_busy __attribute__((tls_model("initial-exec")));
__thread uint64_t agent_nested_lost __attribute__((tls_model("initial-exec")));
__thread uint32_t agent_nested_api __attribute__((tls_model("initial-exec")));

/* Still busy: a handler that comes now nests again, and is left for the
 * next call's way out. */
void agent_leave_slow(void)
{
	struct agent_thread *t = agent_tls;
	if ((uintptr_t)t > (uintptr_t)AGENT_DEAD && agent_nested_lost) {
		uint64_t n = __atomic_exchange_n(&agent_nested_lost, 0, __ATOMIC_RELAXED);
		raw_writer_lose(&t->w, n);
	}
	uint32_t api = __atomic_exchange_n(&agent_nested_api, 0, __ATOMIC_RELAXED);
	if (api)
		agent_sched_api(api - 1);
}

#define REC_SIZE(payload) raw_align((uint32_t)(sizeof(struct raw_record) + sizeof(payload)))

static inline void *begin_record(struct agent_thread *t, uint16_t type, uint32_t size, uint64_t ts)
{
	struct raw_record *r = raw_writer_reserve(&t->w, size);
	if (__builtin_expect(r != NULL, 1)) {
		r->type = type;
		r->flags = 0;
		r->size = size;
		r->ts = ts;
	}
	return r;
}

/* The id of a record's name; 0 when its definition did not fit (the
 * stream stopped), and then the record is counted lost: one naming id 0
 * would read as damage. */
static inline uint32_t id_counted(struct agent_thread *t, uint32_t id)
{
	if (__builtin_expect(id == 0, 0))
		raw_writer_lose(&t->w, 1);
	return id;
}

static inline uint32_t name_id(struct agent_thread *t, const char *name, uint64_t ts)
{
	return id_counted(t, raw_writer_intern(&t->w, name, ts));
}

/* Which domain a record goes to: its string id (0: the default domain,
 * and prof's own records, DOMAIN_OWN), or DOMAIN_DROP when the filter
 * drops it or its name could not be written. */
#define DOMAIN_OWN  ((const char *)1)
#define DOMAIN_DROP UINT32_MAX

static uint32_t domain_verdict(struct agent_thread *t, uint32_t id, const char *domain)
{
	struct agent_domain_seen *c = &t->domains[id & (AGENT_DOMAIN_CACHE - 1)];
	if (c->id != id)
		*c = (struct agent_domain_seen){ id, domain_filter_keeps(&agent.domains, domain) };
	return c->keep ? id : DOMAIN_DROP;
}

static inline uint32_t domain_id(struct agent_thread *t, const char *domain, uint64_t ts)
{
	if (domain == DOMAIN_OWN)
		return 0;
	if (domain_is_default(domain))
		return agent.default_kept ? 0 : DOMAIN_DROP;
	uint32_t id = name_id(t, domain, ts);
	if (!id)
		return DOMAIN_DROP;
	return agent.domains.mode == DOMAIN_ALL ? id : domain_verdict(t, id, domain);
}

/* A record whose payload is one interned name and its domain: MARK and
 * RANGE_PUSH share the layout {u32 id, u32 domain_id}. Returns 1 when it
 * was written. */
static inline int write_name(uint16_t type, const char *domain, const char *name)
{
	struct agent_thread *t = agent_thread();
	if (!t)
		return 0;
	uint64_t ts = agent_ticks();
	uint32_t dom = domain_id(t, domain, ts);
	uint32_t id = dom == DOMAIN_DROP ? 0 : name_id(t, name, ts);
	if (!id)
		return 0;
	struct raw_record *r = begin_record(t, type, REC_SIZE(struct raw_mark), ts);
	if (!r)
		return 0;
	*(struct raw_mark *)(r + 1) = (struct raw_mark){ id, dom };
	raw_writer_commit(&t->w, REC_SIZE(struct raw_mark));
	return 1;
}

/* msprof_tx false leaves the program's marks and ranges out; prof's own
 * (DOMAIN_OWN: the Python hooks' steps and batches) always count. */
static inline int tx_dropped(const char *domain)
{
	return agent.tx_off && domain != DOMAIN_OWN;
}

static inline int record_name(uint16_t type, const char *domain, const char *name)
{
	if (tx_dropped(domain) || !agent_recording() || !agent_enter(1))
		return 0;
	int done = write_name(type, domain, name);
	agent_leave();
	return done;
}

_Static_assert(sizeof(struct raw_mark) == sizeof(struct raw_range_push), "one layout");

/* A record with no payload (an end of what the thread began): written
 * while paused too, as its beginning was. */
static void write_bare(uint16_t type)
{
	if (!agent_enter(1))
		return;
	struct agent_thread *t = agent_thread();
	uint32_t size = (uint32_t)sizeof(struct raw_record);
	if (t && begin_record(t, type, size, agent_ticks()))
		raw_writer_commit(&t->w, size);
	agent_leave();
}

void prof_mark(const char *message)
{
	record_name(RAW_REC_MARK, NULL, message);
}

void prof_mark_domain(const char *domain, const char *message)
{
	record_name(RAW_REC_MARK, domain, message);
}

static void range_push(const char *domain, const char *name)
{
	uint32_t d = range_depth++;
	uint64_t bit = d < 64 ? 1ull << d : 0;
	range_recorded &= ~bit;
	if (record_name(RAW_REC_RANGE_PUSH, domain, name))
		range_recorded |= bit;
}

void prof_range_push(const char *name)
{
	range_push(NULL, name);
}

void prof_range_push_domain(const char *domain, const char *name)
{
	range_push(domain, name);
}

/* prof's own annotations (the Python hooks': optimizer marks, DataLoader
 * and flush ranges) are not the program's: no domain filter drops them.
 * Not part of prof_tx.h: an interface between prof's parts. */
__attribute__((visibility("default")))
void prof_fw_mark(const char *message)
{
	record_name(RAW_REC_MARK, DOMAIN_OWN, message);
}

__attribute__((visibility("default")))
void prof_fw_range_push(const char *name)
{
	range_push(DOMAIN_OWN, name);
}

void prof_range_pop(void)
{
	if (range_depth == 0)
		return;
	uint32_t d = --range_depth;
	int recorded = d < 64 ? (int)(range_recorded >> d) & 1 : agent_recording();
	if (recorded)
		write_bare(RAW_REC_RANGE_POP);
}

/* An operator begun on this thread as it runs (torch's NVTX range, read
 * by the CUDA backend's NVTX hook: raw_format.h, struct raw_op_begin):
 * name and shapes are cut out of a longer message, so interned by
 * length. Returns 1 when written: its end must then be too. */
int agent_op_begin(const char *name, size_t name_len, const char *shapes, size_t shapes_len,
		   int64_t seq)
{
	if (!agent_recording() || !agent_enter(1))
		return 0;
	int done = 0;
	struct agent_thread *t = agent_thread();
	if (t) {
		uint64_t ts = agent_ticks();
		uint32_t id = id_counted(t, raw_writer_intern_len(&t->w, name, name_len, ts));
		uint32_t sid = shapes_len ? raw_writer_intern_len(&t->w, shapes, shapes_len, ts) : 0;
		struct raw_record *r = id ? begin_record(t, RAW_REC_OP_BEGIN,
							 REC_SIZE(struct raw_op_begin), ts) : NULL;
		if (r) {
			*(struct raw_op_begin *)(r + 1) = (struct raw_op_begin){ id, sid, seq };
			raw_writer_commit(&t->w, REC_SIZE(struct raw_op_begin));
			done = 1;
		}
	}
	agent_leave();
	return done;
}

/* Its end: written while paused too (its begin was recorded). One that
 * comes nested in prof's own work (from a signal handler) is counted
 * lost, as any record is there. */
void agent_op_end(void)
{
	write_bare(RAW_REC_OP_END);
}

static uint64_t write_range_start(const char *domain, const char *name)
{
	struct agent_thread *t = agent_thread();
	if (!t)
		return 0;
	uint64_t ts = agent_ticks();
	uint32_t dom = domain_id(t, domain, ts);
	uint32_t id = dom == DOMAIN_DROP ? 0 : name_id(t, name, ts);
	if (!id)
		return 0;
	uint64_t rid = __atomic_add_fetch(&agent.range_next, 1, __ATOMIC_RELAXED);
	struct raw_record *r = begin_record(t, RAW_REC_RANGE_START,
					    REC_SIZE(struct raw_range_start), ts);
	if (!r)
		return 0;
	*(struct raw_range_start *)(r + 1) = (struct raw_range_start){ rid, id, dom };
	raw_writer_commit(&t->w, REC_SIZE(struct raw_range_start));
	return rid;
}

static uint64_t range_start(const char *domain, const char *name)
{
	if (tx_dropped(domain) || !agent_recording() || !agent_enter(1))
		return 0;
	uint64_t rid = write_range_start(domain, name);
	agent_leave();
	return rid;
}

uint64_t prof_range_start(const char *name)
{
	return range_start(NULL, name);
}

uint64_t prof_range_start_domain(const char *domain, const char *name)
{
	return range_start(domain, name);
}

void prof_range_end(uint64_t id)
{
	/* Ended even while paused: its start was recorded. */
	if (id == 0 || !agent.active || !agent_enter(1))
		return;
	struct agent_thread *t = agent_thread();
	struct raw_record *r = t ? begin_record(t, RAW_REC_RANGE_END, REC_SIZE(struct raw_range_end),
						agent_ticks()) : NULL;
	if (r) {
		*(struct raw_range_end *)(r + 1) = (struct raw_range_end){ id };
		raw_writer_commit(&t->w, REC_SIZE(struct raw_range_end));
	}
	agent_leave();
}

void prof_step(void)
{
	if (!agent.active)
		return;
	/* Steps are counted while paused too, so numbers are the program's;
	 * a nested one (from a signal handler) only that: the windows follow
	 * at the next step. */
	uint64_t n = __atomic_add_fetch(&agent.steps, 1, __ATOMIC_RELAXED);
	if (!agent_enter(agent_recording()))
		return;
	struct agent_thread *t = agent_thread();
	if (t && agent_recording()) {
		struct raw_step s = { n };
		raw_writer_emit(&t->w, RAW_REC_STEP, agent_ticks(), &s, sizeof s);
	}
	/* After the STEP record: a window that ends here still holds step n. */
	agent_sched_step_end(t, n);
	agent_leave();
}

/* A nested one waits for the outer call's way out: it would wait for
 * the schedule's lock that call may hold. */
static void api_switch(uint32_t on)
{
	if (!agent.active)
		return;
	if (!agent_enter(0)) {
		agent_nested_api = on + 1;
		return;
	}
	agent_sched_api(on);
	agent_leave();
}

void prof_start(void)
{
	api_switch(1);
}

void prof_stop(void)
{
	api_switch(0);
}

static void add_metadata(const char *key, const char *value, uint32_t flags)
{
	if (!agent.active || !key || !value)
		return;
	/* Metadata describes the run, not a moment: kept while paused too. */
	if (!agent_enter(1))
		return;
	struct agent_thread *t = agent_thread();
	if (t) {
		uint64_t ts = agent_ticks();
		struct raw_metadata m = { raw_writer_intern(&t->w, key, ts),
					  raw_writer_intern(&t->w, value, ts), flags, 0 };
		raw_writer_emit(&t->w, RAW_REC_METADATA, ts, &m, sizeof m);
	}
	agent_leave();
}

void prof_add_metadata(const char *key, const char *value) { add_metadata(key, value, 0); }
void prof_add_metadata_json(const char *key, const char *json) { add_metadata(key, json, RAW_METADATA_JSON); }

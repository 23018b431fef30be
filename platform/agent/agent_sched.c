/*
 * Which steps record: the schedule (torch.profiler.schedule's semantics,
 * applied to step index k = step number - 1), --dynamic windows (warm-up
 * steps, then recorded ones), prof_start/prof_stop, and is_rank (a process
 * whose rank is not listed never records). Decided once per step boundary, outside the hot
 * path: the hot path sees only agent.off. Every change of the effective
 * state is written as a RECORDING record at the boundary, so the parse
 * knows exactly where each window begins and ends.
 */
#include "agent.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "common/agent_env.h"
#include "raw/raw_control.h"

enum phase { PH_NONE, PH_WARMUP, PH_RECORD };

static struct {
	int has_schedule;
	uint32_t skip_first, wait, warmup, active, repeat;
	uint64_t base;           /* steps before the schedule's first (in-script schedules) */
	int dynamic;
	uint32_t base_flags;     /* PROF_FW_* collection switches from the configuration */
	uint32_t dyn_seen;       /* control page generation acted on */
	uint64_t dyn_warm;       /* its first warm-up step; == dyn_first: none */
	uint64_t dyn_first;      /* steps of the current activation; 0, 0: none yet */
	uint64_t dyn_last;
	uint32_t dyn_flags;
	enum phase phase;        /* schedule phase of the step in progress */
	uint32_t windows;        /* recording windows begun in this process */
	int cycle_results;       /* --cycle-results: a result per schedule cycle */
	uint32_t dyn_analyse;    /* the activation in progress asks for a result */
	uint32_t dyn_gen;        /* ... and is this one */
	uint64_t win_first;      /* first step of the window in progress */
	pthread_mutex_t lock;    /* prof_step may come from several threads */
} sched = { .lock = PTHREAD_MUTEX_INITIALIZER };

static enum phase sched_phase(uint64_t k)
{
	if (!sched.has_schedule)
		return PH_RECORD;
	if (k < sched.base)
		return PH_NONE;   /* cannot be: the base is a step already ended */
	k -= sched.base;
	if (k < sched.skip_first)
		return PH_NONE;
	k -= sched.skip_first;
	uint64_t cycle = (uint64_t)sched.wait + sched.warmup + sched.active;
	if (sched.repeat > 0 && k >= (uint64_t)sched.repeat * cycle)
		return PH_NONE;
	uint64_t m = k % cycle;
	if (m < sched.wait)
		return PH_NONE;
	return m < (uint64_t)sched.wait + sched.warmup ? PH_WARMUP : PH_RECORD;
}

/* 0, or -1 (and the schedule unchanged) when `s` is not one. */
static int parse_schedule(const char *s)
{
	unsigned v[5];
	if (!s || sscanf(s, "%u,%u,%u,%u,%u", &v[0], &v[1], &v[2], &v[3], &v[4]) != 5 || v[3] == 0)
		return -1;
	sched.has_schedule = 1;
	sched.skip_first = v[0];
	sched.wait = v[1];
	sched.warmup = v[2];
	sched.active = v[3];
	sched.repeat = v[4];
	return 0;
}

/* The off bits that the schedule or --dynamic give step `step` (1-based). */
static uint32_t window_off(uint64_t step)
{
	if (sched.dynamic) {
		sched.phase = step >= sched.dyn_first && step <= sched.dyn_last ? PH_RECORD :
			      step >= sched.dyn_warm && step < sched.dyn_first ? PH_WARMUP : PH_NONE;
		return sched.phase == PH_RECORD ? 0 : AGENT_OFF_DYNAMIC;
	}
	sched.phase = sched_phase(step - 1);
	return sched.phase == PH_RECORD ? 0 : AGENT_OFF_SCHEDULE;
}

/* Whether this process's rank is in `list` ("0,3", from is_rank). */
static int rank_listed(const char *list)
{
	int rank = __atomic_load_n(&agent.rank, __ATOMIC_ACQUIRE);
	const char *p = list;
	while (rank >= 0 && *p) {
		char *end;
		unsigned long r = strtoul(p, &end, 10);
		if (end == p)
			return 0;
		if (r == (unsigned long)rank)
			return 1;
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

void agent_sched_init(void)
{
	const char *paused = getenv(PROF_AGENT_START_PAUSED);
	const char *dyn = getenv(PROF_AGENT_DYNAMIC);
	const char *flags = getenv(PROF_AGENT_FW_FLAGS);
	const char *spec = getenv(PROF_AGENT_SCHEDULE);
	if (spec && parse_schedule(spec))
		agent_log("%s=\"%s\": not a schedule; recording every step", PROF_AGENT_SCHEDULE, spec);
	sched.dynamic = dyn && strcmp(dyn, "1") == 0;
	sched.base_flags = flags ? (uint32_t)strtoul(flags, NULL, 10) : 0;
	const char *cycles = getenv(PROF_AGENT_CYCLES);
	sched.cycle_results = cycles && strcmp(cycles, "1") == 0;
	const char *ranks = getenv(PROF_AGENT_RANKS);
	agent.off = window_off(1);
	if (paused && strcmp(paused, "1") == 0)
		agent.off |= AGENT_OFF_API;
	if (ranks && !rank_listed(ranks)) {
		agent.off |= AGENT_OFF_RANK;
		if (agent.rank >= 0)
			agent_log("is_rank: rank %d is not in rank_list: this process records nothing",
				  agent.rank);
		else
			agent_log("is_rank: no rank yet (none of RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, "
				  "SLURM_PROCID): this process records nothing until the program's "
				  "init_process_group names one in rank_list");
	}
	sched.windows = agent.off == 0;
	sched.win_first = 1;
}

/* Sets the bits of `mask` to `bits`; writes a RECORDING record on `t`
 * when that switches the process on or off. Called with the lock held. */
static void set_off(struct agent_thread *t, uint32_t mask, uint32_t bits, uint32_t cause)
{
	uint32_t before = agent.off, after = (before & ~mask) | bits;
	if (before == after)
		return;
	agent.off = after;
	if (!before == !after)
		return;
	if (!after) {
		sched.windows++;
		sched.win_first = __atomic_load_n(&agent.steps, __ATOMIC_RELAXED) + 1;
	}
	if (t) {
		struct raw_recording r = { !after, cause };
		raw_writer_emit_aux(&t->w, RAW_REC_RECORDING, agent_ticks(), &r, sizeof r);
	}
	agent_dev_update();
}

/* A new activation published by the launcher starts at the next step.
 * The request is read as a seqlock's reader (raw_control.h): acquire
 * loads keep a weakly ordered machine (aarch64) from giving fields older
 * than the generation, and a request read while the launcher wrote the
 * next is read again. */
static void dynamic_poll(uint64_t n)
{
	struct raw_control *c = (struct raw_control *)agent.ctl;
	if (!c)
		return;
	uint32_t seq, gen, start, active, warmup, flags, is_rank, analyse;
	int rank = __atomic_load_n(&agent.rank, __ATOMIC_ACQUIRE);
	uint64_t word = 0;
	for (int tries = 0;; tries++) {
		/* acquire loads: the second load of dyn_seq comes after them */
		seq = __atomic_load_n(&c->dyn_seq, __ATOMIC_ACQUIRE);
		gen = __atomic_load_n(&c->dyn_generation, __ATOMIC_ACQUIRE);
		start = __atomic_load_n(&c->dyn_start_step, __ATOMIC_ACQUIRE);
		active = __atomic_load_n(&c->dyn_active, __ATOMIC_ACQUIRE);
		warmup = __atomic_load_n(&c->dyn_warmup, __ATOMIC_ACQUIRE);
		flags = __atomic_load_n(&c->dyn_flags, __ATOMIC_ACQUIRE);
		is_rank = __atomic_load_n(&c->dyn_is_rank, __ATOMIC_ACQUIRE);
		analyse = __atomic_load_n(&c->dyn_analyse, __ATOMIC_ACQUIRE);
		if (rank >= 0 && (uint32_t)rank < RAW_DYN_RANKS)
			word = __atomic_load_n(&c->dyn_ranks[rank / 64], __ATOMIC_ACQUIRE);
		if (!(seq & 1) && __atomic_load_n(&c->dyn_seq, __ATOMIC_RELAXED) == seq)
			break;
		if (tries == 1000)
			return;   /* the launcher is mid-write: the next step sees it */
	}
	if (gen == 0 || gen == sched.dyn_seen)
		return;
	sched.dyn_seen = gen;
	if (is_rank && (rank < 0 || !((word >> (rank % 64)) & 1))) {
		agent_log("dynamic activation %u: not for this process (rank %d is not in "
			  "rank_list)", gen, rank);
		return;
	}
	/* warm-up steps first, as dynamic_profile's schedule(warmup, active) */
	sched.dyn_warm = start > n ? start : n + 1;
	sched.dyn_first = sched.dyn_warm + warmup;
	sched.dyn_last = sched.dyn_first + active - 1;
	sched.dyn_flags = flags;
	sched.dyn_analyse = analyse;
	sched.dyn_gen = gen;
	agent_log("dynamic activation %u: steps %llu to %llu (warm-up from step %llu)", gen,
		  (unsigned long long)sched.dyn_first, (unsigned long long)sched.dyn_last,
		  (unsigned long long)sched.dyn_warm);
}

/* RUN_DIR/windows/<pid>.w<window>.req (lib/run/windows.h): the launcher
 * parses steps first..last into a result of their own. Once per window, at
 * its last step's end: a few system calls, off the hot path. */
static void request_result(uint64_t first, uint64_t last, const char *label,
			   uint32_t activation)
{
	char dir[4200], tmp[4300], path[4300], text[512];
	snprintf(dir, sizeof dir, "%s/windows", agent.run_dir);
	snprintf(tmp, sizeof tmp, "%s/.%d.w%u.tmp", dir, agent.pid, sched.windows);
	snprintf(path, sizeof path, "%s/%d.w%05u.req", dir, agent.pid, sched.windows);
	int n = snprintf(text, sizeof text, "{\"pid\":%d,\"window\":%u,"
			 "\"steps\":[%llu,%llu],\"label\":\"%s\",\"activation\":%u}\n",
			 agent.pid, sched.windows, (unsigned long long)first,
			 (unsigned long long)last, label, activation);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
	int ok = fd >= 0 && write(fd, text, (size_t)n) == n;
	if (fd >= 0)
		close(fd);
	if (ok && rename(tmp, path) == 0)
		return;
	if (fd >= 0)
		unlink(tmp);
	agent_log("no result for the window of steps %llu to %llu: cannot write %s",
		  (unsigned long long)first, (unsigned long long)last, path);
}

void agent_sched_step_end(struct agent_thread *t, uint64_t n)
{
	pthread_mutex_lock(&sched.lock);
	if (sched.dynamic)
		dynamic_poll(n);
	int was_on = !(agent.off & (AGENT_OFF_SCHEDULE | AGENT_OFF_DYNAMIC));
	uint32_t gen = sched.dyn_gen, analyse = sched.dyn_analyse;
	set_off(t, AGENT_OFF_SCHEDULE | AGENT_OFF_DYNAMIC, window_off(n + 1),
		sched.dynamic ? RAW_CAUSE_DYNAMIC : RAW_CAUSE_SCHEDULE);
	int ends = was_on && (agent.off & (AGENT_OFF_SCHEDULE | AGENT_OFF_DYNAMIC));
	if (ends && sched.dynamic && analyse) {
		char label[48];
		snprintf(label, sizeof label, "dynamic activation %u", gen);
		request_result(sched.win_first, n, label, gen);
	} else if (ends && !sched.dynamic && sched.has_schedule && sched.cycle_results) {
		request_result(sched.win_first, n, "schedule cycle", 0);
	}
	pthread_mutex_unlock(&sched.lock);
}

void agent_sched_api(uint32_t on)
{
	struct agent_thread *t = agent_thread();
	pthread_mutex_lock(&sched.lock);
	set_off(t, AGENT_OFF_API, on ? 0 : AGENT_OFF_API, RAW_CAUSE_API);
	pthread_mutex_unlock(&sched.lock);
}

void agent_sched_rank_known(void)
{
	const char *ranks = getenv(PROF_AGENT_RANKS);
	if (!ranks)
		return;
	if (!rank_listed(ranks)) {
		/* off since the start, for want of a rank: nothing to write */
		agent_log("is_rank: rank %d is not in rank_list: this process records nothing",
			  agent.rank);
		return;
	}
	struct agent_thread *t = agent_thread();
	pthread_mutex_lock(&sched.lock);
	set_off(t, AGENT_OFF_RANK, 0, RAW_CAUSE_RANK);
	pthread_mutex_unlock(&sched.lock);
	agent_log("is_rank: rank %d is in rank_list: this process records from here", agent.rank);
}

void agent_sched_fork(enum agent_fork side)
{
	if (side == AGENT_FORK_PREPARE)
		pthread_mutex_lock(&sched.lock);
	else
		pthread_mutex_unlock(&sched.lock);
}

/* A fork child may have inherited the lock held by a parent thread. */
void agent_sched_after_fork(void)
{
	pthread_mutex_init(&sched.lock, NULL);
}

/* The in-script profiler objects (share/prof/python/prof): their schedule
 * ("skip_first,wait,warmup,active,repeat", counted from the step in
 * progress as torch.profiler counts from start(); NULL or "": every step)
 * and collectors (PROF_FW_* bits) replace the launcher's, so one recorder
 * follows the script. Applies at once to the step in progress. 0, or -1
 * for a spec that is not a schedule. Not part of prof_tx.h. */
__attribute__((visibility("default")))
int prof_fw_schedule(const char *spec, uint32_t fw_flags)
{
	if (!agent.active)
		return -1;
	if (!agent_enter(0))
		return -1;
	struct agent_thread *t = agent_thread();
	pthread_mutex_lock(&sched.lock);
	int rc = 0;
	if (spec && *spec)
		rc = parse_schedule(spec);
	else
		sched.has_schedule = 0;
	if (rc == 0) {
		uint64_t done = __atomic_load_n(&agent.steps, __ATOMIC_RELAXED);
		sched.base = done;
		sched.dynamic = 0;   /* the script decides now, not profiler_config.json */
		sched.base_flags = fw_flags;
		set_off(t, AGENT_OFF_SCHEDULE | AGENT_OFF_DYNAMIC, window_off(done + 1),
			RAW_CAUSE_SCHEDULE);
		agent_log("the program's profiler object sets the schedule \"%s\" from step %llu",
			  spec && *spec ? spec : "every step", (unsigned long long)done + 1);
	}
	pthread_mutex_unlock(&sched.lock);
	agent_leave();
	return rc;
}

/* What prof's Python hooks ask after every step: whether the step in
 * progress records, or warms up, and with which collectors; the high half
 * counts the windows begun, so a hook sees a new window even when two are
 * back to back. Not part of prof_tx.h: an interface between prof's parts. */
__attribute__((visibility("default")))
uint64_t prof_fw_state(void)
{
	if (!agent.active)
		return 0;
	/* in an activation's window, warm-up included: its collectors */
	int in_dyn = sched.dynamic && sched.phase != PH_NONE;
	uint32_t f = (in_dyn ? sched.dyn_flags : sched.base_flags) &
		     (PROF_FW_OPS | PROF_FW_SHAPES | PROF_FW_STACK | PROF_FW_MEMORY | PROF_FW_MODULES |
		      PROF_FW_FLOPS);
	uint32_t window = sched.dynamic ? AGENT_OFF_DYNAMIC : AGENT_OFF_SCHEDULE;
	if (agent_recording())
		f |= PROF_FW_RECORDING;
	else if (agent.off == window && *agent.control && sched.phase == PH_WARMUP)
		f |= PROF_FW_WARMUP;
	return f | (uint64_t)sched.windows << 32;
}

__attribute__((visibility("default")))
uint64_t prof_fw_step(void)
{
	return agent.active ? __atomic_load_n(&agent.steps, __ATOMIC_RELAXED) + 1 : 0;
}

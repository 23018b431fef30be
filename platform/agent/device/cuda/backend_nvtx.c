/*
 * torch's operator ranges, taken at the NVTX call. Each NVTX instance is
 * handed to libcupti (backend.c), which fills the instance's function
 * table; prof then puts its own push and pop in front of CUPTI's for the
 * default domain. A range whose message is torch's NVTX observer's
 * (common/torch_nvtx.h: "aten::mm, seq = 3, op_id = 9") becomes an
 * operator in its thread's own stream (agent_op_begin/end: an interned
 * name, one record each way, no lock); any other range goes on to CUPTI,
 * which records it as a MARKER, as before.
 *
 * Why not leave torch's ranges to CUPTI as well: CUPTI would copy a
 * message unique to every call into its buffer, twice a record, and the
 * backend read it back and cut it up on CUPTI's thread; with ~150
 * operators a training step, that is the whole of what prof's operator
 * collection costs the loop then, and prof can do it in less.
 *
 * A pop is prof's exactly when the push it closes was: a bit a depth,
 * per thread; ranges past 64 deep go to CUPTI. PROF_NVTX_VIA_CUPTI=1 (a
 * diagnostic, test/gpu/README) leaves every range to CUPTI, the way
 * before this hook, to compare the two.
 *
 * NVTX's tool interface (nvtx3/nvtxDetail/nvtxTypes.h, an ABI every NVTX
 * since 2.0 keeps): InitializeInjectionNvtx2 gets a function that returns
 * export tables; table 1 (callbacks) gives each module's function table,
 * an array of pointers to the instance's function pointers, by callback id.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/device/cuda/backend_parts.h"
#include "common/torch_nvtx.h"

typedef void (*nvtx_fn)(void);
typedef const void *(*nvtx_export_table_fn)(uint32_t id);

struct nvtx_callbacks {
	size_t struct_size;
	int (*module_table)(int module, nvtx_fn ***table, unsigned *size);
};

#define NVTX_ETID_CALLBACKS 1
#define NVTX_CB_MODULE_CORE 1
enum { NVTX_PUSH_EX = 8, NVTX_PUSH_A = 9, NVTX_PUSH_W = 10, NVTX_POP = 11 };

typedef int (*nvtx_push_a_fn)(const char *);
typedef int (*nvtx_push_fn)(const void *);   /* PushEx (attributes), PushW (wchar_t) */
typedef int (*nvtx_pop_fn)(void);

/* CUPTI's functions, set once by the first instance's hook, inside NVTX's
 * initialisation, which every NVTX call waits for. */
static struct {
	pthread_mutex_t lock;
	int hooked;                   /* the first instance's functions are kept */
	nvtx_push_a_fn push_a;
	nvtx_push_fn push_ex, push_w;
	nvtx_pop_fn pop;
	uint64_t ops;                 /* operators written (atomic) */
} nvtx = { .lock = PTHREAD_MUTEX_INITIALIZER };

static __thread uint32_t nvtx_depth __attribute__((tls_model("initial-exec")));
static __thread uint64_t nvtx_mine __attribute__((tls_model("initial-exec")));    /* prof's push */
static __thread uint64_t nvtx_written __attribute__((tls_model("initial-exec"))); /* with a begin */

/* A push of the default domain: its depth's bits cleared for it. */
static inline uint64_t nvtx_enter(uint32_t *depth)
{
	uint32_t d = nvtx_depth++;
	uint64_t bit = d < 64 ? 1ull << d : 0;
	nvtx_mine &= ~bit;
	nvtx_written &= ~bit;
	*depth = d;
	return bit;
}

static int nvtx_push_a(const char *msg)
{
	uint32_t d;
	uint64_t bit = nvtx_enter(&d);
	struct torch_nvtx_op op;
	/* msprof_tx false, or the default domain left out: CUPTI's to drop */
	if (bit && !agent.tx_off && agent.default_kept && msg && torch_nvtx_op_parse(msg, &op)) {
		nvtx_mine |= bit;
		if (!torch_nvtx_left_out(msg) &&
		    agent_op_begin(msg, op.name_len, msg + op.sizes_at, op.sizes_len, op.seq)) {
			nvtx_written |= bit;
			__atomic_fetch_add(&nvtx.ops, 1, __ATOMIC_RELAXED);
		}
		return (int)d;
	}
	if (nvtx.push_a)
		return nvtx.push_a(msg);
	nvtx_mine |= bit;
	return (int)d;
}

/* A push CUPTI does not take is prof's to pop: CUPTI would close
 * another range with its pop. */
static int nvtx_push_other(nvtx_push_fn next, const void *arg)
{
	uint32_t d;
	uint64_t bit = nvtx_enter(&d);
	if (next)
		return next(arg);
	nvtx_mine |= bit;
	return (int)d;
}

static int nvtx_push_ex(const void *attributes) { return nvtx_push_other(nvtx.push_ex, attributes); }
static int nvtx_push_w(const void *msg) { return nvtx_push_other(nvtx.push_w, msg); }

static int nvtx_pop(void)
{
	if (nvtx_depth == 0)   /* pushed before the hook, or never */
		return nvtx.pop ? nvtx.pop() : -1;
	uint32_t d = --nvtx_depth;
	uint64_t bit = d < 64 ? 1ull << d : 0;
	if (nvtx_mine & bit) {
		if (nvtx_written & bit)
			agent_op_end();
		return (int)d;
	}
	return nvtx.pop ? nvtx.pop() : (int)d;
}

/* The instance's slots of the four functions; false when it has none. */
static bool nvtx_core_slots(void *get_export_table, nvtx_fn *slots[4])
{
	nvtx_export_table_fn get = (nvtx_export_table_fn)get_export_table;
	const struct nvtx_callbacks *cb = get ? get(NVTX_ETID_CALLBACKS) : NULL;
	nvtx_fn **table = NULL;
	unsigned size = 0;
	if (!cb || cb->struct_size < sizeof *cb || !cb->module_table ||
	    !cb->module_table(NVTX_CB_MODULE_CORE, &table, &size) || !table || size < NVTX_POP)
		return false;
	static const int ids[4] = { NVTX_PUSH_EX, NVTX_PUSH_A, NVTX_PUSH_W, NVTX_POP };
	for (int i = 0; i < 4; i++)
		if (!(slots[i] = table[ids[i]]))
			return false;
	return true;
}

/* What CUPTI put in an instance's slots, kept from the first instance (a
 * later one must hold the same: one libcupti fills them all). A slot
 * CUPTI left as it was still holds NVTX's own initialising function,
 * which would call back into prof's: kept as NULL, the no-op NVTX makes
 * of a slot no tool set. */
static int nvtx_keep_next(nvtx_fn *slots[4], const nvtx_fn before[4])
{
	nvtx_fn set[4], had[4] = { (nvtx_fn)nvtx.push_ex, (nvtx_fn)nvtx.push_a,
				   (nvtx_fn)nvtx.push_w, (nvtx_fn)nvtx.pop };
	for (int i = 0; i < 4; i++)
		set[i] = *slots[i] == before[i] ? NULL : *slots[i];
	if (nvtx.hooked)
		return memcmp(set, had, sizeof set) ? -1 : 0;
	nvtx.push_ex = (nvtx_push_fn)set[0];
	nvtx.push_a = (nvtx_push_a_fn)set[1];
	nvtx.push_w = (nvtx_push_fn)set[2];
	nvtx.pop = (nvtx_pop_fn)set[3];
	nvtx.hooked = 1;
	return 0;
}

int cuda_nvtx_via_cupti(void)
{
	const char *via = getenv("PROF_NVTX_VIA_CUPTI");
	return via && strcmp(via, "1") == 0;
}

/* prof's functions into the slots, in front of CUPTI's. */
static const char *nvtx_hook(nvtx_fn *slots[4], const nvtx_fn before[4])
{
	pthread_mutex_lock(&nvtx.lock);
	int rc = nvtx_keep_next(slots, before);
	if (rc == 0) {
		*slots[0] = (nvtx_fn)nvtx_push_ex;
		*slots[1] = (nvtx_fn)nvtx_push_a;
		*slots[2] = (nvtx_fn)nvtx_push_w;
		*slots[3] = (nvtx_fn)nvtx_pop;
	}
	pthread_mutex_unlock(&nvtx.lock);
	return rc ? "CUPTI gave this NVTX instance other functions than the first's" : NULL;
}

int cuda_nvtx_init(void *get_export_table, int (*to_cupti)(void *), const char **why)
{
	nvtx_fn *slots[4], before[4];
	bool found = nvtx_core_slots(get_export_table, slots);
	for (int i = 0; found && i < 4; i++)
		before[i] = *slots[i];
	int rc = to_cupti(get_export_table);
	*why = NULL;
	if (!rc)
		return rc;
	if (cuda_nvtx_via_cupti())
		*why = "PROF_NVTX_VIA_CUPTI=1";
	else if (!found)
		*why = "this NVTX has no function table for its core module";
	else
		*why = nvtx_hook(slots, before);
	return rc;
}

uint64_t cuda_nvtx_hook_ops(void)
{
	return __atomic_load_n(&nvtx.ops, __ATOMIC_RELAXED);
}

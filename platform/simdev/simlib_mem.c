/*
 * Device memory of the sim: fake addresses, increasing and 256-byte
 * aligned like a device allocator's, never reused, so a trace's addresses
 * are unambiguous. Live allocations are remembered to give a free its size.
 */
#include "simlib_int.h"

#include <stdlib.h>

#define SIM_MEM_BASE    0x200000000ull  /* looks like a device address */
#define SIM_MEM_ALIGN   256ull
#define SIM_MEM_BUCKETS 1024u

struct sim_alloc {
	uint64_t address, bytes;
	int device;
	struct sim_alloc *next;
};

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_alloc *buckets[SIM_MEM_BUCKETS];
static uint64_t next_address = SIM_MEM_BASE;

static struct sim_alloc **bucket_of(uint64_t address)
{
	return &buckets[(address / SIM_MEM_ALIGN) % SIM_MEM_BUCKETS];
}

uint64_t sim_mem_alloc(int device, uint64_t bytes)
{
	if (device < 0 || device >= SIM_DEVICES)
		return 0;
	struct sim_alloc *a = malloc(sizeof *a);
	if (!a)
		return 0;
	uint64_t span = (bytes + SIM_MEM_ALIGN - 1) & ~(SIM_MEM_ALIGN - 1);
	pthread_mutex_lock(&mem_lock);
	a->address = next_address;
	a->bytes = bytes;
	a->device = device;
	next_address += span ? span : SIM_MEM_ALIGN;
	struct sim_alloc **b = bucket_of(a->address);
	a->next = *b;
	*b = a;
	pthread_mutex_unlock(&mem_lock);
	return a->address;
}

int sim_mem_release(int device, uint64_t address, uint64_t *bytes)
{
	struct sim_alloc *found = NULL;
	pthread_mutex_lock(&mem_lock);
	for (struct sim_alloc **p = bucket_of(address); *p; p = &(*p)->next)
		if ((*p)->address == address && (*p)->device == device) {
			found = *p;
			*p = found->next;
			break;
		}
	pthread_mutex_unlock(&mem_lock);
	if (!found)
		return -1;
	*bytes = found->bytes;
	free(found);
	return 0;
}

/* A fork child keeps the parent's allocations, as its memory does. */
void sim_mem_after_fork(void)
{
	pthread_mutex_init(&mem_lock, NULL);
}

/* An allocation or a release, as the memory outputs see it. */
static void mem_report(const struct sim_call *c, uint32_t kind, int device,
		       uint64_t address, uint64_t bytes)
{
	struct sim_record r = {
		.kind = kind, .recorded = c->recorded, .start_ns = c->start_ns,
		.end_ns = c->start_ns, .correlation = c->correlation, .bytes = bytes,
		.address = address, .tid = sim_tid(), .device = (uint32_t)device,
	};
	sim_report(&r);
}

SIM_EXPORT uint64_t prof_sim_malloc(int device, uint64_t bytes)
{
	struct sim_call c;
	sim_call_begin(&c);
	uint64_t address = sim_mem_alloc(device, bytes);
	if (address)
		mem_report(&c, SIM_REC_MALLOC, device, address, bytes);
	sim_call_end(&c, "prof_sim_malloc", device);
	return address;
}

SIM_EXPORT void prof_sim_free(int device, uint64_t address)
{
	struct sim_call c;
	uint64_t bytes;
	sim_call_begin(&c);
	if (sim_mem_release(device, address, &bytes) == 0)
		mem_report(&c, SIM_REC_FREE, device, address, bytes);
	sim_call_end(&c, "prof_sim_free", device);
}

/*
 * memory_record.csv and operator_memory.csv (share/prof/doc/outputs.md),
 * from the device allocations and frees the backends record.
 *
 * memory_record.csv: one row per allocation or free, in time order, with
 * the device's running total after it. Component is the device family
 * ("SIM", "CUDA": allocations seen at the device runtime); Reserved and
 * Active equal Allocated (prof sees no caching allocator); Stream Ptr is
 * the stream id for stream-ordered allocations, 0 otherwise; Device Type
 * "<family>:<index>" ("CUDA:0"), as Ascend writes "NPU:0". Totals are per
 * device over all processes of the run; a free of an allocation made
 * before recording began lowers the total by its size, never below 0.
 *
 * operator_memory.csv: one row per allocation, written when it is freed
 * (so rows are in release order), then the allocations never freed (by
 * allocation time) with Release Time, Duration and the release totals
 * empty. Name is the framework operator in scope on the allocating thread
 * (empty when none); Size(KB) = bytes / 1024, three decimals; Active
 * Release Time and Active Duration equal Release Time and Duration.
 * MB = 2^20 bytes, three decimals. Memory follows the live allocations.
 *
 * profile_memory adds the framework allocator's events (out_sink.h's
 * struct out_fw_mem, through out_memory_sink): memory_record.csv rows of
 * Component "PTA" (Ascend's name for torch's allocator) with torch's
 * totals (Reserved and Active empty where torch gave none; a total torch
 * gave none of is the sum of the events seen), Stream Ptr empty, Device
 * Type "CPU" or "CUDA:<index>", per process; operator_memory.csv rows
 * named by the operator open on the allocating thread. An allocation is
 * paired with its free by address (pid, device, address), or where torch
 * gave no address by (pid, thread, device, size), the latest allocation
 * first. The never freed come after the device's, by allocation time.
 */
#ifndef PROF_OUT_MEMORY_H
#define PROF_OUT_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include "common/csv_out.h"
#include "outputs/out_file.h"
#include "common/idmap.h"

#define OUT_MEM_RECORD_HEADER "Component,Timestamp(us),Total Allocated(MB)," \
	"Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type"
#define OUT_MEM_OP_HEADER "Name,Size(KB),Allocation Time(us),Release Time(us)," \
	"Active Release Time(us),Duration(us),Active Duration(us)," \
	"Allocation Total Allocated(MB),Allocation Total Reserved(MB)," \
	"Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB)," \
	"Release Total Active(MB),Stream Ptr,Device Type"

struct out_mem_event {
	int32_t pid;
	uint32_t vendor, device, stream;
	uint64_t ns, address, bytes;    /* a free's bytes may be 0: the allocation's */
	int is_free;
	const char *op;                 /* operator in scope; NULL: none */
};

struct out_mem_total { uint32_t vendor, device; uint64_t bytes; };

struct out_memory {
	struct out_file rec, ops;
	struct csv rc, oc;
	uint64_t base;
	struct parse_idmap live;        /* address -> chain of struct out_mem_live */
	size_t nlive;
	struct out_mem_total *totals;
	size_t ntotals, captotals;
	struct parse_idmap total_at;    /* vendor << 32 | device -> position in totals */
	struct parse_idmap fwlive;      /* framework allocations: key -> chain of out_mem_fwlive */
	size_t nfwlive;
};

struct out_fw_mem;

int out_memory_open(struct out_memory *m, const char *dir, uint64_t base_mono_ns);
/* One event. Returns the device's total after it; *bytes gets the bytes
 * allocated or freed (0 for a free of an allocation never seen and of
 * unknown size). */
uint64_t out_memory_event(struct out_memory *m, const struct out_mem_event *e, uint64_t *bytes);
/* One framework allocator event (profile_memory). */
void out_memory_fw(struct out_memory *m, const struct out_fw_mem *e);
/* A device's Device Type: "<family>:<index>" ("SIM:0"). */
void out_memory_device_type(char *buf, size_t n, uint32_t vendor, uint32_t device);
/* Writes the allocations never freed and commits both files. */
int out_memory_close(struct out_memory *m);
void out_memory_abort(struct out_memory *m);

#endif

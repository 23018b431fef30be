/*
 * CUDA runtime and driver API names by CUPTI callback id, and the APIs
 * not worth a record. Pure data and lookups: no CUPTI calls, so the unit
 * tests link it without a GPU.
 */
#ifndef PROF_CUDA_BACKEND_CBID_H
#define PROF_CUDA_BACKEND_CBID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* backend_cbid_table.c, generated from the CUPTI headers. Runtime names
 * lose CUPTI's "_v3020"-style release suffix ("cudaLaunchKernel"); driver
 * names are the exported symbols ("cuMemAlloc_v2"). */
extern const char *const cuda_runtime_names[];
extern const unsigned cuda_runtime_names_len;
extern const char *const cuda_driver_names[];
extern const unsigned cuda_driver_names_len;

#define CUDA_API_NAME_MAX 32  /* room for the "cbid <n>" fallback */

/* The API's name; for an id the table lacks (a newer CUDA), "cbid <n>"
 * written into `buf`. `domain` is RAW_API_RUNTIME or RAW_API_DRIVER. */
const char *cuda_api_name(uint32_t domain, uint32_t cbid, char *buf, size_t len);

/* Frequent getters that say nothing about performance (Kineto drops the
 * same kind): no record is kept for them. */
bool cuda_api_blocked(uint32_t domain, uint32_t cbid);

/* The blocklists themselves, to switch the records off at the source
 * (cuptiActivityEnableRuntimeApi/DriverApi, CUPTI 12.5+). */
extern const uint32_t cuda_runtime_blocklist[];
extern const size_t cuda_runtime_blocklist_len;
extern const uint32_t cuda_driver_blocklist[];
extern const size_t cuda_driver_blocklist_len;

/* APIs whose callbacks teach the backend each calling thread's OS tid
 * (CUPTI names threads by pthread_self(), see backend_tid.c): the calls
 * every thread that does GPU work makes, and no frequent getter. */
extern const uint32_t cuda_runtime_tid_cbids[];
extern const size_t cuda_runtime_tid_cbids_len;
extern const uint32_t cuda_driver_tid_cbids[];
extern const size_t cuda_driver_tid_cbids_len;

#endif

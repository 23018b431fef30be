/*
 * prof annotation API: marks, ranges and steps in your own code.
 *
 * Link with `pkg-config --cflags --libs prof-tx`. Without prof every call is
 * an empty function; under `prof run` the preloaded agent defines the same
 * symbols and records them. Strings are copied when first seen; the caller
 * keeps ownership. All functions are thread-safe.
 *
 * Signal handlers: every function here may be called from one. A call
 * that interrupts another prof call on the same thread (the handler came
 * in the middle of it) records nothing and is counted among the run's
 * lost records, so the stream is never damaged; prof_start and prof_stop
 * so interrupting take effect when the interrupted call returns, and a
 * prof_step so interrupting still counts the step. Only the first call
 * on a thread is not async-signal-safe (it creates the thread's stream:
 * make one outside the handler first, e.g. a prof_mark at thread start).
 */
#ifndef PROF_TX_H
#define PROF_TX_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PROF_TX_API __attribute__((visibility("default")))
#else
#define PROF_TX_API
#endif

/* An instant event on this thread. */
PROF_TX_API void prof_mark(const char *message);

/* A range on this thread; ranges nest, pop closes the innermost. */
PROF_TX_API void prof_range_push(const char *name);
PROF_TX_API void prof_range_pop(void);

/* A range that may end on another thread: pass the id to prof_range_end.
 * Returns 0 when nothing is recorded (then prof_range_end(0) is a no-op). */
PROF_TX_API uint64_t prof_range_start(const char *name);
PROF_TX_API void prof_range_end(uint64_t id);

/* The same in a named domain (as NVTX and mstx domains): the
 * configuration's mstx_domain_include / mstx_domain_exclude keep or drop
 * a domain's marks and ranges. The functions above use the default
 * domain, named "default" in those lists, as is a NULL or "" domain.
 * Close a domain's range with prof_range_pop / prof_range_end. */
PROF_TX_API void prof_mark_domain(const char *domain, const char *message);
PROF_TX_API void prof_range_push_domain(const char *domain, const char *name);
PROF_TX_API uint64_t prof_range_start_domain(const char *domain, const char *name);

/* A training or inference step ends here; the next one begins. */
PROF_TX_API void prof_step(void);

/* Resume and pause recording in this process. */
PROF_TX_API void prof_start(void);
PROF_TX_API void prof_stop(void);

/* Key/value pairs for profiler_metadata.json; `json` must be a JSON text. */
PROF_TX_API void prof_add_metadata(const char *key, const char *value);
PROF_TX_API void prof_add_metadata_json(const char *key, const char *json);

#ifdef __cplusplus
}
#endif
#endif

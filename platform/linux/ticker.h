/* Waiting for the next tick of a periodic launcher thread (the samplers),
 * woken early by a write to its stop pipe. */
#ifndef PROF_TICKER_H
#define PROF_TICKER_H

#include <stdbool.h>
#include <stdint.h>

/* Sleeps until `deadline` (CLOCK_MONOTONIC ns) or until `stop_fd` becomes
 * readable; true when told to stop. */
bool ticker_wait(int stop_fd, uint64_t deadline);

#endif

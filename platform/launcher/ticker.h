/* Waiting for the next tick of a periodic launcher thread (the samplers),
 * woken early by a write to its stop pipe. */
#ifndef PROF_TICKER_H
#define PROF_TICKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* Sleeps until `deadline` (CLOCK_MONOTONIC ns) or until `stop_fd` becomes
 * readable; true when told to stop. */
bool ticker_wait(int stop_fd, uint64_t deadline);

/* The tick after `next`, `interval` ns on; after a stall (a suspended
 * machine) the grid resumes from `now` rather than firing the missed ticks
 * back to back. */
uint64_t ticker_next(uint64_t next, uint64_t now, uint64_t interval);

/* Wakes the thread through its stop pipe's write end and joins it. */
void ticker_stop(int stop_fd_write, pthread_t thread);

#endif

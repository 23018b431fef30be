/*
 * The agent's device flusher: one thread, running once some backend has
 * started, that every HAL_FLUSH_MS moves completed device activity to
 * disk (so a killed process loses little) and lets the agent follow
 * recording switches it is not told about (the launcher's control page).
 */
#ifndef PROF_HAL_FLUSHER_H
#define PROF_HAL_FLUSHER_H

#define HAL_FLUSH_MS 100

/* Starts the thread unless it runs. */
void hal_flusher_start(void);
/* Stops and joins it; never with the HAL's lock held (it takes it). */
void hal_flusher_stop(void);
/* In a fork child, where the thread does not exist. */
void hal_flusher_forget(void);

#endif

/*
 * Memory that ran out where the parse goes on without what it was for (a
 * row, an event, a name, a table): counted process-wide at the place it
 * happened, and said once at the end of the parse (pipeline/parse_run.c),
 * so that no output comes out short without a word. Where memory running
 * out ends the parse instead, the error says so and nothing is noted.
 */
#ifndef PROF_NOMEM_H
#define PROF_NOMEM_H

#include <stdint.h>

void prof_nomem_note(void);
/* An allocation that failed (and was noted) was made good another way, a
 * smaller buffer or the work done in the foreground: its note taken back. */
void prof_nomem_recovered(void);
/* Notes so far, less those taken back; a parse says those made while it
 * ran. (Signed: in a program without the wrappers nothing is noted, and a
 * recovery takes back what was never noted.) */
int64_t prof_nomem_count(void);

#endif

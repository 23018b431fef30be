/*
 * Allocations that failed, counted process-wide by bin/prof's allocation
 * wrappers (nomem_wrap.c), so that a parse that went on without what one
 * was for (a row, an event, a name) says so at its end
 * (pipeline/parse_run.c): no output comes out short without a word. A
 * parse that memory ends instead says why it failed.
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
/* n notes accounted for: said (a parse's end), or the failure they caused
 * said why. What is left unsaid when a command ends, prof's main says
 * (cmd/prof.c): stats, diff and the rest come out short with a word too. */
void prof_nomem_said(int64_t n);
int64_t prof_nomem_unsaid(void);

#endif

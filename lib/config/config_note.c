/*
 * Notes: the keys a source set that prof accepts but cannot act on as
 * asked. A note belongs to the key it maps onto, so a later source that
 * sets that key again (to a value that acts, or not) replaces it, and a
 * key is said at most once whichever way it was spelled.
 */
#include "config/config_int.h"

#include <stdlib.h>
#include <string.h>

static void note_clear(struct cfg_note *n)
{
	free(n->key);
	free(n->target);
	free(n->source);
	memset(n, 0, sizeof *n);
}

void cfg_note(struct prof_config *c, const char *shown, const char *target, const char *source,
	      const char *why)
{
	for (size_t i = 0; i < c->nnotes; i++) {
		if (strcmp(c->notes[i].target, target) != 0)
			continue;
		note_clear(&c->notes[i]);
		memmove(&c->notes[i], &c->notes[i + 1], (c->nnotes - i - 1) * sizeof c->notes[0]);
		c->nnotes--;
		break;
	}
	if (!why || c->nnotes == CFG_NOTES_MAX)
		return;
	struct cfg_note *n = &c->notes[c->nnotes];
	n->key = strdup(shown);
	n->target = strdup(target);
	n->source = strdup(source);
	n->why = why;
	if (n->key && n->target && n->source)
		c->nnotes++;
	else
		note_clear(n);
}

void cfg_notes_free(struct prof_config *c)
{
	for (size_t i = 0; i < c->nnotes; i++)
		note_clear(&c->notes[i]);
	c->nnotes = 0;
}

void cfg_pending_keys(const struct prof_config *c, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < c->nnotes; i++) {
		if (buf[0])
			strncat(buf, ", ", len - strlen(buf) - 1);
		strncat(buf, c->notes[i].key, len - strlen(buf) - 1);
	}
}

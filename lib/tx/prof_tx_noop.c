/*
 * The bodies a program links against: empty, so a program built with the
 * annotation API runs unchanged without prof. Under `prof run` the agent is
 * preloaded and its definitions of these symbols win.
 */
#include "prof/prof_tx.h"

void prof_mark(const char *message) { (void)message; }
void prof_range_push(const char *name) { (void)name; }
void prof_range_pop(void) {}
uint64_t prof_range_start(const char *name) { (void)name; return 0; }
void prof_range_end(uint64_t id) { (void)id; }
void prof_mark_domain(const char *domain, const char *message) { (void)domain; (void)message; }
void prof_range_push_domain(const char *domain, const char *name) { (void)domain; (void)name; }
uint64_t prof_range_start_domain(const char *domain, const char *name)
{
	(void)domain;
	(void)name;
	return 0;
}
void prof_step(void) {}
void prof_start(void) {}
void prof_stop(void) {}
void prof_add_metadata(const char *key, const char *value) { (void)key; (void)value; }
void prof_add_metadata_json(const char *key, const char *json) { (void)key; (void)json; }

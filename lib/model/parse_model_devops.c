/*
 * Operators' device time: an op whose calls launched device tasks keeps
 * its operator_details.csv row in a devnode until the tasks are in. A
 * node adds its tasks to itself (self) and to every ancestor (total), so
 * ancestors have nodes too, and a node is written only after its
 * children's. Closed nodes wait in a list in the order they closed (a
 * child before its parent); the head goes when its deadline passes.
 */
#include "model/parse_model_int.h"

#include <stdlib.h>
#include <string.h>


struct model_devnode {
	uint64_t id;
	struct model_devnode *parent;
	struct out_op row;             /* filled when the op closed */
	uint64_t self_ns, total_ns, kself_ns, ktotal_ns;
	uint32_t pending;              /* calls whose first task has not come */
	uint32_t children;             /* child nodes not written yet */
	int closed;
	uint64_t deadline;
	struct model_devnode *prev, *next;  /* the closed list */
};

/* Written nodes wait in m->node_free for the next op: a calloc and a free
 * per op with device work were dropped for a pop and a push. */
static struct model_devnode *node_new(struct parse_model *m)
{
	struct model_devnode *n = m->node_free;
	if (!n)
		return calloc(1, sizeof *n);
	m->node_free = n->next;
	memset(n, 0, sizeof *n);
	return n;
}

static void node_drop(struct parse_model *m, struct model_devnode *n)
{
	n->next = m->node_free;
	m->node_free = n;
}

struct model_devnode *model_devnode_for(struct parse_model *m, struct model_thread *t,
					size_t k)
{
	struct model_devnode *parent = NULL;
	for (size_t i = 0; i <= k; i++) {
		struct model_op *o = &t->ops[i];
		if (!o->node) {
			struct model_devnode *n = node_new(m);
			if (!n)
				return NULL;
			if (parse_idmap_put(&m->devnodes, o->id, n) == n) {
				node_drop(m, n);
				return NULL;
			}
			n->id = o->id;
			n->parent = parent;
			if (parent)
				parent->children++;
			o->node = n;
		}
		parent = o->node;
	}
	return parent;
}

void model_devnode_pending(struct model_devnode *n)
{
	n->pending++;
}

static void unlink_closed(struct parse_model *m, struct model_devnode *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else
		m->node_head = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		m->node_tail = n->prev;
}

/* Writes n's row and forgets n; returns its parent. */
static struct model_devnode *finalize(struct parse_model *m, struct model_devnode *n)
{
	struct model_devnode *parent = n->parent;
	n->row.dev_self_ns = n->self_ns;
	n->row.dev_total_ns = n->total_ns;
	n->row.kernel_self_ns = n->kself_ns;
	n->row.kernel_total_ns = n->ktotal_ns;
	if (!n->row.merged)
		OUT_SINKS_EMIT(m->out.sinks, op, &n->row);
	unlink_closed(m, n);
	parse_idmap_del(&m->devnodes, n->id);
	if (parent)
		parent->children--;
	node_drop(m, n);
	return parent;
}

/* Writes n, and then its ancestors, while each is complete. */
static void try_finalize(struct parse_model *m, struct model_devnode *n)
{
	while (n && n->closed && n->children == 0 && n->pending == 0)
		n = finalize(m, n);
}

void model_devnode_close(struct parse_model *m, struct model_devnode *n,
			 const struct out_op *row)
{
	n->row = *row;
	n->closed = 1;
	n->deadline = row->end_ns + MODEL_LAUNCH_WAIT_NS;
	n->prev = m->node_tail;
	n->next = NULL;
	if (m->node_tail)
		m->node_tail->next = n;
	else
		m->node_head = n;
	m->node_tail = n;
	try_finalize(m, n);
}

void model_devnode_credit(struct parse_model *m, uint64_t ext_id, uint64_t ns, int kernel,
			  int first)
{
	struct model_devnode *n = parse_idmap_get(&m->devnodes, ext_id);
	if (!n)
		return;   /* written already: its wait was over */
	n->self_ns += ns;
	n->kself_ns += kernel ? ns : 0;
	for (struct model_devnode *a = n; a; a = a->parent) {
		a->total_ns += ns;
		a->ktotal_ns += kernel ? ns : 0;
	}
	if (first && n->pending) {
		n->pending--;
		try_finalize(m, n);
	}
}

void model_devnodes_expire(struct parse_model *m, uint64_t now)
{
	while (m->node_head && m->node_head->deadline <= now && !m->node_head->children) {
		struct model_devnode *parent = finalize(m, m->node_head);
		try_finalize(m, parent);
	}
}

/* At the end: every op is closed; children come first in the list (a
 * child closes before its parent), so the head is always ready. */
void model_devnodes_finish(struct parse_model *m)
{
	struct model_devnode *n = m->node_head;
	while (n) {
		if (n->children) {
			n = n->next;
			continue;
		}
		finalize(m, n);
		n = m->node_head;
	}
	parse_idmap_free(&m->devnodes);
}

void model_devnodes_free(struct parse_model *m)
{
	parse_idmap_each(&m->devnodes, model_free_val, NULL);   /* none after model_finish */
	parse_idmap_free(&m->devnodes);
	struct model_devnode *n;
	while ((n = m->node_free) != NULL) {
		m->node_free = n->next;
		free(n);
	}
}

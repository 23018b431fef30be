/* Inside the communication outputs: one step's collectives, rendered. */
#ifndef PROF_OUT_COMM_INT_H
#define PROF_OUT_COMM_INT_H

#include "common/json_out.h"
#include "outputs/tables/out_comm.h"

#define OUT_COMM_MB (1024.0 * 1024.0)

/* One step's collectives of one kind (p2p or collective), in start order. */
struct out_comm_set {
	const struct out_coll **v;
	size_t n;
};

/* Is it send or receive? */
int out_comm_is_p2p(uint32_t op);
/* "allreduce", ..., "receive"; "invalid" for an unknown op. */
const char *out_comm_type(uint32_t op);
/* The key "<name>__<pid>_<k>" (without the group) into buf. */
void out_comm_opname(const struct out_coll *r, char *buf, size_t n);
double out_comm_ms(uint64_t ns);
double out_comm_bw(uint64_t bytes, uint64_t ns);

/* Writes the value of "p2p" or "collective" of one step. */
void out_comm_json_set(struct jo *j, const struct out_comm_set *s, uint64_t base);
void out_comm_matrix_set(struct jo *j, const struct out_comm_set *s);

#endif

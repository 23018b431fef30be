/* SHA-256 (FIPS 180-4), for the static build's embedded files: the cache
 * checks each unpacked file against the hash the build computed. */
#ifndef PROF_SHA256_H
#define PROF_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

struct sha256 {
	uint32_t h[8];
	uint64_t len;       /* bytes hashed so far */
	uint8_t buf[64];
	size_t nbuf;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *p, size_t n);
void sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN]);

/* The hash of one buffer. */
void sha256_of(const void *p, size_t n, uint8_t out[SHA256_LEN]);

#endif

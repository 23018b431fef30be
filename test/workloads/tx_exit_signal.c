/*
 * tx_exit_signal READY_FILE: leaves by _exit(3) from a SIGTERM handler
 * while its main thread loops in prof's locked paths: batches of
 * framework operators (prof_fw_ops, the agent's framework stream and its
 * lock), steps and prof_stop/prof_start (the schedule's lock, window
 * switches), and marks. READY_FILE is written with the pid once the loop
 * runs. Under prof a handler that comes while the main thread holds one
 * of those locks must not make the exit wait for it.
 */
#include <dlfcn.h>
#include <prof/prof_tx.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define OPS 256

/* prof_fw_ops' record (platform/agent/agent_fw.c), then its strings. */
struct op_head {
	int32_t tid;
	uint64_t start_ns, end_ns;
	uint32_t flags;
	int64_t seq;
	int32_t fwd_tid;
	uint32_t len[4];
} __attribute__((packed));

static unsigned char batch[OPS * (sizeof(struct op_head) + 16)];

static size_t make_batch(void)
{
	size_t at = 0;
	for (int i = 0; i < OPS; i++) {
		struct op_head h = { .tid = 1, .start_ns = 1000 + 10 * (uint64_t)i,
				     .end_ns = 1005 + 10 * (uint64_t)i, .seq = -1,
				     .len = { 9, 0, 0, 0 } };
		memcpy(batch + at, &h, sizeof h);
		memcpy(batch + at + sizeof h, "aten::mm", 9);
		at += sizeof h + 9;
	}
	return at;
}

static void on_term(int sig)
{
	(void)sig;
	_exit(3);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: tx_exit_signal READY_FILE\n");
		return 2;
	}
	int (*fw_ops)(const void *, size_t) =
		(int (*)(const void *, size_t))dlsym(RTLD_DEFAULT, "prof_fw_ops");
	size_t len = make_batch();
	signal(SIGTERM, on_term);
	for (long i = 0;; i++) {
		if (fw_ops)
			fw_ops(batch, len);
		prof_step();
		prof_mark("loop");
		if (i % 4 == 0) {
			prof_stop();
			prof_start();
		}
		if (i == 20) {
			FILE *f = fopen(argv[1], "w");
			if (!f)
				return 1;
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
	}
}

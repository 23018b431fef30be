/*
 * sim_fork: the sim device across fork(). The parent runs kernel
 * "parent_k" (1 ms) on its stream, forks, and waits; the child runs
 * "child_k" (1 ms) on that inherited stream and on a stream of its own,
 * synchronises, and exits. Each process image's device activity belongs to
 * its own dev.raw: the child's holds child_k twice and nothing of the
 * parent's.
 */
#include <prof_sim.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define MS 1000000ull

int main(void)
{
	prof_sim_stream *s = prof_sim_stream_create(0);
	if (!s)
		return 1;
	prof_sim_kernel(s, "parent_k", MS);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		prof_sim_stream *own = prof_sim_stream_create(0);
		prof_sim_kernel(s, "child_k", MS);
		prof_sim_kernel(own, "child_k", MS);
		prof_sim_device_sync();
		exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	prof_sim_stream_sync(s);
	printf("sim_fork: child %d done\n", (int)pid);
	return 0;
}

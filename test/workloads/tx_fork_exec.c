/*
 * tx_fork_exec: the parent marks "parent-before-fork", forks; the child
 * marks "child-before-exec" and execs this program with "exec" as its
 * argument, which marks "after-exec". The parent marks "parent-after-wait".
 */
#include <prof/prof_tx.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "exec") == 0) {
		prof_mark("after-exec");
		return 0;
	}
	prof_mark("parent-before-fork");
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		prof_mark("child-before-exec");
		execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);
	prof_mark("parent-after-wait");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

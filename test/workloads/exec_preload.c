/*
 * exec_preload TX_STEPS: replaces LD_PRELOAD with "libm.so.6" (as a launch
 * script preloading its allocator would), then starts TX_STEPS five times,
 * each through another exec form: execl, execlp (on PATH), execle, execv
 * and execvp, asking for 1..5 steps. Prints "exec_preload: 5 children".
 */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void start(const char *tx, int form)
{
	char n[8];
	snprintf(n, sizeof n, "%d", form + 1);
	char *copy = strdup(tx), *name = basename(copy);
	char *argv[] = { name, n, "1", NULL };
	switch (form) {
	case 0: execl(tx, name, n, "1", (char *)NULL); break;
	case 1: execlp(name, name, n, "1", (char *)NULL); break;
	case 2: execle(tx, name, n, "1", (char *)NULL, environ); break;
	case 3: execv(tx, argv); break;
	default: execvp(name, argv); break;
	}
	perror(tx);
	_exit(127);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	char *dir = strdup(argv[1]);
	setenv("PATH", dirname(dir), 1);
	setenv("LD_PRELOAD", "libm.so.6", 1);
	for (int form = 0; form < 5; form++) {
		pid_t pid = fork();
		if (pid == 0)
			start(argv[1], form);
		int status;
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			return 1;
	}
	printf("exec_preload: 5 children\n");
	return 0;
}

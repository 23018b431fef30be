/*
 * tx_exit_race CHILDREN THREADS: threads ending while their process
 * exits, CHILDREN times. Each child starts THREADS threads that mark once
 * and wait at a barrier with the main thread; then the threads return
 * (their streams close as they end) while the main thread calls exit(0)
 * (prof closes every stream still open as the process ends): the two
 * closes of one stream race. Prints "children C crashed K" (K: children
 * that did not exit 0) and exits 1 when K > 0.
 */
#include <prof/prof_tx.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_barrier_t go;

static void *worker(void *arg)
{
	(void)arg;
	prof_mark("worker");
	pthread_barrier_wait(&go);
	return NULL;
}

static void child(int threads)
{
	pthread_t t[64];
	pthread_barrier_init(&go, NULL, (unsigned)threads + 1);
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			_exit(2);
	prof_mark("main");
	pthread_barrier_wait(&go);
	exit(0);
}

int main(int argc, char **argv)
{
	int children = argc > 1 ? atoi(argv[1]) : 300;
	int threads = argc > 2 ? atoi(argv[2]) : 8;
	if (children < 1 || threads < 1 || threads > 64)
		return 2;
	int crashed = 0;
	for (int c = 0; c < children; c++) {
		pid_t pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0)
			child(threads);
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			crashed++;
	}
	printf("children %d crashed %d\n", children, crashed);
	return crashed ? 1 : 0;
}

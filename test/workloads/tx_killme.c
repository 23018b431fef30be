/*
 * tx_killme: dies in a chosen way after a known number of records, for the
 * kill matrix (test/e2e/test_kill_matrix.py).
 *
 * tx_killme HOW N THREADS
 *   The main thread marks "main-<k>" and each of THREADS workers marks
 *   "w<i>-<k>", k = 0..N-1. Once every one of them is done (the workers
 *   then park), a spinner thread marks "spin-<k>" without end; when it has
 *   made at least SPIN_MIN marks the process dies by HOW:
 *     kill         raise(SIGKILL)          segv   a write through NULL
 *     abort        abort()                 exit   exit(7)
 *     thread-exit  _exit(9) from a new thread while the spinner records
 *   N = 0: dies at once, before any mark, with no thread started.
 *   HOW "fill": exit(7) once the N marks of every thread are made, with no
 *   spinner, so marks recorded + marks lost = N * (THREADS + 1) exactly;
 *   first it lives on a second without marking, and says "tx_killme fill:
 *   exits" on stderr as it ends (what prof says while it runs comes before).
 *
 * tx_killme wait N READY NEED
 *   Marks "main-<k>" N times, then creates the file READY and waits. Each
 *   SIGINT or SIGTERM it receives is marked "got-<SIGNAME>-<count>"; at the
 *   NEED-th (NEED > 0) it dies by that signal's default action; the file
 *   READY.<count> says each one was marked. When the
 *   file READY.go appears it marks "go-seen" and exits 0.
 */
#define _GNU_SOURCE
#include <prof/prof_tx.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SPIN_MIN 100

static int count;
static const char *how;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int done_threads, spun;

static void marks(const char *prefix, int n)
{
	char msg[48];
	for (int k = 0; k < n; k++) {
		snprintf(msg, sizeof msg, "%s-%d", prefix, k);
		prof_mark(msg);
	}
}

/* A real fault, also in a PROF_SANITIZE build (UBSan would report it and
 * exit 1 instead). */
#if defined(__has_attribute) && __has_attribute(no_sanitize)
__attribute__((no_sanitize("undefined")))
#endif
static void killme_segv(void)
{
	volatile int *p = NULL;
	*p = 1;
}

static void die(void)
{
	if (strcmp(how, "kill") == 0)
		raise(SIGKILL);
	if (strcmp(how, "segv") == 0)
		killme_segv();
	if (strcmp(how, "abort") == 0)
		abort();
	if (strcmp(how, "thread-exit") == 0)
		_exit(9);
	exit(7);
}

static void *worker(void *arg)
{
	char prefix[16];
	snprintf(prefix, sizeof prefix, "w%d", (int)(long)arg);
	marks(prefix, count);
	pthread_mutex_lock(&lock);
	done_threads++;
	pthread_cond_broadcast(&cond);
	for (;;)   /* parked: its stream stays open */
		pthread_cond_wait(&cond, &lock);
	return NULL;
}

static void *spinner(void *arg)
{
	(void)arg;
	char msg[48];
	for (long k = 0;; k++) {
		snprintf(msg, sizeof msg, "spin-%ld", k);
		prof_mark(msg);
		if (k + 1 == SPIN_MIN) {
			pthread_mutex_lock(&lock);
			spun = 1;
			pthread_cond_broadcast(&cond);
			pthread_mutex_unlock(&lock);
		}
	}
	return NULL;
}

static void *exiter(void *arg)
{
	(void)arg;
	die();
	return NULL;
}

static void wait_for(int *flag, int value)
{
	pthread_mutex_lock(&lock);
	while (*flag < value)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

/* Dies by `how` from the main thread, or from a new one for thread-exit. */
static void die_here(void)
{
	if (strcmp(how, "thread-exit") != 0)
		die();
	pthread_t t;
	if (pthread_create(&t, NULL, exiter, NULL) == 0)
		pthread_join(t, NULL);
	exit(1);   /* not reached */
}

static int kill_matrix(int threads)
{
	if (count == 0)
		die_here();
	pthread_t t;
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t, NULL, worker, (void *)(long)i) != 0)
			return 1;
	marks("main", count);
	wait_for(&done_threads, threads);
	if (strcmp(how, "fill") == 0) {
		/* no spinner: every mark offered is known */
		nanosleep(&(struct timespec){ .tv_sec = 1 }, NULL);
		fputs("tx_killme fill: exits\n", stderr);
		exit(7);
	}
	if (pthread_create(&t, NULL, spinner, NULL) != 0)
		return 1;
	wait_for(&spun, 1);
	die_here();
	return 1;
}

static volatile sig_atomic_t got, last;

static void on_signal(int sig)
{
	got++;
	last = sig;
}

/* READY.<n> tells the test that signal n was taken and marked. */
static void ack(const char *ready, int n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s.%d", ready, n);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

static int wait_signals(const char *ready, int need)
{
	char go[4096], msg[64];
	snprintf(go, sizeof go, "%s.go", ready);
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	marks("main", count);
	int fd = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return 1;
	close(fd);
	for (int seen = 0;;) {
		if (got > seen) {
			seen++;
			snprintf(msg, sizeof msg, "got-SIG%s-%d", sigabbrev_np(last), seen);
			prof_mark(msg);
			ack(ready, seen);
			if (seen == need) {
				signal(last, SIG_DFL);
				raise(last);
			}
			continue;
		}
		if (access(go, F_OK) == 0) {
			prof_mark("go-seen");
			return 0;
		}
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: tx_killme HOW N THREADS | tx_killme wait N READY NEED\n");
		return 2;
	}
	how = argv[1];
	count = atoi(argv[2]);
	if (strcmp(how, "wait") == 0)
		return wait_signals(argv[3], argc > 4 ? atoi(argv[4]) : 1);
	return kill_matrix(atoi(argv[3]));
}

#include "common/bgwrite.h"
#include "common/fsutil.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct bgw {
	FILE *f;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *bufs[2];
	char *pending;        /* the buffer to write, or NULL */
	size_t len;
	int stop, error;
	struct fs_behind behind;
};

static void *bgw_main(void *arg)
{
	struct bgw *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->pending && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->pending)
			break;
		char *p = w->pending;
		size_t n = w->len;
		pthread_mutex_unlock(&w->mu);
		int bad = n && fs_fwrite_direct(w->f, p, n, &w->behind) != 0;
		pthread_mutex_lock(&w->mu);
		w->error |= bad;
		w->pending = NULL;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

struct bgw *bgw_start(FILE *f, size_t cap, char **buf)
{
	struct bgw *w = calloc(1, sizeof *w);
	char *a = malloc(cap), *b = malloc(cap);
	if (!w || !a || !b)
		goto fail;
	*w = (struct bgw){ .f = f, .bufs = { a, b } };
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	int rc = pthread_create(&w->th, NULL, bgw_main, w);
	if (rc == 0) {
		*buf = a;
		return w;
	}
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	errno = rc;
fail:
	free(a);
	free(b);
	free(w);
	return NULL;
}

/* Waits (lock held) until the buffer before has been written. */
static void bgw_idle(struct bgw *w)
{
	while (w->pending)
		pthread_cond_wait(&w->cv, &w->mu);
}

char *bgw_swap(struct bgw *w, char *full, size_t len)
{
	pthread_mutex_lock(&w->mu);
	bgw_idle(w);
	w->pending = full;
	w->len = len;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return full == w->bufs[0] ? w->bufs[1] : w->bufs[0];
}

int bgw_stop(struct bgw *w)
{
	pthread_mutex_lock(&w->mu);
	bgw_idle(w);
	w->stop = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	int rc = w->error ? -1 : 0;
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w->bufs[0]);
	free(w->bufs[1]);
	free(w);
	return rc;
}

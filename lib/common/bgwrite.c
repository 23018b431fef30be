#include "common/bgwrite.h"
#include "common/fsutil.h"
#include "common/nomem.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * A ring: buffers [head, tail) wait for the thread, in order; buffer tail
 * is the caller's. With direct I/O the thread's write lasts until the disk
 * has the bytes, so the caller needs several buffers to go on meanwhile.
 */
struct bgw {
	FILE *f;
	int fd;
	size_t align;          /* fs_direct_on's: 0 when buffered (the caller's view) */
	int direct;            /* O_DIRECT still on (the thread's view) */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *bufs[BGW_BUFS];
	size_t lens[BGW_BUFS];
	unsigned head, tail;
	int stop;
	int error;             /* the first failed write's errno, or 0 */
	struct fs_behind behind;
};

/* Whole blocks go direct; what is left (the output's tail), or the rest
 * after the file system refused (EINVAL) or wrote part of a block, goes
 * buffered from there on. 0 or -errno. */
static int bgw_put(struct bgw *w, const char *p, size_t n)
{
	size_t whole = w->direct ? n - n % w->align : 0;
	while (whole) {
		ssize_t k = write(w->fd, p, whole);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno != EINVAL)
			return -errno;
		if (k <= 0)
			break;
		p += k;
		n -= (size_t)k;
		whole -= (size_t)k;
		if ((size_t)k % w->align)
			break;
	}
	if (n && w->direct) {
		fs_direct_off(w->fd);
		w->direct = 0;
	}
	return n ? fs_fwrite_direct(w->f, p, n, &w->behind) : 0;
}

static void *bgw_main(void *arg)
{
	struct bgw *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (w->head == w->tail && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->head == w->tail)
			break;
		char *p = w->bufs[w->head % BGW_BUFS];
		size_t n = w->lens[w->head % BGW_BUFS];
		pthread_mutex_unlock(&w->mu);
		int rc = n ? bgw_put(w, p, n) : 0;
		pthread_mutex_lock(&w->mu);
		if (rc)
			fs_err_keep(&w->error, -rc);
		w->head++;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	if (w->direct)
		fs_direct_off(w->fd);
	return NULL;
}

static void bgw_free(struct bgw *w)
{
	for (int i = 0; i < BGW_BUFS; i++)
		free(w->bufs[i]);
	free(w);
}

struct bgw *bgw_start(FILE *f, size_t cap, const char *waiting, size_t n, char **buf)
{
	/* out of memory: the caller writes in the foreground, nothing lost */
	struct bgw *w = calloc(1, sizeof *w);
	if (!w) {
		prof_nomem_recovered();
		return NULL;
	}
	for (int i = 0; i < BGW_BUFS; i++) {
		void *b = NULL;
		if (posix_memalign(&b, FS_DIRECT_ALIGN, cap) != 0) {
			prof_nomem_recovered();
			bgw_free(w);
			errno = ENOMEM;
			return NULL;
		}
		w->bufs[i] = b;
	}
	w->f = f;
	w->fd = fileno(f);
	/* what stdio holds goes first; from here on the thread writes f */
	if (w->fd >= 0 && fflush(f) == 0 && cap % FS_DIRECT_ALIGN == 0)
		w->align = fs_direct_on(w->fd);
	w->direct = w->align != 0;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	int rc = pthread_create(&w->th, NULL, bgw_main, w);
	if (rc == 0) {
		memcpy(w->bufs[0], waiting, n);
		*buf = w->bufs[0];
		return w;
	}
	if (w->direct)
		fs_direct_off(w->fd);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	bgw_free(w);
	errno = rc;
	return NULL;
}

/* Queues n bytes of the caller's buffer (lock held). */
static void bgw_queue(struct bgw *w, size_t n)
{
	w->lens[w->tail % BGW_BUFS] = n;
	w->tail++;
	pthread_cond_broadcast(&w->cv);
}

char *bgw_swap(struct bgw *w, char *full, size_t *len)
{
	size_t keep = w->align ? *len % w->align : 0;
	pthread_mutex_lock(&w->mu);
	bgw_queue(w, *len - keep);
	while (w->tail - w->head >= BGW_BUFS)
		pthread_cond_wait(&w->cv, &w->mu);
	char *next = w->bufs[w->tail % BGW_BUFS];
	pthread_mutex_unlock(&w->mu);
	/* the thread reads only full's first *len - keep bytes */
	memcpy(next, full + *len - keep, keep);
	*len = keep;
	return next;
}

int bgw_stop(struct bgw *w, size_t len)
{
	pthread_mutex_lock(&w->mu);
	bgw_queue(w, len);
	w->stop = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	int rc = -w->error;
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	bgw_free(w);
	return rc;
}

#define _GNU_SOURCE
#include "launcher/ticker.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "raw/raw_clock.h"

bool ticker_wait(int stop_fd, uint64_t deadline)
{
	for (;;) {
		uint64_t now = raw_clock_ns(CLOCK_MONOTONIC);
		uint64_t left = deadline > now ? deadline - now : 0;
		struct timespec ts = { (time_t)(left / 1000000000u), (long)(left % 1000000000u) };
		struct pollfd pfd = { .fd = stop_fd, .events = POLLIN };
		int r = ppoll(&pfd, 1, &ts, NULL);
		if (r >= 0 || errno != EINTR)
			return r > 0;
	}
}

uint64_t ticker_next(uint64_t next, uint64_t now, uint64_t interval)
{
	next += interval;
	return next < now ? now + interval : next;
}

void ticker_stop(int stop_fd_write, pthread_t thread)
{
	char c = 1;
	while (write(stop_fd_write, &c, 1) < 0 && errno == EINTR)
		;
	pthread_join(thread, NULL);
}

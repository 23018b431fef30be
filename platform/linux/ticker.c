#define _GNU_SOURCE
#include "linux/ticker.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <time.h>

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

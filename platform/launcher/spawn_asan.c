/*
 * The sanitized launcher's part in the child's environment (PROF_SANITIZE
 * builds only). The agent is then instrumented too, and ASan refuses to
 * start in a process whose first library is not its runtime: an
 * uninstrumented python3 or sh loads the agent only when the runtime is
 * preloaded ahead of it. The launcher, linked against that runtime, finds
 * the very file it uses among its own mapped objects.
 */
#define _GNU_SOURCE
#include "launcher/spawn.h"

#ifdef PROF_SANITIZE
#include <link.h>
#include <string.h>

/* Leaks in python3 and the other programs prof runs are theirs to report,
 * not prof's; and a child killed by SIGSEGV, SIGBUS or SIGFPE must die of
 * that signal (prof mirrors it), not exit 1 from ASan's handler. A user's
 * ASAN_OPTIONS comes after these and wins. */
#define SPAWN_ASAN_CHILD_OPTIONS "detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0"
/* TSan: the same for faults; and the tests' programs record from signal
 * handlers on purpose (prof_tx.h says what is safe there). */
#define SPAWN_TSAN_CHILD_OPTIONS "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:" \
	"report_signal_unsafe=0:report_thread_leaks=0"

static int spawn_asan_match(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *name = info->dlpi_name;
	const char *base = name ? strrchr(name, '/') : NULL;
	base = base ? base + 1 : name;
	if (!base || !*base)
		return 0;
	/* gcc's libasan.so.N, clang's libclang_rt.asan-<arch>.so (-shared-libsan);
	 * gcc's libtsan.so.N in a PROF_SANITIZE_THREAD build */
	if (strncmp(base, "libasan.so", 10) != 0 && strncmp(base, "libclang_rt.asan", 16) != 0 &&
	    strncmp(base, "libtsan.so", 10) != 0)
		return 0;
	*(const char **)data = name;
	return 1;
}

void spawn_asan_opts(struct spawn_env_opts *o)
{
	/* dlpi_name points into the loader's link map: it lives as long as
	 * the runtime stays mapped, which is the whole process. */
	const char *rt = NULL;
	dl_iterate_phdr(spawn_asan_match, &rt);
	if (!rt)
		return;
	o->preload_first = rt;
#ifdef PROF_SANITIZE_THREAD
	o->san_var = "TSAN_OPTIONS";
	o->san_options = SPAWN_TSAN_CHILD_OPTIONS;
#else
	o->san_var = "ASAN_OPTIONS";
	o->san_options = SPAWN_ASAN_CHILD_OPTIONS;
#endif
}
#else
void spawn_asan_opts(struct spawn_env_opts *o)
{
	(void)o;
}
#endif

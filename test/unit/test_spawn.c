/* The launcher's OS side: PATH resolution, the child's environment, the
 * fork/exec handshake, signal names and /proc parsing. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit/unit.h"
#include "launcher/linger.h"
#include "launcher/procfs.h"
#include "launcher/sampler.h"
#include "launcher/selfpath.h"
#include "launcher/sig.h"
#include "launcher/spawn.h"

static char tmp[512];   /* short: every path built from it fits PATH_MAX */

static void make_file(const char *dir, const char *name, const char *text, mode_t mode)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	chmod(p, mode);
}

static void make_dirs(void)
{
	const char *base = getenv("PROF_TEST_TMP");
	char pattern[sizeof tmp];
	if (snprintf(pattern, sizeof pattern, "%.480s/spawn-XXXXXX", base && *base ? base : "/tmp")
	    >= (int)sizeof pattern) {
		fprintf(stderr, "PROF_TEST_TMP too long\n");
		exit(1);
	}
	if (base && *base)
		mkdir(base, 0755);
	if (!mkdtemp(pattern)) {
		perror(pattern);
		exit(1);
	}
	memcpy(tmp, pattern, sizeof tmp);
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/a", tmp);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/b", tmp);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/a/subdir", tmp);
	mkdir(p, 0755);
	make_file(tmp, "a/tool", "#!/bin/sh\nexit 0\n", 0755);
	make_file(tmp, "a/both", "#!/bin/sh\nexit 0\n", 0644);   /* not executable */
	make_file(tmp, "b/both", "#!/bin/sh\nexit 0\n", 0755);
	make_file(tmp, "a/noexec", "#!/bin/sh\nexit 0\n", 0644);
	make_file(tmp, "a/garbage", "this is not a program\n", 0755);
}

static void test_resolve(void)
{
	char path[2 * PATH_MAX], want[PATH_MAX + 16], *out;
	snprintf(path, sizeof path, "/nonexistent:%s/a:%s/b", tmp, tmp);

	CHECK(spawn_resolve("tool", path, &out) == 0);
	snprintf(want, sizeof want, "%s/a/tool", tmp);
	CHECK_STR(out, want);
	free(out);

	CHECK(spawn_resolve("nosuchcmd", path, &out) == -ENOENT);
	CHECK(out == NULL);
	CHECK(spawn_resolve("noexec", path, &out) == -EACCES);
	/* A non-executable match is passed over for a later executable one. */
	CHECK(spawn_resolve("both", path, &out) == 0);
	snprintf(want, sizeof want, "%s/b/both", tmp);
	CHECK_STR(out, want);
	free(out);
	/* A directory on PATH is skipped, as the shell does. */
	CHECK(spawn_resolve("subdir", path, &out) == -ENOENT);
	CHECK(spawn_resolve("", path, &out) == -ENOENT);
}

static void test_resolve_slash(void)
{
	char p[PATH_MAX + 16], *out;
	snprintf(p, sizeof p, "%s/a/tool", tmp);
	CHECK(spawn_resolve(p, "/nonexistent", &out) == 0);
	CHECK_STR(out, p);
	free(out);
	snprintf(p, sizeof p, "%s/a/subdir", tmp);
	CHECK(spawn_resolve(p, NULL, &out) == -EISDIR);
	snprintf(p, sizeof p, "%s/a/noexec", tmp);
	CHECK(spawn_resolve(p, NULL, &out) == -EACCES);
	snprintf(p, sizeof p, "%s/a/missing", tmp);
	CHECK(spawn_resolve(p, NULL, &out) == -ENOENT);
	snprintf(p, sizeof p, "%s/a/tool/x", tmp);
	CHECK(spawn_resolve(p, NULL, &out) == -ENOENT);
	/* With a slash, PATH is not consulted at all. */
	CHECK(spawn_resolve("./tool", "/bin", &out) == -ENOENT);
	/* An empty PATH entry is the current directory. */
	char cwd[PATH_MAX], dir[PATH_MAX + 4];
	snprintf(dir, sizeof dir, "%s/a", tmp);
	if (getcwd(cwd, sizeof cwd) && chdir(dir) == 0) {
		CHECK(spawn_resolve("tool", "/nonexistent::/x", &out) == 0);
		CHECK_STR(out, "tool");
		free(out);
		CHECK(chdir(cwd) == 0);
	}
	CHECK(spawn_resolve("sh", NULL, &out) == 0);   /* the default path */
	free(out);
}

static int env_count(char **env, const char *prefix)
{
	int n = 0;
	for (; env && *env; env++)
		n += strncmp(*env, prefix, strlen(prefix)) == 0;
	return n;
}

static const struct spawn_env_opts env_opts = {
	.agent_path = "/p/lib/prof/libprof_agent.so",
	.python_dir = "/p/share/prof/python",
	.run_dir = "/out/h_1_x_prof",
	.clock = "tsc",
	.tsc_hz = 2899999999.6,
	.activities = "CPU,DEVICE",
	.start_paused = false,
	.device = true,
};

static void test_env_fresh(void)
{
	char *base[] = { "HOME=/h", "PATH=/bin", "PROF_AGENT_RUN_DIR=/stale",
			 "PROF_AGENT_BOGUS=1", "X=PROF_AGENT_RUN_DIR=kept",
			 "PROF_AGENT_CHUNK_KB=64", NULL };
	char **env = spawn_env_build(base, &env_opts);
	CHECK(env != NULL);
	CHECK_STR(spawn_env_get(env, "LD_PRELOAD"), "/p/lib/prof/libprof_agent.so");
	CHECK_STR(spawn_env_get(env, "PYTHONPATH"), "/p/share/prof/python");
	CHECK_STR(spawn_env_get(env, "PROF_AGENT_RUN_DIR"), "/out/h_1_x_prof");
	CHECK(env_count(env, "PROF_AGENT_RUN_DIR=") == 1);
	CHECK(spawn_env_get(env, "PROF_AGENT_BOGUS") == NULL);
	CHECK_STR(spawn_env_get(env, "PROF_AGENT_CHUNK_KB"), "64");   /* a knob, kept */
	CHECK_STR(spawn_env_get(env, "PROF_AGENT_CLOCK"), "tsc");
	CHECK_STR(spawn_env_get(env, "PROF_AGENT_TSC_HZ"), "2900000000");
	CHECK_STR(spawn_env_get(env, "PROF_AGENT_ACTIVITIES"), "CPU,DEVICE");
	CHECK(spawn_env_get(env, "PROF_AGENT_START_PAUSED") == NULL);
	CHECK(spawn_env_get(env, "PROF_AGENT_SCHEDULE") == NULL);
	CHECK(spawn_env_get(env, "PROF_AGENT_DYNAMIC") == NULL);
	CHECK_STR(spawn_env_get(env, "PROF_AGENT_FW_FLAGS"), "0");
	CHECK_STR(spawn_env_get(env, "PROF_AGENT_DEVICE"), "1");
	/* for the agent to put back where a launch script drops it */
	CHECK_STR(spawn_env_get(env, "PROF_AGENT_PYTHON_DIR"), "/p/share/prof/python");
	/* The user's variables pass unchanged and in their order. */
	CHECK_STR(env[0], "HOME=/h");
	CHECK_STR(env[1], "PATH=/bin");
	CHECK_STR(env[2], "X=PROF_AGENT_RUN_DIR=kept");
	CHECK_STR(env[3], "PROF_AGENT_CHUNK_KB=64");
	CHECK(env_count(env, "") == 4 + 2 + 7);
	spawn_env_free(env);
}

static void test_env_prepend(void)
{
	char *base[] = { "LD_PRELOAD=/u/a.so /u/b.so", "PYTHONPATH=/u/py", NULL };
	struct spawn_env_opts o = env_opts;
	o.start_paused = true;
	o.tsc_hz = 0;
	o.clock = "mono";
	o.device = false;
	char **env = spawn_env_build(base, &o);
	CHECK_STR(spawn_env_get(env, "LD_PRELOAD"), "/p/lib/prof/libprof_agent.so:/u/a.so /u/b.so");
	CHECK_STR(spawn_env_get(env, "PYTHONPATH"), "/p/share/prof/python:/u/py");
	CHECK(env_count(env, "LD_PRELOAD=") == 1);
	CHECK(env_count(env, "PYTHONPATH=") == 1);
	CHECK_STR(spawn_env_get(env, "PROF_AGENT_START_PAUSED"), "1");
	CHECK_STR(spawn_env_get(env, "PROF_AGENT_CLOCK"), "mono");
	CHECK(spawn_env_get(env, "PROF_AGENT_TSC_HZ") == NULL);
	CHECK(spawn_env_get(env, "PROF_AGENT_DEVICE") == NULL);
	spawn_env_free(env);

	/* An empty PYTHONPATH must not become "dir:" (that adds the cwd). */
	char *empty[] = { "PYTHONPATH=", "LD_PRELOAD=", NULL };
	env = spawn_env_build(empty, &o);
	CHECK_STR(spawn_env_get(env, "PYTHONPATH"), "/p/share/prof/python");
	CHECK_STR(spawn_env_get(env, "LD_PRELOAD"), "/p/lib/prof/libprof_agent.so");
	spawn_env_free(env);

	/* Without the Python hooks, PYTHONPATH is the user's. */
	o.python_dir = NULL;
	env = spawn_env_build(base, &o);
	CHECK_STR(spawn_env_get(env, "PYTHONPATH"), "/u/py");
	CHECK(spawn_env_get(env, "PROF_AGENT_PYTHON_DIR") == NULL);
	spawn_env_free(env);
}

/* A sanitized launcher: its ASan runtime ahead of the agent, and its child
 * defaults ahead of the user's ASAN_OPTIONS (the later setting wins). */
static void test_env_sanitizer(void)
{
	char *base[] = { "LD_PRELOAD=/u/a.so", "ASAN_OPTIONS=detect_leaks=1", NULL };
	struct spawn_env_opts o = env_opts;
	o.preload_first = "/rt/libasan.so.8";
	o.san_var = "ASAN_OPTIONS";
	o.san_options = "detect_leaks=0:handle_segv=0";
	char **env = spawn_env_build(base, &o);
	CHECK(env != NULL);
	CHECK_STR(spawn_env_get(env, "LD_PRELOAD"),
		  "/rt/libasan.so.8:/p/lib/prof/libprof_agent.so:/u/a.so");
	CHECK_STR(spawn_env_get(env, "ASAN_OPTIONS"), "detect_leaks=0:handle_segv=0:detect_leaks=1");
	CHECK(env_count(env, "ASAN_OPTIONS=") == 1);
	spawn_env_free(env);
	char *none[] = { NULL };
	env = spawn_env_build(none, &o);
	CHECK_STR(spawn_env_get(env, "ASAN_OPTIONS"), "detect_leaks=0:handle_segv=0");
	spawn_env_free(env);
	/* Unsanitized: the user's ASAN_OPTIONS passes untouched. */
	env = spawn_env_build(base, &env_opts);
	CHECK_STR(spawn_env_get(env, "ASAN_OPTIONS"), "detect_leaks=1");
	CHECK_STR(spawn_env_get(env, "LD_PRELOAD"), "/p/lib/prof/libprof_agent.so:/u/a.so");
	spawn_env_free(env);
}

static int spawn_and_wait(char **argv, const sigset_t *mask, int *status, pid_t *pgid)
{
	struct spawn_child c;
	char *env[] = { "PATH=/bin:/usr/bin", NULL };
	int rc = spawn_start(argv[0], argv, env, mask, &c);
	if (rc)
		return rc;
	if (pgid)
		*pgid = getpgid(c.pid);
	waitpid(c.pid, status, 0);
	return 0;
}

static void test_spawn_start(void)
{
	sigset_t empty, usr1, old;
	sigemptyset(&empty);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	int st = -1;
	pid_t pgid = 0;

	char *exit7[] = { "/bin/sh", "-c", "sleep 0.05; exit 7", NULL };
	CHECK(spawn_and_wait(exit7, &empty, &st, &pgid) == 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	CHECK(pgid == getpgrp());   /* one job with the launcher, as under strace */

	/* The child gets the mask it is given, not the launcher's: with
	 * SIGUSR1 blocked here, the shell still dies of its own SIGUSR1. */
	sigprocmask(SIG_BLOCK, &usr1, &old);
	char *selfkill[] = { "/bin/sh", "-c", "kill -USR1 $$; exit 0", NULL };
	CHECK(spawn_and_wait(selfkill, &empty, &st, NULL) == 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1);
	sigprocmask(SIG_SETMASK, &old, NULL);

	/* exec failures come back through the ready pipe with their errno. */
	char garbage[PATH_MAX + 16], missing[PATH_MAX + 16];
	snprintf(garbage, sizeof garbage, "%s/a/garbage", tmp);
	snprintf(missing, sizeof missing, "%s/a/missing", tmp);
	char *bad[] = { garbage, NULL }, *gone[] = { missing, NULL };
	CHECK(spawn_and_wait(bad, &empty, &st, NULL) == -ENOEXEC);
	CHECK(spawn_and_wait(gone, &empty, &st, NULL) == -ENOENT);
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);   /* reaped */
}

static void test_sig_names(void)
{
	char buf[32];
	CHECK_STR(sig_name(SIGSEGV, buf, sizeof buf), "SIGSEGV");
	CHECK_STR(sig_name(SIGKILL, buf, sizeof buf), "SIGKILL");
	CHECK(sig_is_forwarded(SIGTERM) && sig_is_forwarded(SIGUSR2));
	CHECK(!sig_is_forwarded(SIGCHLD) && !sig_is_forwarded(SIGKILL));
}

/* A signal prof sent itself by kill() says who sent it: forwarding tells a
 * signal sent to prof alone from one its group already has. */
static void test_sig_sender(void)
{
	struct sig_state s = { .fd = -1 };
	CHECK(sig_setup(&s) == 0);
	kill(getpid(), SIGUSR2);
	struct sig_got g = { 0 };
	CHECK(sig_next(&s, &g) == SIGUSR2);
	CHECK(g.signo == SIGUSR2 && g.by_process && g.sender == getpid());
	CHECK(sig_next(&s, &g) == 0);
	sig_teardown(&s);
}

/* How a forked child ends when it calls sig_die(sig) with dumps allowed;
 * `blocked`: with sig blocked first, as prof has its forwarded ones. */
static int die_status(int sig, int blocked)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit core;
		getrlimit(RLIMIT_CORE, &core);
		core.rlim_cur = core.rlim_max;
		setrlimit(RLIMIT_CORE, &core);
		if (chdir(tmp) != 0)
			_exit(98);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		if (blocked)
			sigprocmask(SIG_BLOCK, &one, NULL);
		sig_die(sig);
		_exit(99);   /* survived: the caller's exit */
	}
	int st = -1;
	waitpid(pid, &st, 0);
	return st;
}

static void test_sig_die(void)
{
	int st = die_status(SIGSEGV, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV && !WCOREDUMP(st));
	st = die_status(SIGTERM, 1);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	st = die_status(SIGQUIT, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGQUIT && !WCOREDUMP(st));
	st = die_status(SIGWINCH, 0);   /* ignored by default: not a way to die */
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 99);
}

static void test_parse_stat(void)
{
	/* A command name with spaces and ')' must not shift the fields. */
	const char *stat = "4242 (a) b (c)) S 17 4242 4242 0 -1 4194560 1 0 0 0 "
			   "123 45 0 0 20 0 7 0 98765 1000000 321 18446744073709551615";
	struct procfs_proc p;
	CHECK(procfs_parse_stat(stat, &p) == 0);
	CHECK(p.pid == 4242 && p.ppid == 17);
	CHECK(p.utime == 123 && p.stime == 45);
	CHECK(p.threads == 7 && p.start_ticks == 98765);
	CHECK(p.rss_bytes == 321ull * (uint64_t)sysconf(_SC_PAGESIZE));
	CHECK(procfs_parse_stat("12 (x) S 1", &p) == -EINVAL);
}

static void test_tree_sample(void)
{
	pid_t kid = fork();
	if (kid == 0) {
		setpgid(0, 0);   /* so the sleep goes with it at the end */
		execl("/bin/sh", "sh", "-c", "sleep 1 & wait", (char *)NULL);
		_exit(127);
	}
	usleep(100000);
	struct procfs_pids a = { 0 }, b = { 0 };
	CHECK(procfs_descendants(getpid(), &a) == 0);
	CHECK(procfs_descendants_scan(getpid(), &b) == 0);
	CHECK(a.n == 2 && b.n == 2);   /* sh and its sleep */
	CHECK(a.n > 0 && a.v[0] == kid);
	procfs_pids_free(&a);
	procfs_pids_free(&b);

	struct sampler_state st;
	struct raw_host_sample s1, s2;
	sampler_state_init(&st, getpid(), RAW_HOST_ALL);
	CHECK(sampler_take(&st, 1000000000ull, &s1) == 0);
	CHECK(s1.processes == 2 && s1.threads >= 2 && s1.proc_rss_bytes > 0);
	CHECK(s1.proc_cpu_user_pct == 0 && s1.sys_cpu_pct == 0);   /* first: no deltas */
	CHECK(s1.sys_mem_avail_bytes > 0 && s1.sys_mem_used_bytes > 0);
	usleep(20000);
	CHECK(sampler_take(&st, 1020000000ull, &s2) == 0);
	CHECK(s2.processes == 2 && s2.proc_cpu_user_pct >= 0 && s2.sys_cpu_pct >= 0);
	sampler_state_free(&st);
	kill(-kid, SIGKILL);
	waitpid(kid, NULL, 0);
}

/* What CMD left running: the tree less prof's window parse (a process
 * group of its own), the names said, whether the terminal reaches any. */
static void test_linger(void)
{
	pid_t kids[5];
	for (int i = 0; i < 5; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			if (i == 4)
				setpgid(0, 0);   /* stands for the window parse */
			if (i == 0)
				signal(SIGINT, SIG_IGN);   /* as `cmd &` in a script: kept by exec */
			execl("/bin/sleep", "sleep", "5", (char *)NULL);
			_exit(127);
		}
	}
	setpgid(kids[4], kids[4]);   /* whichever runs first */
	usleep(100000);
	struct procfs_pids t = { 0 };
	CHECK(linger_tree(kids[4], &t) == 0);
	CHECK(t.n == 4);
	for (size_t i = 0; i < t.n; i++)
		CHECK(t.v[i] != kids[4]);
	CHECK(linger_any_in_group(&t, getpgrp()));
	CHECK(!linger_any_in_group(&t, kids[4]));
	char names[256], first[16], want[128];
	linger_names(&t, names, sizeof names, first);
	snprintf(want, sizeof want, "pid %d (sleep), pid %d (sleep), pid %d (sleep) and 1 more",
		 (int)t.v[0], (int)t.v[1], (int)t.v[2]);
	CHECK_STR(names, want);
	CHECK_STR(first, "sleep");
	char small[24];   /* cut short, still a string */
	linger_names(&t, small, sizeof small, first);
	CHECK(strlen(small) == sizeof small - 1 && strncmp(small, want, sizeof small - 1) == 0);
	procfs_pids_free(&t);
	CHECK(linger_ignores(kids[0], SIGINT));
	CHECK(!linger_ignores(kids[0], SIGTERM));
	CHECK(!linger_ignores(kids[1], SIGINT));
	for (int i = 0; i < 5; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	char gone[16];
	linger_comm(kids[0], gone);
	CHECK_STR(gone, "?");
}

static void test_parse_net_dev(void)
{
	const char *text =
		"Inter-|   Receive                            |  Transmit\n"
		" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets\n"
		"    lo:  123456     789    0    0    0     0          0         0   123456     789"
		"    0    0    0     0       0          0\n"
		"eth0:9876543210 12 1 2 3 4 5 6 555 66 7 8 9 10 11 12\n"
		"bad line\n";
	struct procfs_netdev d[4];
	CHECK(procfs_parse_net_dev(text, d, 4) == 2);
	CHECK_STR(d[0].name, "lo");
	CHECK(d[0].rx_bytes == 123456 && d[0].rx_packets == 789);
	CHECK(d[0].tx_bytes == 123456 && d[0].tx_packets == 789);
	CHECK_STR(d[1].name, "eth0");   /* an old kernel's count glued to the colon */
	CHECK(d[1].rx_bytes == 9876543210ull && d[1].rx_packets == 12);
	CHECK(d[1].tx_bytes == 555 && d[1].tx_packets == 66);
	CHECK(procfs_parse_net_dev(text, d, 1) == 1);
	CHECK(procfs_net_speed("lo") == 0);   /* loopback has no rated speed */
}

/* Bytes sent over loopback between two samples show as lo's, and only
 * then: an idle interface is written once and then left out. */
static void test_net_sample(void)
{
	struct sampler_state st;
	struct raw_host_net v[SAMPLER_NET_MAX];
	const char *names[SAMPLER_NET_MAX];
	sampler_state_init(&st, getpid(), SAMPLER_NET);
	size_t n = sampler_net_take(&st, 1000000000ull, v, names), lo = n;
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], "lo") == 0)
			lo = i;
	CHECK(lo < n && v[lo].interval_ns == 0 && v[lo].rx_bytes == 0);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static char buf[60000];
	for (int i = 0; i < 20; i++)   /* 1.2 MB to the discard port */
		sendto(fd, buf, sizeof buf, 0, (struct sockaddr *)&a, sizeof a);
	close(fd);
	n = sampler_net_take(&st, 1500000000ull, v, names);
	for (lo = 0; lo < n && strcmp(names[lo], "lo") != 0; lo++)
		;
	CHECK(lo < n && v[lo].interval_ns == 500000000ull);
	CHECK(lo < n && v[lo].rx_bytes >= 20 * sizeof buf && v[lo].tx_bytes >= 20 * sizeof buf);
	sampler_state_free(&st);
}

static void test_sample_parts(void)
{
	struct sampler_state st;
	struct raw_host_sample s;
	sampler_state_init(&st, getpid(), RAW_HOST_MEM);
	CHECK(sampler_take(&st, 1000000000ull, &s) == 0);
	usleep(20000);
	CHECK(sampler_take(&st, 1020000000ull, &s) == 0);
	CHECK(s.parts == RAW_HOST_MEM && s.sys_mem_avail_bytes > 0);
	CHECK(s.sys_cpu_pct == 0 && s.proc_cpu_user_pct == 0 && s.proc_cpu_sys_pct == 0);
	sampler_state_free(&st);
}

static void test_selfpath(void)
{
	char *dir = NULL, *out = NULL;
	CHECK(selfpath_exe_dir(&dir) == 0);
	CHECK(dir && dir[0] == '/');
	CHECK(selfpath_resolve(tmp, "a/../a/tool", &out) == 0);
	CHECK(out && strstr(out, "..") == NULL && strstr(out, "/a/tool"));
	free(out);
	CHECK(selfpath_resolve(tmp, "../lib/prof/nothing.so", &out) == -ENOENT);
	CHECK(out && strstr(out, "nothing.so"));   /* the path looked for */
	free(out);
	free(dir);
}

int main(void)
{
	make_dirs();
	test_resolve();
	test_resolve_slash();
	test_env_fresh();
	test_env_prepend();
	test_env_sanitizer();
	test_spawn_start();
	test_sig_names();
	test_sig_sender();
	test_sig_die();
	test_parse_stat();
	test_tree_sample();
	test_linger();
	test_parse_net_dev();
	test_net_sample();
	test_sample_parts();
	test_selfpath();
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	CHECK(system(cmd) == 0);
	return unit_done();
}

/*
 * prof run [options] -- CMD [ARGS...]
 *
 * The launcher: configuration (defaults < MS_PROFILER_OPTIONS < PROF_OPTIONS
 * < --config < flags, notes on what cannot act said before anything starts),
 * the run directory, the child under the agent (in prof's process group,
 * so the terminal treats both as one job), the host sampler, the wait
 * (run_wait.c: signals passed on, --delay/--duration, the whole tree
 * reaped), then profiler_info.json, the parse, and the child's end
 * mirrored: its exit status, or its death by signal N, which prof dies of
 * too.
 *
 * Exit statuses of prof itself: 2 for usage and configuration errors (found
 * before anything is created), 1 for environment errors (the output path,
 * the agent), 126/127 for a command that cannot be run, as in the shell.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "options.h"
#include "run.h"
#include "common/agent_env.h"
#include "common/fsutil.h"
#include "config/config.h"
#include "launcher/embed_cache.h"
#include "launcher/launcher_device.h"
#include "launcher/sampler.h"
#include "launcher/selfpath.h"
#include "launcher/sig.h"
#include "launcher/spawn.h"
#include "archive/archive.h"
#include "cluster/cluster.h"
#include "pipeline/parse.h"
#include "raw/raw_clock.h"
#include "raw/raw_reader.h"
#include "run/dynamic.h"
#include "run/info.h"
#include "run/notices.h"
#include "run/outside.h"
#include "run/rundir.h"
#include "run/windows.h"

extern char **environ;

/* The TSC estimate handed to the agent needs pairs this far apart; the
 * precise rate is measured over the whole run at the end. */
#define RUN_TSC_GAP_NS 2000000ull

/* One flag of `prof run`: the config key it sets, or none for the few
 * that are not configuration. */
struct run_flag {
	const char *name;
	int has_arg;
	int val;
	const char *key;      /* cfg key; NULL: handled here */
	const char *value;    /* fixed value for flags without an argument */
	const char *arg;      /* argument name in --help */
	const char *help;
};

enum { OPT_CONFIG = 256, OPT_NO_PARSE, OPT_DELAY, OPT_DURATION, OPT_SAMPLING,
       OPT_START_PAUSED, OPT_ACTIVITIES, OPT_SKIP_FIRST, OPT_WAIT, OPT_WARMUP, OPT_ACTIVE,
       OPT_REPEAT, OPT_RECORD_SHAPES, OPT_WITH_STACK, OPT_DYNAMIC, OPT_ARCHIVE,
       OPT_STORAGE_LIMIT, OPT_CYCLE_RESULTS, OPT_WITH_MODULES, OPT_WITH_FLOPS,
       OPT_PROFILE_MEMORY };

static const struct run_flag run_flags[] = {
	{ "output", 1, 'o', "output_path", NULL, "DIR",
	  "where run directories are created (default ./prof_data)" },
	{ "config", 1, OPT_CONFIG, NULL, NULL, "FILE",
	  "read configuration keys from a JSON file (profiler_config.json shape)" },
	{ "no-parse", 0, OPT_NO_PARSE, "analyse", "false", NULL,
	  "record only; run `prof parse DIR` later" },
	{ "delay", 1, OPT_DELAY, "delay", NULL, "SEC",
	  "start recording SEC seconds after the program starts" },
	{ "duration", 1, OPT_DURATION, "duration", NULL, "SEC",
	  "stop recording SEC seconds after it started (0 = until the end)" },
	{ "sampling-interval", 1, OPT_SAMPLING, "sampling_interval", NULL, "MS",
	  "host sampling period in ms (default 20, 0 = off)" },
	{ "start-paused", 0, OPT_START_PAUSED, "start_paused", "true", NULL,
	  "record nothing until the program calls prof_start()" },
	{ "activities", 1, OPT_ACTIVITIES, "activities", NULL, "LIST",
	  "what to record: CPU, DEVICE or CPU,DEVICE (default); \"\": steps only" },
	{ "skip-first", 1, OPT_SKIP_FIRST, "schedule.skip_first", NULL, "N",
	  "schedule: steps to skip before the first cycle" },
	{ "wait", 1, OPT_WAIT, "schedule.wait", NULL, "N",
	  "schedule: steps to wait at the start of each cycle" },
	{ "warmup", 1, OPT_WARMUP, "schedule.warmup", NULL, "N",
	  "schedule: steps to warm the collectors up in each cycle" },
	{ "active", 1, OPT_ACTIVE, "schedule.active", NULL, "N",
	  "schedule: steps recorded in each cycle (a schedule needs it)" },
	{ "repeat", 1, OPT_REPEAT, "schedule.repeat", NULL, "N",
	  "schedule: cycles, 0 for as long as the program steps" },
	{ "with-flops", 0, OPT_WITH_FLOPS, "with_flops", "true", NULL,
	  "count operators' FLOPs (turns --record-shapes on: FLOPs need shapes)" },
	{ "with-modules", 0, OPT_WITH_MODULES, "with_modules", "true", NULL,
	  "record nn.Module forward calls as nested ranges" },
	{ "profile-memory", 0, OPT_PROFILE_MEMORY, "profile_memory", "true", NULL,
	  "record the framework allocator's allocations and frees with their operator" },
	{ "cycle-results", 0, OPT_CYCLE_RESULTS, "cycle_results", "true", NULL,
	  "with a schedule: each cycle parsed into RUN_DIR/cycles/ as it ends" },
	{ "record-shapes", 0, OPT_RECORD_SHAPES, "record_shapes", "true", NULL,
	  "record operator input shapes and types" },
	{ "with-stack", 0, OPT_WITH_STACK, "with_stack", "true", NULL,
	  "record the Python call stack of operators" },
	{ "dynamic", 1, OPT_DYNAMIC, NULL, NULL, "DIR",
	  "record only when DIR/profiler_config.json is edited during the run" },
	{ "storage-limit", 1, OPT_STORAGE_LIMIT, "storage_limit", NULL, "MB",
	  "raw data the whole tree may record (0 = none); past it, recording stops" },
	{ "archive", 1, OPT_ARCHIVE, "archive", NULL, "FORMAT",
	  "after the parse, pack the run directory: tar.gz, tar.zst or zip" },
	{ "help", 0, 'h', NULL, NULL, NULL, "show this help and exit" },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL },
};

#define RUN_MAX_FLAGS 64

struct run_args {
	const char *config_file;
	const char *dynamic_dir;
	struct { const struct run_flag *f; const char *value; } set[RUN_MAX_FLAGS];
	int nset;
	char **cmd;           /* the program and its arguments */
	bool session;         /* prof session: no CMD, the parent is the program */
};

static void run_usage_seed(FILE *out, const struct cfg_key_doc *d)
{
	for (; d->key; d++)
		fprintf(out, "  %s -> %s%s%s\n", d->key, d->type, *d->help ? ": " : "", d->help);
}

static void run_usage(FILE *out)
{
	fprintf(out, "usage: prof run [options] -- CMD [ARGS...]\n\n"
		"Runs CMD under the profiler, waits for its whole process tree, then\n"
		"parses what was recorded.\n\n"
		"CMD stays in prof's process group, so the terminal's Ctrl-C, Ctrl-Z and\n"
		"job control reach both as one job, as without prof. A signal sent to\n"
		"prof alone (INT, TERM, HUP, QUIT, USR1, USR2, by kill) goes on to CMD's\n"
		"processes in that group (to every descendant once none is left there);\n"
		"the terminal's own signals reach CMD directly and are not sent again,\n"
		"unless none of CMD's processes is left in the group (setsid, daemons).\n"
		"prof waits for every descendant, even one in a session of its own: a\n"
		"process CMD leaves running keeps prof waiting, and prof names it 2 s\n"
		"after CMD ended; a Ctrl-C then stops it, a second one kills it.\n"
		"prof exits with CMD's status; when CMD was killed by signal N, prof\n"
		"finishes its work (the run's end, the parse) and then dies of signal N\n"
		"itself, core dumps off: a shell sees $? = 128+N and stops a loop at\n"
		"Ctrl-C, as without prof.\n"
		"\nOptions:\n");
	for (const struct run_flag *f = run_flags; f->name; f++) {
		char left[48];
		snprintf(left, sizeof left, "%s--%s%s%s", f->val == 'o' ? "-o, " :
			 f->val == 'h' ? "-h, " : "    ", f->name, f->arg ? " " : "",
			 f->arg ? f->arg : "");
		fprintf(out, "  %-28s %s\n", left, f->help);
	}
	fprintf(out, "\nConfiguration keys (PROF_OPTIONS='{\"key\": value}' or --config FILE;\n"
		"flags override the file, which overrides PROF_OPTIONS, which overrides\n"
		"MS_PROFILER_OPTIONS):\n");
	for (const struct cfg_key_doc *d = cfg_key_docs(); d->key; d++)
		fprintf(out, "  %-22s %-28s %s\n", d->key, d->type, d->help);
	fprintf(out, "\ntorch_npu's profiler_config.json keys, also read from PROF_OPTIONS and\n"
		"--config (key -> prof's key):\n");
	run_usage_seed(out, cfg_torch_key_docs());
	fprintf(out, "\nMindSpore's keys, read from MS_PROFILER_OPTIONS='{\"start\": true, ...}':\n");
	run_usage_seed(out, cfg_ms_key_docs());
	fprintf(out, "\nA key that cannot act here as asked (\"note\" above; later-release keys)\n"
		"is named on one line before the program starts.\n"
		"\nEnvironment:\n"
		"  PROF_OPS_NVTX=0|1  PyTorch operators: unset, through torch's NVTX ranges\n"
		"                     on an NVIDIA GPU with torch 2.x when no stacks, shapes,\n"
		"                     memory, modules or FLOPs are asked (cheaper), else\n"
		"                     through torch's profiler; 0: torch's profiler always;\n"
		"                     1: as unset, and the end of the run says why not\n"
		"                     where the NVTX way did not apply\n");
}

static void run_fill_longopts(struct option *lo)
{
	size_t i = 0;
	for (const struct run_flag *f = run_flags; f->name; f++, i++)
		lo[i] = (struct option){ f->name, f->has_arg ? required_argument : no_argument,
					 NULL, f->val };
	lo[i] = (struct option){ NULL, 0, NULL, 0 };
}

static const struct run_flag *run_flag_of(int val)
{
	for (const struct run_flag *f = run_flags; f->name; f++)
		if (f->val == val)
			return f;
	return NULL;
}

/* 0 to go on; otherwise the exit status (help printed: 0; misuse: 2). */
static int run_parse_args(int argc, char **argv, struct run_args *a)
{
	struct option lo[sizeof run_flags / sizeof run_flags[0]];
	run_fill_longopts(lo);
	bool session = a->session;
	memset(a, 0, sizeof *a);
	a->session = session;
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "+:o:h", lo, NULL)) != -1) {
		const struct run_flag *f = run_flag_of(c);
		if (!f)
			return cmd_bad_option("run", argv, c == ':');
		if (c == 'h') {
			if (a->session)
				fputs("usage: prof session [prof run's options]\n\n"
				      "prof run for a Python program that profiles itself: the prof\n"
				      "package (share/prof/python/prof) starts it with a pipe on stdin and\n"
				      "stdout when its first profiler object starts in a plain python.\n"
				      "It prints the environment the program sets before it loads the\n"
				      "agent (one JSON object), samples the program's processes, parses\n"
				      "each window's result, and when the pipe closes (the program ended)\n"
				      "finishes the run as prof run does. The options are prof run's:\n\n",
				      stdout);
			run_usage(stdout);
			return -1;
		}
		if (c == OPT_CONFIG)
			a->config_file = optarg;
		else if (c == OPT_DYNAMIC)
			a->dynamic_dir = optarg;
		else if (a->nset < RUN_MAX_FLAGS) {
			a->set[a->nset].f = f;
			a->set[a->nset++].value = f->has_arg ? optarg : f->value;
		}
	}
	if (a->session) {
		if (optind < argc) {
			fprintf(stderr, "prof session: takes no command (the program is the "
				"process that started it)\n");
			return 2;
		}
		return 0;
	}
	if (optind >= argc) {
		fprintf(stderr, "prof run: no command given\n");
		run_usage(stderr);
		return 2;
	}
	a->cmd = argv + optind;
	return 0;
}

/* Each key that cannot act as asked, on a line of its own. */
static void run_say_notes(const struct prof_config *c)
{
	for (size_t i = 0; i < c->nnotes; i++)
		fprintf(stderr, "prof: note: %s: key \"%s\": %s\n", c->notes[i].source,
			c->notes[i].key, c->notes[i].why);
}

/* PROF_OPS_NVTX, read by the Python hooks and by run_child_env: unset
 * (the NVTX way where it applies), 0 or 1; anything else is a typo the
 * hooks would take as unset. */
static int run_check_ops_nvtx(void)
{
	const char *v = getenv("PROF_OPS_NVTX");
	if (!v || !*v || strcmp(v, "0") == 0 || strcmp(v, "1") == 0)
		return 0;
	fprintf(stderr, "prof: PROF_OPS_NVTX=%s: expected 0 (operators through torch's profiler) "
		"or 1 (through torch's NVTX ranges, saying why where they do not apply); "
		"unset: through them where they apply\n", v);
	return -1;
}

static int run_load_config(const struct run_args *a, struct prof_config *c)
{
	struct cfg_error err = { "" };
	char source[64];
	const char *ms = getenv(CFG_MS_SOURCE), *env = getenv("PROF_OPTIONS");
	if (run_check_ops_nvtx())
		return -1;
	cfg_defaults(c);
	if (ms && *ms && cfg_apply_ms_options(c, ms, &err))
		goto fail;
	if (env && *env && cfg_apply_json(c, env, "PROF_OPTIONS", &err))
		goto fail;
	if (a->config_file && cfg_apply_file(c, a->config_file, &err))
		goto fail;
	for (int i = 0; i < a->nset; i++) {
		snprintf(source, sizeof source, "--%s", a->set[i].f->name);
		if (cfg_set(c, a->set[i].f->key, a->set[i].value, source, &err))
			goto fail;
	}
	if (cfg_validate(c, &err))
		goto fail;
	run_say_notes(c);
	return 0;
fail:
	fprintf(stderr, "prof: %s\n", err.msg);
	return -1;
}

/* 0, or the shell's status for a command that cannot be run. */
static int run_resolve(struct run_ctx *r)
{
	const char *cmd = r->cmd[0];
	int rc = spawn_resolve(cmd, getenv("PATH"), &r->exe);
	if (rc == 0)
		return 0;
	if (rc == -ENOENT && !strchr(cmd, '/'))
		fprintf(stderr, "prof: %s: command not found\n", cmd);
	else if (rc == -EACCES)
		fprintf(stderr, "prof: %s: permission denied (not an executable file)\n", cmd);
	else
		fprintf(stderr, "prof: %s: %s\n", cmd, strerror(-rc));
	return rc == -ENOENT ? 127 : 126;
}

static int run_find_files(struct run_ctx *r)
{
	int rc = selfpath_agent(&r->agent);
	if (rc && embed_table() && !r->agent)
		return -1;  /* the cache was refused: said */
	if (rc) {
		fprintf(stderr, "prof: agent library %s: %s (is prof installed completely?)\n",
			r->agent ? r->agent : SELFPATH_AGENT_REL, strerror(-rc));
		return -1;
	}
	/* Without the Python hooks a Python program still runs and records
	 * its native side: not worth refusing. */
	if (selfpath_python_dir(&r->pydir) != 0) {
		free(r->pydir);
		r->pydir = NULL;
	}
	/* A static build's Python package is in the cache, with no bin/prof
	 * beside it: it learns where prof is from PROF_EXE (prof/_runtime.py). */
	char *exe;
	if (embed_table() && selfpath_exe(&exe) == 0) {
		setenv("PROF_EXE", exe, 1);
		free(exe);
	}
	return 0;
}

static void run_activities(uint32_t act, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", act & CFG_ACT_CPU ? "CPU" : "",
		 (act & CFG_ACT_CPU) && (act & CFG_ACT_DEVICE) ? "," : "",
		 act & CFG_ACT_DEVICE ? "DEVICE" : "");
}

static int run_make_dir(struct run_ctx *r)
{
	char err[RUNDIR_ERR_MAX], name[512];
	if (rundir_check_output(r->cfg.output_path, err, sizeof err))
		goto fail;
	/* prof session's run is the program's: named by its pid */
	rundir_name(name, sizeof name, r->host, r->program ? r->program : getpid(),
		    r->first.real_ns);
	/* With --delay the tree starts paused: the timer switches it on. */
	if (rundir_create(&r->rd, r->cfg.output_path, name, r->cfg.delay_s <= 0,
			  err, sizeof err))
		goto fail;
	rundir_set_budget(&r->rd, (uint64_t)r->cfg.storage_limit_mb << 20);
	fprintf(stderr, "prof: recording into %s\n", r->rd.path);
	/* a prof run started by a program that another records (a script
	 * that runs prof itself, under `prof run`) */
	const char *outer = getenv(PROF_AGENT_RUN_DIR);
	if (outer && *outer && !r->session)
		fprintf(stderr, "prof: note: this prof runs under another prof run, recording into "
			"%s: the program is recorded here, and that run holds this prof alone\n",
			outer);
	return 0;
fail:
	fprintf(stderr, "prof: %s\n", err);
	return -1;
}

static int run_start_dynamic(struct run_ctx *r)
{
	char err[512];
	if (dyn_start(&r->dyn, r->dynamic_dir, &r->cfg, err, sizeof err)) {
		fprintf(stderr, "prof: %s\n", err);
		return -1;
	}
	fprintf(stderr, "prof: edit %s to record; activations are logged in %s/%s\n",
		r->dyn.path, r->dynamic_dir, DYN_LOG_FILE);
	return 0;
}

/* The start pair, at least RUN_TSC_GAP_NS after the first one so the two
 * give the agent a usable TSC rate. The run directory was made in between,
 * so the wait is mostly spent already. */
static void run_start_pair(struct run_ctx *r)
{
	uint64_t until = r->first.mono_ns + RUN_TSC_GAP_NS;
	uint64_t now = raw_clock_ns(CLOCK_MONOTONIC);
	if (r->clock == RAW_CLOCK_TSC && now < until) {
		struct timespec ts = { 0, (long)(until - now) };
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	}
	raw_clock_pair(r->clock, &r->info.start);
	if (r->clock == RAW_CLOCK_TSC)
		r->info.tsc_hz = raw_clock_rate(&r->first, &r->info.start);
}

static int run_write_info(struct run_ctx *r)
{
	int rc = info_write(&r->info, r->rd.path);
	if (rc)
		fprintf(stderr, "prof: cannot write %s/%s: %s\n", r->rd.path, RUNDIR_INFO_FILE,
			strerror(-rc));
	return rc;
}

/* Everything before the fork. 0, or prof's exit status. */
static int run_setup(struct run_ctx *r)
{
	if (run_find_files(r))
		return 1;
	if (gethostname(r->host, sizeof r->host - 1) != 0)
		strcpy(r->host, "localhost");
	/* --dynamic's directory first: a bad one leaves no half run dir. */
	if (r->dynamic_dir && run_start_dynamic(r))
		return 1;
	if (run_make_dir(r))
		return 1;
	r->info = (struct run_info){ .argv = r->cmd, .host = r->host,
				     .launcher_pid = (int)getpid(), .cfg = &r->cfg,
				     .clock = r->clock };
	run_start_pair(r);
	if (run_write_info(r))
		return 1;
	char err[512];
	if (win_start(&r->win, r->rd.path, NULL, err, sizeof err))
		fprintf(stderr, "prof: warning: no result per window: %s\n", err);
	int rc = sig_setup(&r->sig);
	if (rc) {
		fprintf(stderr, "prof: cannot set up signal handling: %s\n", strerror(-rc));
		return 1;
	}
	/* Orphans of the tree are reparented to prof, so a program that
	 * daemonises workers is still waited for and sampled. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		fprintf(stderr, "prof: warning: cannot become a child subreaper: %s\n",
			strerror(errno));
	return 0;
}

/* The framework collectors the agent reports to the Python hooks. */
static uint32_t run_fw_flags(const struct prof_config *c)
{
	return (c->activities & CFG_ACT_CPU ? PROF_FW_OPS : 0) |
	       (c->record_shapes || c->with_flops ? PROF_FW_SHAPES : 0) |
	       (c->with_flops ? PROF_FW_FLOPS : 0) | (c->with_stack ? PROF_FW_STACK : 0) |
	       (c->profile_memory ? PROF_FW_MEMORY : 0) | (c->with_modules ? PROF_FW_MODULES : 0) |
	       (c->gc_detect ? PROF_FW_GC : 0);
}

/* What host_sys asks the host sampler for. */
static uint32_t run_host_parts(const struct prof_config *c)
{
	return (c->host_sys & CFG_HOST_CPU ? RAW_HOST_CPU : 0) |
	       (c->host_sys & CFG_HOST_MEM ? RAW_HOST_MEM : 0) |
	       (c->host_sys & CFG_HOST_DISK ? RAW_HOST_DISK : 0) |
	       (c->host_sys & CFG_HOST_NETWORK ? SAMPLER_NET : 0);
}

/* is_rank's list for the agent, one rank each ("0,3"; "" for none) into
 * *out (malloc'd); NULL without is_rank. 0, or -1 for want of memory. */
static int run_ranks(const struct prof_config *c, char **out)
{
	uint64_t *v = NULL;
	size_t n = 0, len = 0;
	char why[160];
	*out = NULL;
	if (!c->is_rank)
		return 0;
	/* checked when it was read: cannot fail but for memory */
	if (c->rank_list && *c->rank_list &&
	    cfg_parse_step_list(c->rank_list, &v, &n, why, sizeof why))
		return -1;
	size_t cap = n * 6 + 1;   /* ranks are below CFG_RANKS: 4 digits and a comma */
	*out = malloc(cap);
	for (size_t i = 0; *out && i < n; i++)
		len += (size_t)snprintf(*out + len, cap - len, "%s%llu", i ? "," : "",
					(unsigned long long)v[i]);
	if (*out)
		(*out)[len] = '\0';
	free(v);
	return *out ? 0 : -1;
}

/* The program's environment: ours with the agent's configuration. NULL
 * when memory ran out (said). */
static char **run_child_env(struct run_ctx *r)
{
	char act[32], sched[96] = "", *ranks;
	uint32_t activities = cfg_activities(&r->cfg);
	run_activities(activities, act, sizeof act);
	const struct cfg_schedule *s = &r->cfg.schedule;
	if (s->set)
		snprintf(sched, sizeof sched, "%u,%u,%u,%u,%u", s->skip_first, s->wait,
			 s->warmup, s->active, s->repeat);
	if (run_ranks(&r->cfg, &ranks)) {
		fprintf(stderr, "prof: out of memory building the environment\n");
		return NULL;
	}
	const char *ops_nvtx = getenv("PROF_OPS_NVTX");
	struct spawn_env_opts eo = {
		.agent_path = r->agent, .python_dir = r->pydir, .run_dir = r->rd.path,
		.clock = r->clock == RAW_CLOCK_TSC ? "tsc" : "mono",
		.tsc_hz = r->info.tsc_hz, .activities = act,
		.start_paused = r->cfg.start_paused,
		.schedule = sched[0] ? sched : NULL, .fw_flags = run_fw_flags(&r->cfg),
		.dynamic = r->dynamic_dir != NULL,
		.cycle_results = r->cfg.cycle_results,
		.device = (activities & CFG_ACT_DEVICE) != 0,
		/* operators through torch's NVTX ranges (the Python hooks' way
		 * unless PROF_OPS_NVTX=0) need NVTX traced in a run without
		 * device activity too */
		.nvtx_only = activities == CFG_ACT_CPU && r->cfg.msprof_tx &&
			     launcher_device_cuda() && !(ops_nvtx && strcmp(ops_nvtx, "0") == 0),
		.tx_off = !r->cfg.msprof_tx, .ranks = ranks,
		.mstx_include = r->cfg.mstx_domain_include,
		.mstx_exclude = r->cfg.mstx_domain_exclude,
	};
	spawn_asan_opts(&eo);  /* PROF_SANITIZE builds: the ASan runtime first */
	/* With device activity off too: the agent then only holds CUPTI
	 * (platform/agent/device/cuda/backend.c, cuda_hold). */
	if (launcher_device_cuda()) {
		const char *other = spawn_env_injection_taken(environ, "CUDA_INJECTION64_PATH");
		if (other && eo.device)
			fprintf(stderr, "prof: warning: CUDA_INJECTION64_PATH is set (%s): another "
				"tool (nsys, ncu, compute-sanitizer) traces CUDA; prof leaves it and "
				"records no CUDA activity\n", other);
		else if (!other)
			eo.cuda_injection = r->agent;
	}
	char **env = spawn_env_build(environ, &eo);
	free(ranks);
	if (!env)
		fprintf(stderr, "prof: out of memory building the environment\n");
	return env;
}

/* 0, or the shell's status when the program could not be executed. */
static int run_spawn(struct run_ctx *r)
{
	char **env = run_child_env(r);
	if (!env)
		return 1;
	int rc = spawn_start(r->exe, r->cmd, env, &r->sig.saved_mask, &r->child);
	spawn_env_free(env);
	if (rc == 0)
		return 0;
	fprintf(stderr, "prof: %s: cannot execute: %s\n", r->cmd[0], strerror(-rc));
	return rc == -ENOENT ? 127 : 126;
}

static void run_note_add(struct run_ctx *r, const char *note, int pid)
{
	if (run_notices_add(&r->notices, note, strlen(note), pid))
		fprintf(stderr, "prof: note: %s\n", note);   /* out of memory: said all the same */
}

/* Programs started apart from prof's environment (agent_exec.c), among
 * the processes' notices. */
static void run_note_apart(struct run_ctx *r)
{
	char path[128], note[512];
	int pid;
	uint32_t n = rundir_execs_apart(&r->rd, path, sizeof path, &pid);
	if (!n)
		return;
	run_apart_note(note, sizeof note, path, n);
	run_note_add(r, note, pid);
}

/* How long prof waited for what CMD left running (run_linger_look), among
 * the notices: the run's duration holds that wait. */
static void run_note_linger(struct run_ctx *r)
{
	const struct linger_state *l = &r->linger;
	if (!l->said)
		return;
	char note[256];
	snprintf(note, sizeof note, "prof waited %.1f s after %s ended for the processes it left "
		 "running (the first: %s); the run's duration includes that wait",
		 (double)(raw_clock_ns(CLOCK_MONOTONIC) - l->cmd_end_ns) / 1e9, r->cmd[0],
		 l->first_name);
	run_note_add(r, note, l->first);
}

/* profiler_info.json, complete: end pair, precise rate, status, totals. */
static void run_finish_info(struct run_ctx *r, int exit_code, int sig)
{
	static char signame[32];
	struct run_info *ri = &r->info;
	raw_clock_pair(r->clock, &ri->end);
	ri->complete = true;
	double hz = r->clock == RAW_CLOCK_TSC ? raw_clock_rate(&ri->start, &ri->end) : 0;
	if (hz > 0)
		ri->tsc_hz = hz;
	struct info_end *e = &ri->end_info;
	e->exit_code = exit_code;
	e->signal = sig;
	e->signal_name = sig ? sig_name(sig, signame, sizeof signame) : NULL;
	e->duration_ns = ri->end.mono_ns - ri->start.mono_ns;
	char *raw = fs_join(r->rd.path, PROF_RAW_DIR);
	e->totals_ok = raw && raw_totals_of_dir(raw, &e->totals) == 0;
	free(raw);
	e->storage_limit_reached = rundir_budget_reached(&r->rd, NULL);
	if (run_notices_collect(r->rd.path, &r->notices) == 0) {
		run_note_apart(r);
		run_note_linger(r);
		e->notices = &r->notices;
	}
	if (r->rd.control)
		e->streams_no_space = __atomic_load_n(&r->rd.control->streams_no_space,
						      __ATOMIC_RELAXED);
	run_write_info(r);
}

/* The last line when --storage-limit stopped recording: said plainly. */
static void run_report_storage(const struct run_ctx *r)
{
	const struct info_end *e = &r->info.end_info;
	if (!e->storage_limit_reached)
		return;
	char lost[64] = "";
	if (e->totals_ok)
		snprintf(lost, sizeof lost, "; %llu records lost",
			 (unsigned long long)e->totals.lost);
	fprintf(stderr, "prof: storage limit of %u MB reached: streams stopped recording "
		"there%s\n", r->cfg.storage_limit_mb, lost);
}

/* Streams that a full filesystem stopped (their header says so): the
 * path to free, said on the last lines with the storage limit's. */
static void run_report_disk(const struct run_ctx *r)
{
	const struct info_end *e = &r->info.end_info;
	uint64_t stopped = e->totals_ok ? e->totals.no_space_streams : 0;
	if (!stopped && !e->streams_no_space)
		return;
	char refused[160] = "";
	if (e->streams_no_space)
		snprintf(refused, sizeof refused, "; %llu more could not be created, and what "
			 "their threads recorded is not counted",
			 (unsigned long long)e->streams_no_space);
	fprintf(stderr, "prof: the filesystem holding %s is full (no space left on device): "
		"%llu of %llu streams stopped recording there, %llu records lost%s; what was "
		"recorded before is kept (free space and run `prof parse %s` if the parse "
		"failed)\n", r->rd.path, (unsigned long long)stopped,
		(unsigned long long)e->totals.streams, (unsigned long long)e->totals.lost,
		refused, r->rd.path);
}

/* What the program's processes asked to say (lib/run/notices.h): last,
 * where it is read. */
static void run_report_notices(const struct run_ctx *r)
{
	for (size_t i = 0; i < r->notices.n; i++) {
		const struct run_notice *n = &r->notices.v[i];
		if (run_notice_moot(n->text, r->steps_seen > 0))
			continue;
		char who[64];
		if (n->processes > 1)
			snprintf(who, sizeof who, "pid %d and %u other processes", n->pid,
				 n->processes - 1);
		else
			snprintf(who, sizeof who, "pid %d", n->pid);
		fprintf(stderr, "prof: note (%s): %s\n", who, n->text);
	}
	if (r->notices.dropped)
		fprintf(stderr, "prof: %zu more notes in %s/%s/agent-*.log\n", r->notices.dropped,
			r->rd.path, PROF_LOG_DIR);
	const char *outside = r->session ? NULL : run_outside_tree(r->cmd[0], r->steps_seen);
	if (outside)
		fprintf(stderr, "prof: note: %s\n", outside);
}

/* With `archive`: packs the run directory next to itself. */
static void run_archive(struct run_ctx *r)
{
	_Static_assert((int)CFG_ARCHIVE_ZIP == (int)ARC_ZIP &&
		       (int)CFG_ARCHIVE_TAR_ZST == (int)ARC_TAR_ZST, "archive enums differ");
	if (r->cfg.archive == CFG_ARCHIVE_NONE)
		return;
	char *out;
	struct arc_error err;
	if (arc_pack(r->rd.path, (enum arc_format)r->cfg.archive, &out, NULL, &err) != ARC_OK) {
		fprintf(stderr, "prof: no archive: %s\n", err.msg);
		return;
	}
	fprintf(stderr, "prof: archived %s into %s\n", r->rd.path, out);
	free(out);
}

static void run_parse(struct run_ctx *r)
{
	if (!r->cfg.analyse) {
		fprintf(stderr, "prof: raw data in %s (analyse it with `prof parse %s`)\n",
			r->rd.path, r->rd.path);
		run_archive(r);
		return;
	}
	struct parse_opts o = { .log = stderr };
	struct parse_report rep = { 0 };
	uint64_t *steps;
	char why[256];
	if (parse_opts_from_cfg(&o, &r->cfg, &steps, why, sizeof why) != 0) {
		fprintf(stderr, "prof: %s\n", why);
		return;   /* cannot happen: checked when the configuration was read */
	}
	enum parse_status sst;
	if (cluster_split_run(r->rd.path, 0, &o, NULL, &sst) && sst == PARSE_FAILED)
		fprintf(stderr, "prof: could not parse %s rank by rank (see above)\n", r->rd.path);
	o.progress = parse_progress_mode(isatty(STDERR_FILENO), 0);
	o.progress_after_s = parse_progress_after(o.progress);
	enum parse_status ps = parse_run_dir(r->rd.path, &o, &rep);
	free(steps);
	if (ps == PARSE_FAILED) {
		fprintf(stderr, "prof: could not parse %s (see above); the raw data is kept\n",
			r->rd.path);
		return;
	}
	r->steps_seen = rep.steps_seen > 0;
	char said[96];
	parse_report_steps(&rep, said, sizeof said);
	fprintf(stderr, "prof: wrote %s/PROFILER_OUTPUT (%llu events, %s%s)\n",
		r->rd.path, (unsigned long long)rep.events_written, said,
		ps == PARSE_DAMAGED ? "; some raw data was damaged, see above" : "");
	char note[512];
	if (parse_report_step_note(&rep, note, sizeof note))
		fprintf(stderr, "prof: note: %s\n", note);
	for (size_t i = 0; i < rep.nfindings; i++)
		fprintf(stderr, "prof: finding: %s (report.html)\n", rep.findings[i]);
	run_archive(r);
}

/* The status prof exits with: the child's; for a child killed by signal
 * N, 128+N, which cmd_run replaces by dying of N. */
static int run_mirror(struct run_ctx *r, int *exit_code, int *sig)
{
	char name[32];
	*exit_code = -1;
	*sig = 0;
	if (!r->have_status)   /* cannot happen: the child is always reaped */
		return 1;
	if (WIFEXITED(r->status)) {
		*exit_code = WEXITSTATUS(r->status);
		return *exit_code;
	}
	*sig = WTERMSIG(r->status);
	fprintf(stderr, "prof: %s killed by signal %d (%s)%s\n", r->cmd[0], *sig,
		sig_name(*sig, name, sizeof name), WCOREDUMP(r->status) ? ", core dumped" : "");
	return 128 + *sig;
}

/* Once the program has ended, a signal to prof (a second Ctrl-C during a
 * long parse) ends prof by that signal; the raw data is complete by then,
 * so it says how to parse it. */
static void run_late_signals(const struct run_ctx *r)
{
	char msg[1024];
	snprintf(msg, sizeof msg, "\nprof: interrupted by a signal; %s: the raw data is kept, "
		 "run `prof parse %s`\n", r->rd.path, r->rd.path);
	sig_late_setup(msg);
}

/* prof session: what the program sets in its own environment before it
 * loads the agent, as one JSON object on stdout ({"run_dir", "agent",
 * "env": {NAME: VALUE}}: the variables that differ from ours, which are
 * its own), then stdout closed. 0 or 1 (said). */
static int run_publish(struct run_ctx *r)
{
	char **env = run_child_env(r);
	if (!env)
		return 1;
	cJSON *o = cJSON_CreateObject(), *vars = cJSON_AddObjectToObject(o, "env");
	cJSON_AddStringToObject(o, "run_dir", r->rd.path);
	cJSON_AddStringToObject(o, "agent", r->agent);
	for (char **e = env; *e; e++) {
		char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		*eq = '\0';
		const char *mine = getenv(*e);
		if (!mine || strcmp(mine, eq + 1) != 0)
			cJSON_AddStringToObject(vars, *e, eq + 1);
		*eq = '=';
	}
	spawn_env_free(env);
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	int rc = text && printf("%s\n", text) > 0 && fflush(stdout) == 0 ? 0 : 1;
	free(text);
	if (rc)
		fprintf(stderr, "prof session: cannot write to the program's pipe\n");
	/* the program reads to EOF; our stdout is its pipe, nothing else */
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDOUT_FILENO);
		close(null);
	}
	return rc;
}

/* The host sampler over `root`'s tree, and the device's when recorded. */
static void run_start_samplers(struct run_ctx *r, pid_t root)
{
	uint32_t ms = r->cfg.sampling_interval_ms, parts = run_host_parts(&r->cfg);
	/* the launcher's streams too feed the word said while the program
	 * runs when the filesystem fills (run_disk_look) */
	uint64_t *full = r->rd.control ? &r->rd.control->streams_disk_full : NULL;
	int rc;
	if (ms && parts &&
	    (rc = sampler_start(&r->sampler, r->rd.launcher_fd, ms, root, parts, full)))
		fprintf(stderr, "prof: warning: host sampling off: cannot create %s/%s/%s/%s: %s\n",
			r->rd.path, PROF_RAW_DIR, PROF_LAUNCHER_STREAMS, SAMPLER_STREAM,
			strerror(-rc));
	if (ms && (cfg_activities(&r->cfg) & CFG_ACT_DEVICE))
		launcher_device_start(&r->dev, r->rd.fd, r->rd.launcher_fd, ms, full);
	/* without it the parse converts them all at the end, from a full disk */
	if ((cfg_activities(&r->cfg) & CFG_ACT_CPU) &&
	    (rc = fw_ingest_start(&r->ingest, r->rd.raw_fd, FW_INGEST_MS, full)))
		fprintf(stderr, "prof: warning: torch's operator flush files are converted only "
			"after the run (%s)\n", strerror(-rc));
}

/* The program is gone: samplers stopped, the run's streams closed. */
static void run_end(struct run_ctx *r)
{
	sampler_stop(r->sampler);
	r->sampler = NULL;
	fw_ingest_stop(r->ingest);
	r->ingest = NULL;
	launcher_device_stop(&r->dev);
	rundir_finish(&r->rd);
	/* The late handlers go in while the signals are still blocked: one
	 * that comes between the unmasking and their setup would otherwise
	 * end prof by its default action, silently. */
	run_late_signals(r);
	sig_teardown(&r->sig);
}

/* From the fork (prof session: from the program's pipe) to the end.
 * Returns prof's exit status. */
static int run_program(struct run_ctx *r)
{
	int rc = r->session ? run_publish(r) : run_spawn(r);
	if (rc) {
		sig_teardown(&r->sig);
		run_finish_info(r, rc, 0);
		return rc;
	}
	r->info.child_pid = r->session ? (int)r->program : (int)r->child.pid;
	run_write_info(r);
	run_set_timers(r);
	run_start_samplers(r, r->session ? r->program : getpid());
	if (r->session)
		run_session_loop(r);
	else
		run_loop(r);
	run_end(r);
	int code = 0, sig = 0;
	int status = r->session ? 0 : run_mirror(r, &code, &sig);
	run_finish_info(r, code, sig);
	win_drain(&r->win, stderr);
	run_parse(r);
	win_report(&r->win, stderr);
	run_report_storage(r);
	run_report_disk(r);
	run_report_notices(r);
	return status;
}

static void run_free(struct run_ctx *r)
{
	dyn_stop(&r->dyn);
	win_stop(&r->win);
	run_notices_free(&r->notices);
	rundir_close(&r->rd);
	free(r->exe);
	free(r->agent);
	free(r->pydir);
	cfg_free(&r->cfg);
}

/* /proc/PID/cmdline as an argv, for profiler_info.json; never NULL. */
static char **run_program_argv(pid_t pid)
{
	static char *unknown[] = { "python", NULL };
	char path[64], *text = NULL;
	size_t n = 0, k = 0;
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	if (fs_read_file(path, &text, &n) != 0 || n == 0) {
		free(text);
		return unknown;
	}
	for (size_t i = 0; i < n; i++)
		k += text[i] == '\0';
	char **v = calloc(k + 2, sizeof *v);
	if (!v) {
		free(text);
		return unknown;
	}
	k = 0;
	for (size_t i = 0; i < n; i += strlen(text + i) + 1)
		v[k++] = text + i;
	return v;   /* text lives as long as prof: freed with the process */
}

static int run_main(int argc, char **argv, bool session)
{
	struct run_args a = { .session = session };
	int rc = run_parse_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	struct run_ctx r;
	memset(&r, 0, sizeof r);
	r.cmd = a.cmd;
	r.session = session;
	r.program = session ? getppid() : 0;
	if (session)
		r.cmd = r.program_argv = run_program_argv(r.program);
	r.dynamic_dir = a.dynamic_dir;
	r.sig.fd = -1;
	r.steps_seen = -1;   /* until the parse says */
	r.rd.fd = r.rd.raw_fd = r.rd.launcher_fd = -1;
	/* The first of the two pairs that estimate the TSC rate: the setup
	 * below runs while the clocks drift apart. */
	r.clock = raw_clock_best();
	raw_clock_pair(r.clock, &r.first);
	if (run_load_config(&a, &r.cfg)) {
		cfg_free(&r.cfg);
		return 2;
	}
	rc = session ? 0 : run_resolve(&r);
	if (!rc)
		rc = run_setup(&r);
	if (!rc)
		rc = run_program(&r);
	run_free(&r);
	/* The program died of a signal: so does prof, for the shell (a loop
	 * stops at a Ctrl-C only when its command died of SIGINT) and CI
	 * runners. Nothing is left to do but stdout's flush. */
	int sig = r.info.end_info.signal;
	if (sig) {
		fflush(stdout);
		sig_die(sig);
	}
	return rc;
}

int cmd_run(int argc, char **argv)
{
	return run_main(argc, argv, false);
}

/* prof session [options]: prof run for a Python program that profiles
 * itself (share/prof/python/prof, plain python): the program starts it
 * with a pipe on stdin and stdout, reads the environment to set before it
 * loads the agent, and closes the pipe when it ends; then the parse. */
int cmd_session(int argc, char **argv)
{
	return run_main(argc, argv, true);
}

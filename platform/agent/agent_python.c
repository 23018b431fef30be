/*
 * The agent's part in loading prof's Python hooks. `prof run` puts its
 * Python directory first on PYTHONPATH (its sitecustomize.py loads the
 * hooks when torch is imported) and names it in PROF_AGENT_PYTHON_DIR. A
 * launch script that sets PYTHONPATH itself (`export PYTHONPATH=$PWD`,
 * common in training repositories) drops it, and the program's steps and
 * operators with it: each process image puts it back first at load,
 * before Python reads the variable. What cannot be put back (python -I, -E
 * or -S ignores PYTHONPATH or sitecustomize) is said at exit by a process
 * that loaded torch's Python bindings while the hooks never called in.
 */
#define _GNU_SOURCE
#include "agent.h"

#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/agent_env.h"
#include "common/env_list.h"

static int py_expected;     /* PROF_AGENT_PYTHON_DIR set: the hooks are wanted */
static int py_hooks_seen;   /* the hooks called in (a fork child keeps it) */

/* Only Python reads PYTHONPATH: other processes that lost the directory
 * (the shell that set it) are mended for their children without a word. */
static int looks_like_python(void)
{
	return strncmp(program_invocation_short_name, "python", 6) == 0;
}

void agent_python_init(void)
{
	const char *dir = getenv(PROF_AGENT_PYTHON_DIR);
	if (!dir || !*dir)
		return;
	py_expected = 1;
	const char *old = getenv("PYTHONPATH");
	if (env_list_find(old, ":", dir, strlen(dir)))
		return;
	char *both = NULL;
	int rc = old && *old ? (asprintf(&both, "%s:%s", dir, old) < 0 ? -ENOMEM : 0) : 0;
	/* at load, before any thread of the program: setenv is safe here */
	if (rc == 0)
		rc = setenv("PYTHONPATH", both ? both : dir, 1) ? -errno : 0;
	if (looks_like_python())
		agent_log("PYTHONPATH (%s) lacked prof's Python directory, which loads prof's "
			  "hooks: %s", old ? old : "unset",
			  rc ? strerror(-rc) : "put back first");
	free(both);
}

/* The hooks (share/prof/python/_prof_hooks/agent.py) say they are there.
 * Not part of prof_tx.h: an interface between prof's parts. */
__attribute__((visibility("default")))
void prof_fw_hooks_loaded(void)
{
	__atomic_store_n(&py_hooks_seen, 1, __ATOMIC_RELAXED);
}

static int is_torch_python(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	const char *slash = strrchr(info->dlpi_name, '/');
	const char *base = slash ? slash + 1 : info->dlpi_name;
	return strncmp(base, "libtorch_python.so", 18) == 0;
}

void agent_python_exit_check(void)
{
	if (!py_expected || __atomic_load_n(&py_hooks_seen, __ATOMIC_RELAXED) ||
	    !dl_iterate_phdr(is_torch_python, NULL))
		return;
	agent_log("notice: this process imported torch without prof's Python hooks, so "
		  "prof has none of its steps, operators or DataLoader ranges: Python ignored "
		  "prof's sitecustomize (python -I, -E or -S?); run it without those flags");
}

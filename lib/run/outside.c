#include "run/outside.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct outside {
	const char *name;
	int only_without_steps;
	const char *say;
};

static const struct outside outside[] = {
	{ "srun", 0, "srun runs its tasks under slurmd, not under prof: put prof inside, "
	  "`srun ... prof run -o DIR -- CMD`, then `prof parse DIR` for the ranks together" },
	{ "sbatch", 0, "sbatch queues the job and returns: put prof in the job script, "
	  "around the command it runs" },
	{ "bsub", 0, "bsub queues the job and returns: put prof in the job, around its command" },
	{ "qsub", 0, "qsub queues the job and returns: put prof in the job script, around the "
	  "command it runs" },
	{ "ssh", 0, "ssh runs the command on another machine: run prof there" },
	{ "pdsh", 0, "pdsh runs the command on other machines: run prof there, `pdsh ... prof "
	  "run -o DIR -- CMD`" },
	{ "docker", 0, "docker runs the command in a container, not under prof: run prof "
	  "inside the container" },
	{ "podman", 0, "podman runs the command in a container, not under prof: run prof "
	  "inside the container" },
	{ "kubectl", 0, "kubectl runs the command in a pod, not under prof: run prof inside "
	  "the pod" },
	{ "prof", 0, "CMD is prof itself: that prof run records the program, into its own "
	  "run directory; this run holds that prof alone" },
	{ "mpirun", 1, "mpirun's ranks on other machines are not under prof: put prof inside, "
	  "`mpirun ... prof run -o DIR -- CMD`, then `prof parse DIR`" },
	{ "mpiexec", 1, "mpiexec's ranks on other machines are not under prof: put prof "
	  "inside, `mpiexec ... prof run -o DIR -- CMD`, then `prof parse DIR`" },
};

const char *run_outside_tree(const char *cmd0, int steps_seen)
{
	const char *slash = cmd0 ? strrchr(cmd0, '/') : NULL;
	const char *name = slash ? slash + 1 : cmd0;
	for (size_t i = 0; name && i < sizeof outside / sizeof outside[0]; i++)
		if (strcmp(name, outside[i].name) == 0)
			return outside[i].only_without_steps && steps_seen != 0 ? NULL :
				outside[i].say;
	return NULL;
}

void run_apart_note(char *buf, size_t len, const char *path, uint32_t n)
{
	char more[64] = "";
	if (n > 1)
		snprintf(more, sizeof more, ", nor %" PRIu32 " other program%s started so", n - 1,
			 n > 2 ? "s" : "");
	snprintf(buf, len, "%s was started with an environment of its own, without prof's "
		 "variables (env -i, a subprocess given env=...): it is not recorded%s; pass the "
		 "environment on (env=dict(os.environ, ...)) to record it", *path ? path : "a program",
		 more);
}

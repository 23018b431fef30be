#define _GNU_SOURCE
#include "run/notices.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/agent_env.h"
#include "common/fsutil.h"

int run_notices_add(struct run_notices *ns, const char *text, size_t len, int pid)
{
	for (size_t i = 0; i < ns->n; i++) {
		if (strlen(ns->v[i].text) == len && memcmp(ns->v[i].text, text, len) == 0) {
			ns->v[i].processes++;
			return 0;
		}
	}
	if (ns->n == RUN_NOTICES_MAX) {
		ns->dropped++;
		return 0;
	}
	char *t = strndup(text, len);
	if (!t)
		return -ENOMEM;
	ns->v[ns->n++] = (struct run_notice){ .text = t, .pid = pid, .processes = 1 };
	return 0;
}

/* Each line "prof agent[PID]: ...notice: TEXT". */
static int notices_of_log(struct run_notices *ns, const char *text, size_t len)
{
	const char *end = text + len;
	for (const char *line = text; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *stop = nl ? nl : end;
		const char *m = memmem(line, (size_t)(stop - line), RUN_NOTICE_MARK,
				       strlen(RUN_NOTICE_MARK));
		int pid = 0;
		if (m && sscanf(line, "prof agent[%d]", &pid) == 1) {
			m += strlen(RUN_NOTICE_MARK);
			int rc = run_notices_add(ns, m, (size_t)(stop - m), pid);
			if (rc)
				return rc;
		}
		line = stop + 1;
	}
	return 0;
}

static int notices_is_agent_log(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return strncmp(e->d_name, "agent-", 6) == 0 && n > 10 &&
	       strcmp(e->d_name + n - 4, ".log") == 0;
}

/* In name order, so that the same run says the same thing each time. */
int run_notices_collect(const char *run_dir, struct run_notices *out)
{
	memset(out, 0, sizeof *out);
	char *dir = fs_join(run_dir, PROF_LOG_DIR);
	if (!dir)
		return -ENOMEM;
	struct dirent **names = NULL;
	int n = scandir(dir, &names, notices_is_agent_log, alphasort), rc = 0;
	for (int i = 0; i < n; i++) {
		char *path = rc ? NULL : fs_join(dir, names[i]->d_name), *text = NULL;
		size_t len = 0;
		if (!rc && !path)
			rc = -ENOMEM;
		else if (path && fs_read_file(path, &text, &len) == 0)
			rc = notices_of_log(out, text, len);
		free(text);
		free(path);
		free(names[i]);
	}
	free(names);
	free(dir);
	return rc;
}

void run_notices_free(struct run_notices *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i].text);
	ns->n = 0;
}

int run_notice_moot(const char *text, int run_has_steps)
{
	return run_has_steps && strncmp(text, RUN_NOTICE_NO_STEPS,
					 strlen(RUN_NOTICE_NO_STEPS)) == 0;
}

#include "run/dynamic.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/agent_env.h"
#include "common/fsutil.h"
#include "config/config_torch.h"

__attribute__((format(printf, 2, 3)))
static void dyn_log(struct dyn_watch *w, const char *fmt, ...)
{
	if (!w->log)
		return;
	char stamp[32];
	time_t now = time(NULL);
	strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", localtime(&now));
	fprintf(w->log, "%s ", stamp);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(w->log, fmt, ap);
	va_end(ap);
	fputc('\n', w->log);
	fflush(w->log);
}

static char *dyn_template(const struct prof_config *cfg)
{
	cJSON *t = cJSON_CreateObject();
	cJSON *act = cJSON_AddArrayToObject(t, "activities");
	if (cfg->activities & CFG_ACT_CPU)
		cJSON_AddItemToArray(act, cJSON_CreateString("CPU"));
	if (cfg->activities & CFG_ACT_DEVICE)
		cJSON_AddItemToArray(act, cJSON_CreateString("DEVICE"));
	cJSON_AddStringToObject(t, "prof_dir", cfg->output_path);
	cJSON_AddBoolToObject(t, "analyse", cfg->analyse);
	cJSON_AddBoolToObject(t, "record_shapes", cfg->record_shapes);
	cJSON_AddBoolToObject(t, "profile_memory", cfg->profile_memory);
	cJSON_AddBoolToObject(t, "with_stack", cfg->with_stack);
	cJSON_AddBoolToObject(t, "with_flops", false);
	cJSON_AddBoolToObject(t, "with_modules", cfg->with_modules);
	cJSON_AddNumberToObject(t, "active", 1);
	cJSON_AddNumberToObject(t, "warmup", 0);
	cJSON_AddNumberToObject(t, "start_step", 0);
	cJSON_AddBoolToObject(t, "is_rank", false);
	cJSON_AddArrayToObject(t, "rank_list");
	char *s = cJSON_Print(t);
	cJSON_Delete(t);
	return s;
}

static int dyn_remember(struct dyn_watch *w)
{
	struct stat st;
	if (stat(w->path, &st) != 0)
		return -errno;
	w->dev = st.st_dev;
	w->ino = st.st_ino;
	w->mtime = st.st_mtim;
	w->size = st.st_size;
	return 0;
}

/* The log is appended to, never through a link, with the run dir's mode. */
static int dyn_open_log(struct dyn_watch *w, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
		      PROF_FILE_MODE);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, PROF_FILE_MODE) != 0 || !(w->log = fdopen(fd, "a"))) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	return 0;
}

int dyn_start(struct dyn_watch *w, const char *dir, const struct prof_config *cfg,
	      char *err, size_t errlen)
{
	memset(w, 0, sizeof *w);
	int rc = fs_mkdir_p(dir);
	w->dir = strdup(dir);
	w->path = fs_join(dir, DYN_CONFIG_FILE);
	char *logpath = fs_join(dir, DYN_LOG_FILE);
	char *text = dyn_template(cfg);
	const char *what = rc ? dir : w->path;   /* the directory itself, a link or a file */
	if (!rc && (!w->dir || !w->path || !logpath || !text))
		rc = -ENOMEM;
	if (!rc)
		rc = fs_write_atomic(w->path, text, strlen(text));
	if (!rc && (rc = dyn_open_log(w, logpath)) != 0)
		what = logpath;
	if (!rc)
		rc = dyn_remember(w);
	if (rc)
		snprintf(err, errlen, "--dynamic %s: cannot write %s: %s", dir,
			 what ? what : DYN_CONFIG_FILE, strerror(-rc));
	else
		dyn_log(w, "waiting for edits of %s", w->path);
	free(logpath);
	free(text);
	if (rc)
		dyn_stop(w);
	return rc ? -1 : 0;
}

static const char *const dyn_bools[] = {
	"analyse", "record_shapes", "profile_memory", "with_stack", "with_flops",
	"with_modules", "is_rank", NULL };
static const char *const dyn_uints[] = { "active", "warmup", NULL };

static int dyn_in(const char *const *list, const char *key)
{
	for (; *list; list++)
		if (strcmp(*list, key) == 0)
			return 1;
	return 0;
}

__attribute__((format(printf, 3, 4)))
static int dyn_fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

static int dyn_whole(const cJSON *v, double min, double max)
{
	return cJSON_IsNumber(v) && v->valuedouble >= min && v->valuedouble <= max &&
	       v->valuedouble == floor(v->valuedouble);
}

static int dyn_check_key(const cJSON *v, char *why, size_t len)
{
	const char *k = v->string;
	if (dyn_in(dyn_bools, k) && !cJSON_IsBool(v))
		return dyn_fail(why, len, "key \"%s\": expected true or false", k);
	if (dyn_in(dyn_uints, k) && !dyn_whole(v, 0, 1e6))
		return dyn_fail(why, len, "key \"%s\": expected an integer from 0 to 1000000", k);
	/* -1: dynamic_profile's "at once", as 0 here: the next step */
	if (strcmp(k, "start_step") == 0 && !dyn_whole(v, -1, 1e6))
		return dyn_fail(why, len, "key \"%s\": expected an integer from -1 to 1000000", k);
	if (strcmp(k, "prof_dir") == 0 && (!cJSON_IsString(v) || !*v->valuestring))
		return dyn_fail(why, len, "key \"prof_dir\": expected a directory (a string)");
	if ((strcmp(k, "activities") == 0 || strcmp(k, "rank_list") == 0) && !cJSON_IsArray(v))
		return dyn_fail(why, len, "key \"%s\": expected an array", k);
	if (!dyn_in(dyn_bools, k) && !dyn_in(dyn_uints, k) && strcmp(k, "prof_dir") &&
	    strcmp(k, "start_step") && strcmp(k, "activities") && strcmp(k, "rank_list") &&
	    strcmp(k, "experimental_config"))
		return dyn_fail(why, len, "unknown key \"%s\"", k);
	return 0;
}

static int dyn_activities(const cJSON *a, uint32_t *flags, char *why, size_t len)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, a) {
		if (!cJSON_IsString(e))
			return dyn_fail(why, len, "key \"activities\": expected strings");
		const char *s = e->valuestring;
		if (strcasecmp(s, "CPU") == 0)
			*flags |= PROF_FW_OPS;
		else if (strcasecmp(s, "DEVICE") && strcasecmp(s, "NPU") && strcasecmp(s, "CUDA") &&
			 strcasecmp(s, "GPU"))
			return dyn_fail(why, len, "key \"activities\": unknown value \"%.40s\"", s);
	}
	return 0;
}

/* rank_list into out->ranks. */
static int dyn_ranks(const cJSON *list, struct dyn_request *out, char *why, size_t len)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, list) {
		double r = cJSON_IsNumber(e) ? e->valuedouble : -1;
		if (r < 0 || r >= RAW_DYN_RANKS || r != (double)(uint32_t)r)
			return dyn_fail(why, len, "key \"rank_list\": each rank is a whole number "
					"from 0 to %u", RAW_DYN_RANKS - 1);
		out->ranks[(uint32_t)r / 64] |= 1ull << ((uint32_t)r % 64);
	}
	return 0;
}

/* experimental_config, checked and mapped as --config does it. */
static int dyn_exp(const cJSON *obj, struct dyn_request *out, char *why, size_t len)
{
	struct cfg_error err = { "" };
	if (!obj)
		return 0;
	out->has_exp = true;
	if (cfg_apply_experimental(&out->exp, obj, "", &err))
		return dyn_fail(why, len, "%s", err.msg);
	const cJSON *v;
	cJSON_ArrayForEach(v, obj) {
		size_t used = strlen(out->exp_keys), room = sizeof out->exp_keys - used;
		if (cfg_experimental_maps(v->string) && strlen(v->string) + 3 < room)
			snprintf(out->exp_keys + used, room, "%s%s", used ? ", " : "", v->string);
	}
	return 0;
}

/* active, warmup, start_step (the keys are checked already). */
static int dyn_window(const cJSON *root, struct dyn_request *out, char *why, size_t len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "active");
	out->active = v ? (uint32_t)v->valuedouble : 1;
	if (out->active == 0)
		return dyn_fail(why, len, "key \"active\": must be at least 1");
	v = cJSON_GetObjectItemCaseSensitive(root, "warmup");
	out->warmup = v ? (uint32_t)v->valuedouble : 0;
	v = cJSON_GetObjectItemCaseSensitive(root, "start_step");
	out->start_step = v && v->valuedouble > 0 ? (uint32_t)v->valuedouble : 0;
	return 0;
}

static int dyn_fill(const cJSON *root, struct dyn_request *out, char *why, size_t len)
{
	const cJSON *v;
	cJSON_ArrayForEach(v, root)
		if (dyn_check_key(v, why, len))
			return -1;
	const cJSON *act = cJSON_GetObjectItemCaseSensitive(root, "activities");
	out->flags = act ? 0 : PROF_FW_OPS;
	if (act && dyn_activities(act, &out->flags, why, len))
		return -1;
	static const struct { const char *key; uint32_t bit; } bits[] = {
		{ "record_shapes", PROF_FW_SHAPES }, { "with_stack", PROF_FW_STACK },
		{ "profile_memory", PROF_FW_MEMORY }, { "with_modules", PROF_FW_MODULES },
		{ "with_flops", PROF_FW_FLOPS | PROF_FW_SHAPES } };   /* FLOPs need shapes */
	for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, bits[i].key)))
			out->flags |= bits[i].bit;
	/* their notes (not recorded yet) are the configuration's own; a
	 * boolean's "true" or "false" cannot fail */
	static const char *const noted[] = { "with_flops", "profile_memory", "with_modules" };
	for (size_t i = 0; i < sizeof noted / sizeof noted[0]; i++)
		if ((v = cJSON_GetObjectItemCaseSensitive(root, noted[i])))
			cfg_set(&out->exp, noted[i], cJSON_IsTrue(v) ? "true" : "false", "",
				&(struct cfg_error){ "" });
	v = cJSON_GetObjectItemCaseSensitive(root, "prof_dir");
	out->prof_dir = v ? strdup(v->valuestring) : NULL;
	v = cJSON_GetObjectItemCaseSensitive(root, "analyse");
	out->analyse = v ? cJSON_IsTrue(v) : -1;
	if (dyn_window(root, out, why, len) ||
	    dyn_exp(cJSON_GetObjectItemCaseSensitive(root, "experimental_config"), out, why, len))
		return -1;
	/* Each agent judges its own rank: one run may hold every rank. */
	out->is_rank = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "is_rank"));
	v = cJSON_GetObjectItemCaseSensitive(root, "rank_list");
	return v ? dyn_ranks(v, out, why, len) : 0;
}

void dyn_request_free(struct dyn_request *q)
{
	free(q->prof_dir);
	q->prof_dir = NULL;
	cfg_free(&q->exp);
}

int dyn_parse(const char *text, struct dyn_request *out, char *why, size_t len)
{
	memset(out, 0, sizeof *out);
	cfg_defaults(&out->exp);
	cJSON *root = cJSON_Parse(text);
	if (!root) {
		const char *at = cJSON_GetErrorPtr();
		return dyn_fail(why, len, "invalid JSON near byte %ld",
				at && at >= text ? (long)(at - text) : 0L);
	}
	int rc = cJSON_IsObject(root) ? dyn_fill(root, out, why, len)
				       : dyn_fail(why, len, "expected a JSON object");
	cJSON_Delete(root);
	return rc;
}

static int dyn_changed(struct dyn_watch *w)
{
	struct stat st;
	if (stat(w->path, &st) != 0)
		return 0;   /* mid-rename, or removed: wait for it */
	return st.st_ino != w->ino || st.st_dev != w->dev || st.st_size != w->size ||
	       st.st_mtim.tv_sec != w->mtime.tv_sec || st.st_mtim.tv_nsec != w->mtime.tv_nsec;
}

static void dyn_publish(struct dyn_watch *w, struct raw_control *ctl, const struct dyn_request *q)
{
	/* A seqlock's writer (raw_control.h): odd, the request, even. */
	/* acq_rel: the request's stores stay after the odd value */
	uint32_t seq = __atomic_fetch_add(&ctl->dyn_seq, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&ctl->dyn_active, q->active, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->dyn_warmup, q->warmup, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->dyn_flags, q->flags, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->dyn_start_step, q->start_step, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->dyn_is_rank, (uint32_t)q->is_rank, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->dyn_analyse, q->analyse == 1, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < RAW_DYN_RANK_WORDS; i++)
		__atomic_store_n(&ctl->dyn_ranks[i], q->ranks[i], __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->dyn_generation, ++w->activations, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->dyn_seq, seq + 2, __ATOMIC_RELEASE);
	char from[32] = "the next step", warm[48] = "";
	if (q->start_step)
		snprintf(from, sizeof from, "step %u", q->start_step);
	if (q->warmup)
		snprintf(warm, sizeof warm, " after %u warm-up step%s", q->warmup,
			 q->warmup == 1 ? "" : "s");
	dyn_log(w, "activation %u: recording %u step%s%s from %s%s%s%s%s", w->activations,
		q->active, q->active == 1 ? "" : "s", warm, from,
		q->is_rank ? " in the ranks of rank_list" : "",
		q->flags & PROF_FW_OPS ? ", operators" : "",
		q->flags & PROF_FW_SHAPES ? ", shapes" : "",
		q->flags & PROF_FW_STACK ? ", stacks" : "");
}

/* What the activation asked for and does not get, a line each. */
static void dyn_log_notes(struct dyn_watch *w, const struct dyn_request *q)
{
	unsigned n = w->activations;
	for (size_t i = 0; i < q->exp.nnotes; i++)
		dyn_log(w, "activation %u: note: key \"%s\": %s", n, q->exp.notes[i].key,
			q->exp.notes[i].why);
	if (q->exp_keys[0])
		dyn_log(w, "activation %u: note: experimental_config %s: act%s for the whole run "
			"as --config or PROF_OPTIONS set %s, not per activation", n, q->exp_keys,
			strchr(q->exp_keys, ',') ? "" : "s", strchr(q->exp_keys, ',') ? "them" : "it");
	if (q->prof_dir && q->analyse != 1)
		dyn_log(w, "activation %u: note: prof_dir: used only with \"analyse\": true (the "
			"activation's result goes there); its steps are in the run's own output", n);
}

/* Where the activation's result goes: prof_dir, relative to the
 * directory prof was started in (the program's, as in torch_npu). */
static void dyn_keep_out(struct dyn_watch *w, const struct dyn_request *q)
{
	free(w->last_prof_dir);
	w->last_prof_dir = NULL;
	w->last_analyse = q->analyse == 1;
	if (!w->last_analyse || !q->prof_dir)
		return;
	char cwd[4096];
	if (q->prof_dir[0] == '/' || !getcwd(cwd, sizeof cwd))
		w->last_prof_dir = strdup(q->prof_dir);
	else
		w->last_prof_dir = fs_join(cwd, q->prof_dir);
	dyn_log(w, "activation %u: its result goes to %s when it ends", w->activations,
		w->last_prof_dir ? w->last_prof_dir : q->prof_dir);
}

int dyn_poll(struct dyn_watch *w, struct raw_control *ctl)
{
	if (!w->path || !dyn_changed(w))
		return 0;
	char *text = NULL;
	int rc = fs_read_file(w->path, &text, NULL);
	dyn_remember(w);
	if (rc) {
		dyn_log(w, "edit ignored: cannot read %s: %s", w->path, strerror(-rc));
		return 0;
	}
	struct dyn_request q;
	char why[256];
	int ok = dyn_parse(text, &q, why, sizeof why) == 0;
	free(text);
	if (!ok) {
		dyn_log(w, "edit ignored: %s: %s", w->path, why);
		dyn_request_free(&q);
		return 0;
	}
	if (ctl) {
		dyn_publish(w, ctl, &q);
		dyn_log_notes(w, &q);
		dyn_keep_out(w, &q);
	}
	dyn_request_free(&q);
	return 1;
}

void dyn_stop(struct dyn_watch *w)
{
	if (w->log)
		fclose(w->log);
	free(w->dir);
	free(w->path);
	free(w->last_prof_dir);
	memset(w, 0, sizeof *w);
}

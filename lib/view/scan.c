/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/view.h"
#include "view-internal.h"

void sbx_view_entry_clear(sbx_view_entry *e)
{
	if (!e)
		return;
	sbx_free_all(e->rel, e->id, e->status, e->task, e->agent, e->model, e->date);
	*e = (sbx_view_entry){0};
}

void sbx_view_entries_free(sbx_view_entry *e, size_t n)
{
	for (size_t i = 0; e && i < n; i++)
		sbx_view_entry_clear(&e[i]);
	free(e);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static char *iso_time(int64_t t)
{
	char buf[32];
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
		return strdup("?");
	return strdup(buf);
}

/* The last path component, or the root's own name when rel is "". */
static const char *base_name(const char *rel)
{
	const char *slash = strrchr(rel, '/');

	return slash ? slash + 1 : rel;
}

/* The root's own directory name: what a user calls a sweep given as the root. */
static char *root_name(int rootfd)
{
	char link[64], target[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", rootfd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return strdup("sweep");
	target[n] = 0;
	return strdup(base_name(target));
}

/* Mtime of rel beneath rootfd (0 when missing): whichever of its files changed last. */
static int64_t mtime_of(int rootfd, const char *dir, const char *file)
{
	_cleanup_free_ char *rel = sbx_view__join(dir, file);
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (!rel)
		return 0;
	fd = sbx_view_open(rootfd, rel, O_PATH, NULL);
	if (fd < 0 || fstat(fd, &st) < 0)
		return 0;
	return st.st_mtim.tv_sec;
}

static int load_run(int rootfd, const char *rel, sbx_view_entry *e)
{
	_cleanup_json_ cJSON *res = NULL, *conn = NULL;
	const cJSON *agent;
	int64_t t;

	res = sbx_view__load_json(rootfd, rel, "result.json", SBX_VIEW_JSON_MAX, NULL);
	if (!res) {
		/* Still running: result.json is written last, atomically. */
		t = mtime_of(rootfd, rel, "transcript.jsonl");
		if (!t)
			t = mtime_of(rootfd, rel, "connection.json");
		if (!t)
			return -ENOENT;
		conn = sbx_view__load_json(rootfd, rel, "connection.json", SBX_VIEW_JSON_MAX, NULL);
		e->status = strdup("running");
		e->id = strdup(sbx_json_get_string(conn, "run_id", base_name(rel)));
		e->score = NAN;
		e->total_ms = NAN;
		e->mtime = t;
		e->date = iso_time(t);
		e->live = true;
		return 0;
	}
	agent = sbx_json_get(res, "agent");
	e->id = strdup(sbx_json_get_string(res, "run_id", base_name(rel)));
	e->status = strdup(sbx_json_get_string(res, "status", "?"));
	e->task = dup_or_null(sbx_json_get_string(res, "task", NULL));
	e->agent = dup_or_null(sbx_json_get_string(agent, "kind", NULL));
	e->model = dup_or_null(sbx_json_get_string(agent, "model", NULL));
	e->score = cJSON_IsNumber(sbx_json_get(res, "score")) ? sbx_json_get_number(res, "score", 0)
							      : NAN;
	e->total_ms = sbx_json_get_number(sbx_json_get(res, "timings_ms"), "total", NAN);
	e->date = strdup(sbx_json_get_string(res, "started_at", "?"));
	e->mtime = mtime_of(rootfd, rel, "result.json");
	return 0;
}

/* "a, b, c" from a JSON array of strings or of objects with a "name". */
static char *join_names(const cJSON *arr)
{
	_cleanup_(sbx_buf_free) sbx_buf b = SBX_BUF_INIT(4096);
	const cJSON *it;

	cJSON_ArrayForEach (it, arr) {
		const char *s = cJSON_IsString(it) ? it->valuestring
						   : sbx_json_get_string(it, "name", NULL);
		if (!s)
			continue;
		if ((b.len && sbx_buf_puts(&b, ", ") < 0) || sbx_buf_puts(&b, s) < 0)
			return strdup("…");
	}
	return sbx_buf_steal(&b, NULL);
}

static int load_sweep(int rootfd, const char *rel, sbx_view_entry *e)
{
	_cleanup_json_ cJSON *plan = NULL;
	sbx_view_tally tally = {0};
	char buf[64];

	plan = sbx_view__load_json(rootfd, rel, "sweep.json", SBX_VIEW_JSON_MAX, NULL);
	if (!plan)
		return -ENOENT;
	sbx_view__tally_results(rootfd, rel, &tally);
	e->id = *rel ? strdup(base_name(rel)) : root_name(rootfd);
	e->task = join_names(sbx_json_get(plan, "tasks"));
	e->agent = join_names(sbx_json_get(plan, "agents"));
	tally.planned = (unsigned)sbx_view__clamp(sbx_json_get_number(plan, "episodes", 0), 0,
						  SBX_SWEEP_MAX_EPISODES);
	snprintf(buf, sizeof(buf), "sweep %u/%u", tally.done, tally.planned);
	e->status = strdup(buf);
	e->score = tally.done ? (double)tally.passed / tally.done : NAN;
	e->total_ms = tally.total_ms;
	e->mtime = mtime_of(rootfd, rel, "results.jsonl");
	if (!e->mtime)
		e->mtime = mtime_of(rootfd, rel, "sweep.json");
	e->date = iso_time((int64_t)sbx_view__clamp(
		sbx_json_get_number(plan, "created_at", (double)e->mtime), 0, 253402300799.0));
	e->live = tally.done < tally.planned && time(NULL) - e->mtime < 3600;
	return 0;
}

int sbx_view_entry_load(int rootfd, size_t root, const char *rel, sbx_view_entry *out,
			sbx_error *err)
{
	sbx_view_entry e = {.root = root};
	_cleanup_close_ int probe = -1;
	int r;

	probe = sbx_view__open_in(rootfd, rel, "sweep.json", O_PATH);
	if (probe >= 0) {
		e.kind = SBX_VIEW_SWEEP;
		r = load_sweep(rootfd, rel, &e);
	} else {
		e.kind = SBX_VIEW_RUN;
		r = load_run(rootfd, rel, &e);
	}
	if (r >= 0 && !(e.rel = strdup(rel)))
		r = -ENOMEM;
	if (r >= 0 && (!e.id || !e.status || !e.date))
		r = -ENOMEM;
	if (r < 0) {
		sbx_view_entry_clear(&e);
		return r == -ENOENT ? r : sbx_error_set(err, r, "'%s': cannot read", rel);
	}
	*out = e;
	return 0;
}

/* A real directory (not a symlink to one); filesystems without d_type are asked. */
static bool is_dir(int dfd, const struct dirent *de)
{
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	return fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

static int by_newest(const void *a, const void *b)
{
	const sbx_view_entry *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? 1 : -1;
	return strcmp(y->id, x->id);
}

static int push(sbx_view_entry **v, size_t *n, size_t *cap, const sbx_view_entry *e)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		sbx_view_entry *nv = realloc(*v, ncap * sizeof(**v));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = *e;
	return 0;
}

int sbx_view_scan(const int *rootfds, size_t n_roots, size_t max, sbx_view_entry **out,
		  size_t *n_out, sbx_error *err)
{
	sbx_view_entry *v = NULL, e;
	size_t n = 0, cap = 0;
	int r = 0;

	for (size_t i = 0; i < n_roots && r >= 0; i++) {
		_cleanup_close_ int dfd = -1;
		DIR *d;
		struct dirent *de;

		/* The root itself may be a run or a sweep. */
		if (sbx_view_entry_load(rootfds[i], i, "", &e, NULL) == 0) {
			r = push(&v, &n, &cap, &e);
			if (r < 0)
				sbx_view_entry_clear(&e);
			continue;
		}
		dfd = sbx_view_open(rootfds[i], "", O_RDONLY | O_DIRECTORY, NULL);
		if (dfd < 0 || !(d = fdopendir(dfd)))
			continue;
		dfd = -1; /* the DIR owns it */
		while (r >= 0 && (de = readdir(d))) {
			if (de->d_name[0] == '.' || !is_dir(dirfd(d), de))
				continue; /* a symlinked entry is not followed */
			if (sbx_view_entry_load(rootfds[i], i, de->d_name, &e, NULL) < 0)
				continue;
			r = push(&v, &n, &cap, &e);
			if (r < 0)
				sbx_view_entry_clear(&e);
		}
		closedir(d);
	}
	if (r < 0) {
		sbx_view_entries_free(v, n);
		return sbx_error_set(err, r, "scanning the directories: %s", strerror(-r));
	}
	if (n)
		qsort(v, n, sizeof(*v), by_newest);
	while (n > max)
		sbx_view_entry_clear(&v[--n]);
	*out = v;
	*n_out = n;
	return 0;
}

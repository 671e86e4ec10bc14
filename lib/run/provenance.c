/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <git2.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/cleanup.h"
#include "sbx/provenance.h"

void sbx_provenance_clear(sbx_provenance *p)
{
	if (!p)
		return;
	free(p->repo);
	free(p->task_path);
	memset(p, 0, sizeof(*p));
}

static int git_fail(sbx_error *err, const char *what, const char *dir)
{
	const git_error *e = git_error_last();

	return sbx_error_set(err, -EIO, "provenance of '%s': %s: %s", dir, what,
			     e && e->message ? e->message : "libgit2 error");
}

/*
 * libgit2 once per process, never shut down: each git_libgit2_init after a
 * shutdown loads the system's CA bundle again (mbedTLS parses every
 * certificate), which was two thirds of a sweep's CPU per episode.
 */
static pthread_once_t git_once = PTHREAD_ONCE_INIT;

static void git_init_once(void)
{
	git_libgit2_init();
}

int sbx_provenance_get(const char *task_dir, sbx_provenance *out, sbx_error *err)
{
	_cleanup_free_ char *abs = NULL, *wd_abs = NULL;
	git_buf root = {0};
	git_repository *repo = NULL;
	git_status_list *list = NULL;
	git_status_options so;
	sbx_provenance p = {0};
	const char *wd;
	git_oid oid;
	char *spec[1];
	size_t wl;
	int r;

	git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
	abs = realpath(task_dir, NULL);
	if (!abs)
		return sbx_error_set(err, -errno, "provenance: '%s': %s", task_dir,
				     strerror(errno));
	pthread_once(&git_once, git_init_once);
	r = git_repository_discover(&root, abs, 0, NULL);
	if (r == GIT_ENOTFOUND) {
		r = 0;
		goto done_unknown;
	}
	if (r < 0) {
		r = git_fail(err, "discovering the repository", task_dir);
		goto done;
	}
	if (git_repository_open(&repo, root.ptr) < 0) {
		r = git_fail(err, "opening the repository", task_dir);
		goto done;
	}
	wd = git_repository_workdir(repo);
	if (!wd)
		goto done_unknown; /* bare */
	wd_abs = realpath(wd, NULL);
	wl = wd_abs ? strlen(wd_abs) : 0;
	if (!wd_abs || strncmp(abs, wd_abs, wl) != 0 || (abs[wl] != '/' && abs[wl] != '\0'))
		goto done_unknown;
	p.repo = strdup(wd_abs);
	p.task_path = strdup(abs[wl] == '/' ? abs + wl + 1 : "");
	if (!p.repo || !p.task_path) {
		r = sbx_error_set(err, -ENOMEM, "out of memory");
		goto done;
	}
	if (git_reference_name_to_id(&oid, repo, "HEAD") == 0)
		git_oid_tostr(p.commit, sizeof(p.commit), &oid);
	so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
		   GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	if (p.task_path[0]) {
		spec[0] = p.task_path;
		so.pathspec.strings = spec;
		so.pathspec.count = 1;
	}
	if (git_status_list_new(&list, repo, &so) < 0) {
		r = git_fail(err, "reading the status", task_dir);
		goto done;
	}
	for (size_t i = 0; i < git_status_list_entrycount(list); i++) {
		const git_status_entry *e = git_status_byindex(list, i);

		if (e && e->status != GIT_STATUS_CURRENT && !(e->status & GIT_STATUS_IGNORED))
			p.changed++;
	}
	p.dirty = p.changed > 0 || !p.commit[0];
	p.known = true;
	*out = p;
	memset(&p, 0, sizeof(p));
	r = 0;
	goto done;
done_unknown:
	sbx_provenance_clear(&p);
	memset(out, 0, sizeof(*out));
done:
	sbx_provenance_clear(&p);
	git_status_list_free(list);
	git_repository_free(repo);
	git_buf_dispose(&root);
	return r;
}

/*
 * A sweep asks for the same few task folders thousands of times; git status
 * over a folder was a sixth of sandboxctl's CPU per episode. The cache reads
 * each folder once for its life, which is what sweep.json records anyway
 * (the tasks' commit when the sweep began).
 */
typedef struct provenance_entry {
	char *task_dir;
	sbx_provenance p;
} provenance_entry;

struct sbx_provenance_cache {
	pthread_mutex_t lock;
	provenance_entry *entries;
	size_t n;
};

sbx_provenance_cache *sbx_provenance_cache_new(void)
{
	sbx_provenance_cache *c = calloc(1, sizeof(*c));

	if (c)
		pthread_mutex_init(&c->lock, NULL);
	return c;
}

void sbx_provenance_cache_free(sbx_provenance_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->entries[i].task_dir);
		sbx_provenance_clear(&c->entries[i].p);
	}
	free(c->entries);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static int provenance_copy(const sbx_provenance *from, sbx_provenance *to)
{
	*to = *from;
	to->repo = from->repo ? strdup(from->repo) : NULL;
	to->task_path = from->task_path ? strdup(from->task_path) : NULL;
	if ((from->repo && !to->repo) || (from->task_path && !to->task_path)) {
		sbx_provenance_clear(to);
		return -ENOMEM;
	}
	return 0;
}

static const sbx_provenance *cache_find(const sbx_provenance_cache *c, const char *task_dir)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->entries[i].task_dir, task_dir) == 0)
			return &c->entries[i].p;
	return NULL;
}

static int cache_add(sbx_provenance_cache *c, const char *task_dir, const sbx_provenance *p)
{
	provenance_entry *grown, e = {0};

	e.task_dir = strdup(task_dir);
	if (!e.task_dir || provenance_copy(p, &e.p) < 0) {
		free(e.task_dir);
		return -ENOMEM;
	}
	grown = reallocarray(c->entries, c->n + 1, sizeof(*grown));
	if (!grown) {
		free(e.task_dir);
		sbx_provenance_clear(&e.p);
		return -ENOMEM;
	}
	c->entries = grown;
	c->entries[c->n++] = e;
	return 0;
}

int sbx_provenance_cache_get(sbx_provenance_cache *c, const char *task_dir, sbx_provenance *out,
			     sbx_error *err)
{
	const sbx_provenance *hit;
	int r;

	if (!c)
		return sbx_provenance_get(task_dir, out, err);
	pthread_mutex_lock(&c->lock);
	hit = cache_find(c, task_dir);
	r = hit ? provenance_copy(hit, out) : 1;
	pthread_mutex_unlock(&c->lock);
	if (r <= 0)
		return r < 0 ? sbx_error_set(err, r, "out of memory") : 0;
	/* Outside the lock: two workers may both read a new folder, harmlessly. */
	r = sbx_provenance_get(task_dir, out, err);
	if (r < 0)
		return r; /* not kept: the next run tries again */
	pthread_mutex_lock(&c->lock);
	if (!cache_find(c, task_dir))
		(void)cache_add(c, task_dir, out); /* a cache that cannot grow only costs time */
	pthread_mutex_unlock(&c->lock);
	return 0;
}

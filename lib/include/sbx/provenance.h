/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Where an episode's task came from (the git commit of its folder, recorded
 * in result.json), read once per folder for a sweep, and the run ids that
 * name runs/<run-id>/.
 */

#include <stdbool.h>

#include "sbx/error.h"

typedef struct sbx_provenance {
	bool known;	  /* the task folder is inside a git repository */
	char commit[48];  /* HEAD, hex */
	bool dirty;	  /* the task's files differ from HEAD (or are untracked) */
	char *repo;	  /* the repository's work directory (malloc'd) */
	char *task_path;  /* the task folder relative to it (malloc'd) */
	unsigned changed; /* number of differing files */
} sbx_provenance;

typedef struct sbx_provenance_cache sbx_provenance_cache;

/*
 * Records where the task came from: the git repository holding task_dir, its
 * HEAD commit and whether any file under task_dir differs from HEAD
 * (modified, staged, untracked). Not in a repository: known = false, 0.
 * Free with sbx_provenance_clear.
 */
int sbx_provenance_get(const char *task_dir, sbx_provenance *out, sbx_error *err);
void sbx_provenance_clear(sbx_provenance *p);

/*
 * sbx_provenance_get once per task folder for the cache's life (a sweep's:
 * its episodes record the provenance the sweep began with). Thread-safe;
 * a NULL cache reads the folder each time.
 */
sbx_provenance_cache *sbx_provenance_cache_new(void);
void sbx_provenance_cache_free(sbx_provenance_cache *c);
int sbx_provenance_cache_get(sbx_provenance_cache *c, const char *task_dir, sbx_provenance *out,
			     sbx_error *err);

/*
 * A new run id: "<UTC yyyymmdd-HHMMSS>-<task>-<6 hex>" (at most 96 bytes;
 * task trimmed). Returns malloc'd text or NULL on OOM.
 */
char *sbx_run_id_new(const char *task);

/* True when s is a safe run id: 1..128 of [A-Za-z0-9._-], not starting with '.' */
bool sbx_run_id_valid(const char *s);

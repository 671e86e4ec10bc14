/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Seeing runs and sweeps in a browser: `sandboxctl view` (a read-only web
 * server on loopback, behind a random token) and `sandboxctl report` (the same
 * pages as one self-contained HTML file). Everything shown comes from the
 * run and sweep directories, which hold text an agent chose: every byte of it
 * is escaped, and every file is opened beneath a directory the user named
 * (the kernel refuses `..` and symlinks pointing out).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/buf.h"
#include "sbx/error.h"

/* ---- escaping ---- */

/*
 * Appends s (len bytes) to out with & < > " ' escaped, so the text is safe in
 * element content and in quoted attribute values. Invalid UTF-8 and control
 * characters other than tab and newline become U+FFFD. Returns 0 or the
 * sbx_buf error.
 */
int sbx_html_escape_n(sbx_buf *out, const char *s, size_t len);
int sbx_html_escape(sbx_buf *out, const char *s);

/* ---- confinement ---- */

/*
 * Opens rel (a relative path, "" for the directory itself) beneath rootfd for
 * reading. Refuses absolute paths, `..`, and any symlink that leads out of
 * rootfd: -EXDEV / -ELOOP / -EINVAL, with err naming rel. Returns the fd.
 */
int sbx_view_open(int rootfd, const char *rel, int flags, sbx_error *err);

/*
 * Reads rel beneath rootfd whole (a regular file, at most max bytes: -EFBIG
 * beyond). *out: free(); NUL-terminated. Out-parameters only on success.
 */
int sbx_view_read(int rootfd, const char *rel, size_t max, char **out, size_t *len_out,
		  sbx_error *err);

/* ---- the directory scanner ---- */

typedef enum sbx_view_kind {
	SBX_VIEW_RUN = 0,
	SBX_VIEW_SWEEP,
} sbx_view_kind;

/* One run or sweep found beneath a root. Strings are owned by the entry. */
typedef struct sbx_view_entry {
	sbx_view_kind kind;
	size_t root;	 /* index into the roots given to the scanner */
	char *rel;	 /* path beneath the root ("" when the root is the run or sweep) */
	char *id;	 /* run id or the sweep's directory name */
	char *status;	 /* result.json's status; "running" without one; sweeps: "3/8 done" */
	char *task;	 /* sweeps: tasks joined by ", " */
	char *agent;	 /* agent kind or command; sweeps: agents joined */
	char *model;	 /* llm runs: the model, else NULL */
	double score;	 /* NaN when not graded; sweeps: the overall pass rate */
	double total_ms; /* NaN when not known */
	int64_t mtime;	 /* seconds; sort key, newest first */
	char *date;	 /* started_at, or the directory's mtime as UTC ISO 8601 */
	bool live;	 /* still being written: no result.json, or a sweep not done */
} sbx_view_entry;

/*
 * Finds every run (a directory with result.json or transcript.jsonl) and
 * sweep (sweep.json) that is a root or a child of one; runs inside a sweep
 * are the sweep's, not listed. At most max entries (newest first). A
 * directory that cannot be read is skipped, not an error. *out: free with
 * sbx_view_entries_free. Returns 0 or a negative errno.
 */
int sbx_view_scan(const int *rootfds, size_t n_roots, size_t max, sbx_view_entry **out,
		  size_t *n_out, sbx_error *err);

/* Reads one entry (rel beneath rootfd): 0, -ENOENT when it is neither a run nor a sweep. */
int sbx_view_entry_load(int rootfd, size_t root, const char *rel, sbx_view_entry *out,
			sbx_error *err);

void sbx_view_entry_clear(sbx_view_entry *e);
void sbx_view_entries_free(sbx_view_entry *e, size_t n);

/* ---- pages ---- */

/* How pages link: served (relative URLs under the token) or a report (nothing outside). */
typedef struct sbx_view_ctx {
	const int *rootfds;
	const char *const *root_names; /* shown to the user */
	size_t n_roots;
	bool report;	      /* one file: images inlined, raw files not linked, no live updates */
	size_t image_max;     /* report: biggest image inlined as a data URI */
	size_t *image_budget; /* report: bytes of images left to inline in the whole file */
	const char *prefix;   /* served: the URL prefix ("/TOKEN/") */
	const char *nonce;    /* the Content-Security-Policy nonce our one script carries */
} sbx_view_ctx;

/*
 * Each appends a whole HTML document to out. filter_* (may be NULL or "")
 * keep the entries whose field contains them. Return 0 or a negative errno
 * (-ENOENT: no such run or sweep).
 */
int sbx_view_page_index(const sbx_view_ctx *ctx, const char *filter_task, const char *filter_agent,
			const char *filter_status, sbx_buf *out, sbx_error *err);
int sbx_view_page_run(const sbx_view_ctx *ctx, size_t root, const char *rel, sbx_buf *out,
		      sbx_error *err);
int sbx_view_page_sweep(const sbx_view_ctx *ctx, size_t root, const char *rel, sbx_buf *out,
			sbx_error *err);
/* Two sweeps side by side: paired by task, epoch and seed (sbx_sweep_compare), and both summaries.
 */
int sbx_view_page_compare(const sbx_view_ctx *ctx, size_t root_a, const char *rel_a, size_t root_b,
			  const char *rel_b, sbx_buf *out, sbx_error *err);

/* ---- the server ---- */

typedef struct sbx_view_server sbx_view_server;

typedef struct sbx_view_opts {
	const char *const *roots; /* directories to serve; at least one */
	size_t n_roots;
	const char *listen; /* a loopback address: "127.0.0.1" (default) or "::1" */
	uint16_t port;	    /* 0: any free one */
} sbx_view_opts;

/*
 * Opens the roots and starts serving on a thread of its own. Refuses an
 * address that is not loopback. *out: sbx_view_server_stop. The URL to open
 * (with the token) is sbx_view_server_url's.
 */
int sbx_view_server_start(const sbx_view_opts *opts, sbx_view_server **out, sbx_error *err);
const char *sbx_view_server_url(const sbx_view_server *s);
void sbx_view_server_stop(sbx_view_server *s);

/* ---- report ---- */

/*
 * Writes the page of dir (a run or a sweep directory; with a sweep, each
 * episode's run page follows it in the same file) to out_path atomically, as
 * one HTML document referencing nothing outside itself.
 */
int sbx_view_report(const char *dir, const char *out_path, sbx_error *err);

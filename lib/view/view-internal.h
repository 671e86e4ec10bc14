/* SPDX-License-Identifier: MIT */
#pragma once

#include <cjson/cJSON.h>

#include "sbx/buf.h"
#include "sbx/sweep.h"
#include "sbx/view.h"

/* Caps on what a page reads: a hostile run directory cannot make a page huge. */
#define SBX_VIEW_JSON_MAX	   (8u << 20)	/* result.json, grade.json, sweep.json */
#define SBX_VIEW_JSONL_MAX	   (64u << 20)	/* transcript.jsonl, results.jsonl read per page */
#define SBX_VIEW_PAGE_MAX	   (256u << 20) /* one HTML document */
#define SBX_VIEW_TEXT_MAX	   16384	/* one tool argument or result shown inline */
#define SBX_VIEW_TRAJECTORY_MAX	   (16u << 20)	/* trajectory.json (about 4 MiB by design) */
#define SBX_VIEW_TURNS_MAX	   2000		/* transcript entries drawn */
#define SBX_VIEW_GRID_ROWS	   200
#define SBX_VIEW_GRID_COLS	   40
#define SBX_VIEW_IMAGE_MAX	   (4u << 20)  /* report: one image as a data URI */
#define SBX_VIEW_REPORT_RUNS_MAX   200	       /* report: run pages appended to a sweep's */
#define SBX_VIEW_REPORT_IMAGES_MAX (48u << 20) /* report: all images together */

/* v within [lo, hi], lo for NaN: numbers from files are cast to integers only through this. */
double sbx_view__clamp(double v, double lo, double hi);

/* "dir/file", or file when dir is "". malloc'd, NULL on OOM. */
char *sbx_view__join(const char *dir, const char *file);

/* Opens dir/file beneath rootfd (see sbx_view_open); -errno. */
int sbx_view__open_in(int rootfd, const char *dir, const char *file, int flags);

/* True when rel beneath rootfd can be opened (confined). */
bool sbx_view__exists(int rootfd, const char *rel);

/* Parses dir/file beneath rootfd; NULL when missing, too big or not JSON. */
cJSON *sbx_view__load_json(int rootfd, const char *dir, const char *file, size_t max,
			   sbx_error *err);

typedef struct sbx_view_tally {
	unsigned planned, done, passed;
	double total_ms; /* sum over done episodes */
} sbx_view_tally;

/* Counts results.jsonl's done episodes (the first result of each). */
void sbx_view__tally_results(int rootfd, const char *dir, sbx_view_tally *t);

/* Loads results.jsonl beneath rootfd into records (sbx_sweep_record_clear each, free). */
int sbx_view__load_records(int rootfd, const char *dir, sbx_sweep_record **out, size_t *n_out,
			   sbx_error *err);

/* The document around a page: <head> with the CSS, the header bar, the script. */
int sbx_view__page_begin(const sbx_view_ctx *ctx, sbx_buf *out, const char *title,
			 const char *live_path);
int sbx_view__page_end(const sbx_view_ctx *ctx, sbx_buf *out);
/*
 * A run's or a sweep's page up to its section's id: the document (not in a
 * report), live updates while e is still being written, and
 * `<section class="run|sweep" id="r|s-<root>-<rel>` left open for the caller.
 */
int sbx_view__entry_begin(const sbx_view_ctx *ctx, sbx_buf *out, const sbx_view_entry *e,
			  size_t root, const char *rel);

/* A link to a page or file: prefix + kind + "/" + root + "/" + rel, escaped for an attribute. */
int sbx_view__href(const sbx_view_ctx *ctx, sbx_buf *out, char kind, size_t root, const char *rel);

/* Appends "1.23 s" style durations, "—" for NaN. */
int sbx_view__put_ms(sbx_buf *out, double ms);

/* before as it is (markup), then text escaped. */
int sbx_view__put_escaped(sbx_buf *out, const char *before, const char *text);

/* <span class="st st-pass">pass</span> */
int sbx_view__put_status(sbx_buf *out, const char *status);

/* The grading grid of a run (from grade.json, the outputs and the task's oracle). */
int sbx_view__grid(const sbx_view_ctx *ctx, int rootfd, const char *rel, const cJSON *grade,
		   sbx_buf *out);

/* The transcript as a conversation. */
int sbx_view__transcript(const sbx_view_ctx *ctx, int rootfd, const char *rel, sbx_buf *out);

/* The model's replies (model.jsonl of an llm run): turn, time, usage, text. 0 without one. */
int sbx_view__model_turns(int rootfd, const char *rel, sbx_buf *out);

/* The run page's trajectory section from trajectory.json; nothing when it is absent. */
int sbx_view__trajectory(int rootfd, const char *rel, sbx_buf *out);

/* GUI runs: frames/ (run --record) as a filmstrip captioned with the tool calls between. */
int sbx_view__filmstrip(const sbx_view_ctx *ctx, size_t root, const char *rel, sbx_buf *out);

/* A PNG beneath the root as <img>: a link when served, a data URI in a report. */
int sbx_view__image(const sbx_view_ctx *ctx, size_t root, const char *rel, const char *alt,
		    sbx_buf *out);

/* The Content-Security-Policy of a page: served or a report (no network at all). */
const char *sbx_view__csp(const sbx_view_ctx *ctx, bool served);

extern const char sbx_view__css[];
extern const char sbx_view__js[];

/* Loads a sweep: its plan and results (sbx_view__records_free). */
int sbx_view__sweep_load(int rootfd, const char *rel, sbx_sweep_plan **plan_out,
			 sbx_sweep_record **recs_out, size_t *n_out, sbx_error *err);
void sbx_view__records_free(sbx_sweep_record *recs, size_t n);

/* The summary table of a sweep (per task × agent, per agent, overall). */
int sbx_view__summary_table(sbx_buf *out, const sbx_sweep_plan *plan, const sbx_sweep_summary *sum,
			    const char *id);

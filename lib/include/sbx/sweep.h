/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Many episodes: a plan (tasks × agents × epochs, written once as
 * sweep.json), an append-only results.jsonl (one fsync'd line per finished
 * attempt), a scheduler that drives each episode through the one lifecycle
 * (sbx_run_*, the same as `sandboxctl run`) on a fixed pool of threads, and
 * the statistics of the summary and of `compare`.
 *
 * The sweep directory:
 *   sweep.json      the plan (written before the first episode, never changed)
 *   results.jsonl   one line per attempt; an episode is done once it has a
 *                   line whose status is a result (not infra_error, not
 *                   interrupted). Resume runs what is not done.
 *   runs/<run-id>/  each attempt's run directory
 *   summary.json    the summary, rewritten atomically at the end
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/error.h"
#include "sbx/run.h"

/* Limits on what a plan may hold (a sweep.json is read from disk). */
#define SBX_SWEEP_MAX_TASKS    4096
#define SBX_SWEEP_MAX_AGENTS   64
#define SBX_SWEEP_MAX_EPOCHS   100000
#define SBX_SWEEP_MAX_EPISODES 1000000
#define SBX_SWEEP_MAX_PASS_AT  16
/* The longest results.jsonl line read back (a line is a few hundred bytes). */
#define SBX_SWEEP_LINE_MAX (64 << 10)

/* ---- the plan ---- */

typedef struct sbx_sweep_plan {
	char *id;     /* 8 hex digits drawn at creation: prefixes run ids, unique per sweep */
	char **tasks; /* task names, in order */
	bool *seedable;
	size_t n_tasks;
	char **agents; /* agent strings as `run --agent` takes them */
	size_t n_agents;
	unsigned epochs;
	bool seeded; /* --seed-from: epoch e of a seedable task gets seed_from + e */
	uint64_t seed_from;
	unsigned retries; /* extra attempts for an infra_error episode */
	char *image;	  /* NULL: each task's default */
	/* Each episode's limits, as `run` takes them; 0/"": the task's, else run's
	 * (timeout_s 0: each task's own deadline). */
	sbx_limits limits;
	bool published;	 /* --network published */
	char *tasks_dir; /* NULL: the default */
	char **tags;	 /* "key=value" */
	size_t n_tags;
	unsigned pass_at[SBX_SWEEP_MAX_PASS_AT]; /* k values of pass@k; always holds 1 */
	size_t n_pass_at;
	/* Provenance, recorded for whoever reads the sweep later. */
	char *image_id;
	char *tasks_commit;
	bool tasks_dirty;
	char *version;
	int64_t created_at; /* unix seconds */
} sbx_sweep_plan;

/* One episode of a plan: which task, which agent, which epoch (and seed). */
typedef struct sbx_sweep_episode {
	size_t index;
	size_t task, agent;
	unsigned epoch; /* 0-based */
	bool seeded;
	uint64_t seed;
} sbx_sweep_episode;

/* Frees everything the plan owns, and the plan. Accepts NULL. */
void sbx_sweep_plan_free(sbx_sweep_plan *p);
SBX_DEFINE_CLEANUP(sbx_sweep_plan, sbx_sweep_plan_free)

/* Number of episodes: tasks × agents × epochs. */
size_t sbx_sweep_plan_size(const sbx_sweep_plan *p);

/*
 * Episode i (0 <= i < size). Epoch-major: every task × agent of epoch 0
 * before any of epoch 1, so a partial sweep is a fair sample of the whole.
 */
void sbx_sweep_plan_episode(const sbx_sweep_plan *p, size_t i, sbx_sweep_episode *out);

/* Draws a fresh plan id (the kernel's CSPRNG) into p->id. */
int sbx_sweep_plan_new_id(sbx_sweep_plan *p, sbx_error *err);

/*
 * The run id of an episode's attempt: "<plan id>.<task>.a<agent>.e<epoch>.t<attempt>"
 * (without the id for plans that have none). out holds at least 160 bytes.
 */
void sbx_sweep_plan_run_id(const sbx_sweep_plan *p, const sbx_sweep_episode *ep, unsigned attempt,
			   char *out, size_t size);

/* Checks the plan's shape (counts, limits, names); -EINVAL with a message. */
int sbx_sweep_plan_check(const sbx_sweep_plan *p, sbx_error *err);

/* sweep.json's text (pretty-printed), malloc'd, NULL on OOM. */
char *sbx_sweep_plan_json(const sbx_sweep_plan *p);

/* Parses sweep.json's text into a new plan (sbx_sweep_plan_free). */
int sbx_sweep_plan_parse(const char *text, size_t len, sbx_sweep_plan **out, sbx_error *err);

/* Writes dir/sweep.json atomically (temporary file, fsync, rename). */
int sbx_sweep_plan_write(const sbx_sweep_plan *p, const char *dir, sbx_error *err);

/* Reads dir/sweep.json. -ENOENT when dir is not a sweep directory. */
int sbx_sweep_plan_read(const char *dir, sbx_sweep_plan **out, sbx_error *err);

/* ---- building a plan (what `sandboxctl sweep` is asked) ---- */

#define SBX_SWEEP_DEFAULT_RETRIES 2

/* A new plan, empty but for its defaults: 1 epoch, SBX_SWEEP_DEFAULT_RETRIES, pass@1. NULL: OOM. */
sbx_sweep_plan *sbx_sweep_plan_new(void);

/* Appends a copy of s to a list of the plan's (tasks, agents, tags): -E2BIG past max, -ENOMEM. */
int sbx_sweep_plan_push(char ***list, size_t *n, const char *s, size_t max);

/* Adds k to the pass@k values (once): -E2BIG past SBX_SWEEP_MAX_PASS_AT values. */
int sbx_sweep_plan_add_pass_at(sbx_sweep_plan *p, unsigned k);

/* Adds every task of the tasks directory (p->tasks_dir, else the default), as listed. */
int sbx_sweep_plan_add_all_tasks(sbx_sweep_plan *p, sbx_error *err);

/* Adds the tasks a file names: one per line, '#' starts a comment; at most 4 MiB. */
int sbx_sweep_plan_add_task_file(sbx_sweep_plan *p, const char *path, sbx_error *err);
/*
 * --task-dir DIR: a task folder (task.toml, task.yaml or task.json in it),
 * or a folder of them (each subdirectory that holds one), by absolute path.
 */
int sbx_sweep_plan_add_task_dir(sbx_sweep_plan *p, const char *dir, sbx_error *err);

/*
 * Completes a new plan: the episodes' deadline, image and limits from
 * limits (as `run` takes them: 0/NULL leave each task's), the tasks directory made absolute (so
 * --resume from anywhere finds the same tasks), a fresh id, this version
 * and the time; then sbx_sweep_plan_check.
 */
int sbx_sweep_plan_finish(sbx_sweep_plan *p, const sbx_run_opts *limits, sbx_error *err);

/* What running a plan needs of the engines (sbx_sweep_plan_load). */
typedef struct sbx_sweep_needs {
	char **images;	     /* the images its episodes run on, NULL-terminated, first seen first */
	uint64_t max_memory; /* the largest memory limit a task sets; 0: none does */
} sbx_sweep_needs;

void sbx_sweep_needs_clear(sbx_sweep_needs *n);

/*
 * Loads every task once and checks every agent before anything runs, so a
 * typo fails now, not after an hour ("task 'x': ..."). A new plan learns
 * which tasks are seedable (a resumed one keeps what it recorded). A task
 * without p->image runs on sbx_run_task_image's pick, as lib/run runs it.
 */
int sbx_sweep_plan_load(sbx_sweep_plan *p, sbx_sweep_needs *out, sbx_error *err);

/* Records where a new plan's episodes come from: image_id (taken; may be NULL), the tasks' commit.
 */
void sbx_sweep_plan_stamp(sbx_sweep_plan *p, char *image_id);

/*
 * Job slots for an engine of ncpu CPUs and mem bytes (0: unknown): one per
 * CPU, fewer when 80% of its memory holds fewer sandboxes of *per bytes (the
 * plan's memory limit, else the largest task's, else 2 GiB). At least 1.
 */
unsigned sbx_sweep_jobs(const sbx_sweep_plan *p, const sbx_sweep_needs *needs, int ncpu,
			int64_t mem, uint64_t *per);

/* ---- results ---- */

typedef struct sbx_sweep_usage {
	double input_tokens, output_tokens, cached_tokens;
} sbx_sweep_usage;

/* One results.jsonl line: one attempt of one episode. */
typedef struct sbx_sweep_record {
	size_t episode;
	unsigned attempt; /* 1-based */
	char *run_id;
	char *task;
	char *agent;
	unsigned epoch;
	bool seeded;
	uint64_t seed;
	sbx_run_status status;
	bool graded;
	double score;	   /* 0..1 when graded */
	double agent_ms;   /* the agent phase */
	double total_ms;   /* the whole episode */
	double tool_calls; /* -1 when the agent does not say */
	bool has_usage;	   /* the model agent reported token usage */
	sbx_sweep_usage usage;
	char *engine; /* the engine's URL, NULL for the default */
	char *error;  /* infrastructure error, NULL when none */
	char *reason; /* why it did not pass (result.json's reason), NULL for a pass */
	/*
	 * The results.jsonl lines this record stands for (0 counts as 1). Loaded
	 * results keep one record per episode and kind (its first result, its
	 * first infra_error, its first interruption) and count the rest here, so
	 * their memory is bounded by the plan, not by the file.
	 */
	unsigned lines;
} sbx_sweep_record;

/* Frees what the record owns (not the record). Accepts NULL. */
void sbx_sweep_record_clear(sbx_sweep_record *r);

/* True when the record is a result: the episode needs no further attempt. */
bool sbx_sweep_record_done(const sbx_sweep_record *r);

/* The record as one JSON line (no newline), malloc'd, NULL on OOM. */
char *sbx_sweep_record_json(const sbx_sweep_record *r);

/* Parses one line into *out (cleared first). -EINVAL on a bad line. */
int sbx_sweep_record_parse(const char *line, size_t len, sbx_sweep_record *out, sbx_error *err);

/*
 * Fills *out from a finished run's result (status, score, timings, usage,
 * tool calls) and the episode it was. engine may be NULL.
 */
int sbx_sweep_record_from_run(const sbx_run_result *res, const sbx_sweep_plan *p,
			      const sbx_sweep_episode *ep, unsigned attempt, const char *engine,
			      sbx_sweep_record *out);

typedef struct sbx_sweep_results sbx_sweep_results;

/*
 * Opens dir/results.jsonl (made if missing) for appending and loads its
 * lines, streamed: a line at a time, each at most SBX_SWEEP_LINE_MAX bytes.
 * A torn last line (a crash mid-write) is cut off; a line that does not
 * parse or is too long is skipped. *dropped (may be NULL) counts both;
 * sbx_sweep_results_dropped says where the first was. Lines of episodes
 * outside plan (may be NULL: no bound but SBX_SWEEP_MAX_EPISODES) are not
 * kept. The file is locked (flock) while open: a second sweep on the
 * directory gets -EBUSY. Free with sbx_sweep_results_free.
 */
int sbx_sweep_results_open(const char *dir, const sbx_sweep_plan *plan, sbx_sweep_results **out,
			   unsigned *dropped, sbx_error *err);

/* Loads dir/results.jsonl read-only (for show/compare), as _open reads it. */
int sbx_sweep_results_load(const char *dir, const sbx_sweep_plan *plan, sbx_sweep_results **out,
			   sbx_error *err);

/*
 * The lines loading skipped (torn, too long, not a result line). *line (may
 * be NULL) gets the first one's 1-based line number, *why (may be NULL) a
 * static phrase saying what was wrong with it.
 */
unsigned sbx_sweep_results_dropped(const sbx_sweep_results *r, size_t *line, const char **why);

/*
 * Appends one line with a single write(2) on an O_APPEND descriptor, then
 * fsync(2): the line is whole on disk or absent. Thread-safe.
 */
int sbx_sweep_results_append(sbx_sweep_results *r, const sbx_sweep_record *rec, sbx_error *err);

/*
 * The records loaded and appended so far, one per episode and kind (its first
 * result, infra_error, interruption; .lines counts the lines each stands for),
 * in the order first seen. Valid until the next append.
 */
const sbx_sweep_record *sbx_sweep_results_records(const sbx_sweep_results *r, size_t *n);

void sbx_sweep_results_free(sbx_sweep_results *r);
SBX_DEFINE_CLEANUP(sbx_sweep_results, sbx_sweep_results_free)

/*
 * For each of the plan's episodes, whether it is done: done[i] true when a
 * record of episode i is a result. attempts[i] (may be NULL) counts its lines.
 * Both arrays hold sbx_sweep_plan_size(p) entries.
 */
void sbx_sweep_done_map(const sbx_sweep_plan *p, const sbx_sweep_record *recs, size_t n, bool *done,
			unsigned *attempts);

/* ---- statistics ---- */

/* The Wilson score interval of k successes in n at z (1.96: 95%). n = 0: [0, 1]. */
void sbx_sweep_wilson(unsigned k, unsigned n, double z, double *lo, double *hi);

/*
 * Unbiased pass@k from n samples with c passes (Chen et al. 2021):
 * 1 - C(n-c, k) / C(n, k). NaN when k > n or k = 0.
 */
double sbx_sweep_pass_at_k(unsigned n, unsigned c, unsigned k);

/* The q-quantile (0..1, linear interpolation) of v[0..n); reorders v. NaN when n = 0. */
double sbx_sweep_quantile(double *v, size_t n, double q);

/*
 * Percentile bootstrap 95% interval of the mean of v[0..n) with iters
 * resamples from a fixed seed (the same data give the same interval). Above
 * 1,000 values, its normal limit (mean ± 1.96·sd/√n within the values' range),
 * which agrees with it within its own resampling noise and costs n, not
 * iters × n.
 */
void sbx_sweep_bootstrap_mean(const double *v, size_t n, unsigned iters, uint64_t seed, double *lo,
			      double *hi);

/*
 * Exact two-sided sign test (McNemar's exact test on the discordant pairs):
 * b pairs where only A passed, c where only B passed. 1 when b + c = 0.
 */
double sbx_sweep_sign_test(unsigned b, unsigned c);

/* ---- the summary ---- */

/* One task × agent (or an agent over every task, or everything). */
typedef struct sbx_sweep_cell {
	const char *task;  /* NULL: every task */
	const char *agent; /* NULL: every agent */
	unsigned planned, done;
	unsigned n_status[SBX_RUN_SANDBOX_FAILED + 1]; /* done episodes by status */
	unsigned not_done;			       /* no result yet (interrupted, infra) */
	unsigned infra_attempts;		       /* infra_error lines, retried or not */
	unsigned grade_errors; /* done episodes the grader failed on (counted in their status) */
	unsigned passed;
	double pass_rate, pass_lo, pass_hi; /* Wilson 95% */
	unsigned scored;
	double mean_score, score_lo, score_hi; /* bootstrap 95% */
	double pass_at[SBX_SWEEP_MAX_PASS_AT]; /* plan.pass_at order; NaN when undefined */
	double agent_ms_p50, agent_ms_p95, overhead_ms_p50, overhead_ms_p95;
	double tool_calls_mean; /* NaN when no episode said */
	unsigned usage_episodes;
	sbx_sweep_usage usage; /* sums */
} sbx_sweep_cell;

/* Episodes that did not pass, grouped by their reason (its text before any cell values). */
typedef struct sbx_sweep_reason {
	char *reason;
	unsigned episodes;
} sbx_sweep_reason;

typedef struct sbx_sweep_summary {
	const sbx_sweep_plan *plan; /* borrowed */
	sbx_sweep_cell *cells;	    /* n_tasks × n_agents, task-major */
	sbx_sweep_cell *agents;	    /* per agent over every task */
	sbx_sweep_cell overall;
	size_t n_cells;
	sbx_sweep_reason *reasons; /* the most episodes first */
	size_t n_reasons;
} sbx_sweep_summary;

/* Summarises records against plan (borrowed; must outlive the summary). */
int sbx_sweep_summarise(const sbx_sweep_plan *p, const sbx_sweep_record *recs, size_t n,
			sbx_sweep_summary **out, sbx_error *err);
void sbx_sweep_summary_free(sbx_sweep_summary *s);
SBX_DEFINE_CLEANUP(sbx_sweep_summary, sbx_sweep_summary_free)

/* summary.json's text (pretty when pretty), malloc'd, NULL on OOM. */
char *sbx_sweep_summary_json(const sbx_sweep_summary *s, bool pretty);

/* The summary for people: the task × agent table and the totals. */
int sbx_sweep_summary_text(const sbx_sweep_summary *s, sbx_buf *out);

/* Writes dir/summary.json atomically. */
int sbx_sweep_summary_write(const sbx_sweep_summary *s, const char *dir, sbx_error *err);

/* ---- compare ---- */

/*
 * Two sweeps side by side: episodes paired by task, epoch and seed (the
 * first agent of each sweep, or agent by agent when both name the same).
 * Per task and overall: pairs, passes on each side, discordant pairs and
 * the exact sign test's p-value, mean score difference (B - A) with a paired
 * bootstrap 95% interval. Returns malloc'd text (JSON or a table) in *out.
 */
int sbx_sweep_compare(const sbx_sweep_plan *pa, const sbx_sweep_record *ra, size_t na,
		      const sbx_sweep_plan *pb, const sbx_sweep_record *rb, size_t nb, bool json,
		      char **out, sbx_error *err);

/* ---- running ---- */

/* Where episodes run: an engine URL (NULL: $DOCKER_HOST or the default) and its job slots. */
typedef struct sbx_sweep_engine {
	const char *url;
	unsigned jobs;
} sbx_sweep_engine;

typedef struct sbx_sweep_progress {
	size_t planned;		      /* episodes in the plan */
	size_t done;		      /* with a result, this run and before */
	size_t passed;		      /* of done */
	size_t finished;	      /* done this run */
	size_t running;		      /* now */
	size_t retried;		      /* infra errors retried, this run */
	size_t infra;		      /* infra_error attempts, this run */
	double per_min;		      /* episodes finished per minute, this run */
	double eta_s;		      /* -1 when unknown */
	const sbx_sweep_record *last; /* the attempt just recorded, or NULL */
} sbx_sweep_progress;

typedef void (*sbx_sweep_progress_fn)(const sbx_sweep_progress *p, void *userdata);

typedef enum sbx_sweep_stop {
	SBX_SWEEP_COMPLETE = 0,	  /* every episode has a result */
	SBX_SWEEP_UNFINISHED,	  /* some ended infra_error after their retries */
	SBX_SWEEP_INTERRUPTED,	  /* *stop was set */
	SBX_SWEEP_INFRA_TOO_MANY, /* infra errors passed the threshold */
	SBX_SWEEP_NO_ENGINE,	  /* every engine failed */
	SBX_SWEEP_CONFIG, /* an episode could not be prepared (task, agent, disk): stopped */
} sbx_sweep_stop;

#define SBX_SWEEP_OPTS_VERSION 1

/*
 * One attempt handed to sbx_sweep_opts.attempt, the seam the scale simulation
 * (tests/sim, bench/sweep_scale) uses in place of the lifecycle.
 */
typedef struct sbx_sweep_attempt {
	const sbx_sweep_plan *plan;
	const sbx_sweep_episode *episode;
	unsigned attempt;   /* 1-based */
	const char *run_id; /* the attempt's run id */
	const char *engine; /* the worker's engine URL, NULL for the default */
	const volatile sig_atomic_t *interrupted; /* set when the sweep interrupts its runs */
	struct sbx_warm **reuse_slot; /* --reuse: the worker's sandbox (sbx_run_opts.reuse_slot) */
} sbx_sweep_attempt;

/*
 * Runs a and fills *out as sbx_sweep_record_from_run would. A negative return
 * means nothing ran and nothing like it could: the sweep stops as a
 * configuration error with err's message.
 */
typedef int (*sbx_sweep_attempt_fn)(const sbx_sweep_attempt *a, sbx_sweep_record *out,
				    void *userdata, sbx_error *err);

typedef struct sbx_sweep_opts {
	unsigned version;
	const char *dir; /* the sweep directory (sweep.json written) */
	const sbx_sweep_engine *engines;
	size_t n_engines;   /* 0: one default engine with 1 job */
	const char *grader; /* sbx_run_opts.grader: grade each episode in a child */
	/*
	 * Set by a signal handler to the number of SIGINTs: 1 stops scheduling
	 * and lets running episodes finish for up to stop_grace_s, then
	 * interrupts them; 2 interrupts at once.
	 */
	const volatile sig_atomic_t *stop;
	uint32_t stop_grace_s;
	/* Called after each recorded attempt (under the scheduler's lock; keep it short). */
	sbx_sweep_progress_fn progress;
	void *progress_userdata;
	bool test_label; /* label sandboxes as test objects */
	/* --reuse N: each worker's sandbox serves up to N episodes, reset in place between two
	 * (sbx_run_opts.reuse); 0, 1: single use. */
	uint32_t reuse;
	unsigned backoff_ms;	     /* first retry's delay, doubling; 0: 1000 */
	unsigned infra_window;	     /* 0: 20 */
	double infra_threshold;	     /* fraction of the window; 0: 0.2 */
	unsigned engine_fail_after;  /* consecutive engine failures that drain it; 0: 3 */
	const char *demo_agent_path; /* tests */
	/*
	 * Tests and benchmarks only (no command sets it): runs each attempt in
	 * place of the lifecycle, so the scheduler, the results file and the
	 * summary can be driven at a scale no engine here can run. NULL: every
	 * attempt is sbx_run_execute, as for every command.
	 */
	sbx_sweep_attempt_fn attempt;
	void *attempt_userdata;
} sbx_sweep_opts;

#define SBX_SWEEP_OPTS_INIT                                                                        \
	{                                                                                          \
		.version = SBX_SWEEP_OPTS_VERSION                                                  \
	}

typedef struct sbx_sweep_outcome {
	sbx_sweep_stop stop;
	size_t ran;	  /* attempts recorded this run */
	size_t remaining; /* episodes without a result at the end */
	double elapsed_s;
	char reason[256]; /* why it stopped early, "" when complete */
} sbx_sweep_outcome;

/*
 * Runs every episode of plan that results does not hold a result for, on
 * opts->engines' job slots, appending each attempt to results. Each episode
 * is prepare → launch → wait → finish of lib/run on its worker's thread.
 * infra_error attempts are retried (plan->retries, with backoff); an engine
 * that fails engine_fail_after times in a row is drained and its episode
 * re-queued for the others. Returns 0 with *out filled however it stopped;
 * <0 only when the sweep could not run at all (results not writable).
 */
int sbx_sweep_execute(const sbx_sweep_plan *plan, sbx_sweep_results *results,
		      const sbx_sweep_opts *opts, sbx_sweep_outcome *out, sbx_error *err);

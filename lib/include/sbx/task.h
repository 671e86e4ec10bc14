/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Tasks: tasks/<name>/task.yaml, loaded and validated with libyaml.
 *
 * A task is data: the prompt the agent gets, the starting files copied into
 * the workspace, the output files collected afterwards, the oracle files the
 * outputs are graded against, the grading configuration, resource limits and
 * whether the GUI is needed. Every error names the file, line and column:
 * "tasks/x/task.yaml:12:5: grading.tolerance must be a number >= 0".
 * Unknown keys are errors.
 *
 * The grading configuration is a plain struct (sbx_grading_spec) so the
 * grader (lib/grade/) can consume it without lib/ knowing the grader. A
 * standalone grading.yaml (the `grading:` mapping on its own) is loaded by
 * the same parser (sbx_grading_spec_load).
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/error.h"

#define SBX_TASK_MAX_FILES	64
#define SBX_GRADING_MAX_CASES	64
#define SBX_GRADING_MAX_SHEETS	64
#define SBX_GRADING_MAX_RANGES	64
#define SBX_TASK_MAX_ID		64
#define SBX_GRADING_MAX_DIGITS	15
#define SBX_GRADING_MAX_REPLACE 32

typedef enum sbx_formula_mode {
	SBX_FORMULA_IGNORE = 0, /* grade cached values only (default) */
	SBX_FORMULA_REQUIRE,	/* also: a formula where the oracle has one */
	SBX_FORMULA_MATCH,	/* also: the normalised formula text is equal */
} sbx_formula_mode;

typedef enum sbx_missing_sheet {
	SBX_MISSING_SHEET_MISMATCH = 0, /* its cells count as mismatches (default) */
	SBX_MISSING_SHEET_FAIL,		/* the case fails outright */
} sbx_missing_sheet;

/* A sheet selector: by name, or by 0-based position in the oracle. */
typedef struct sbx_grading_sheet {
	char *name; /* NULL when index is used */
	int index;  /* -1 when name is used */
} sbx_grading_sheet;

/* A rectangle; 0-based, inclusive. sheet NULL: applies to every graded sheet. */
typedef struct sbx_grading_range {
	char *sheet;
	uint32_t first_row, first_col, last_row, last_col;
} sbx_grading_range;

/* How cells are compared. Defaults in SBX_GRADING_OPTS_DEFAULTS (documented in tasks/README.md). */
typedef struct sbx_grading_opts {
	double abs_tol;		  /* tolerance: default 0.01 */
	double rel_tol;		  /* relative_tolerance: default 0 */
	int round_digits;	  /* round: decimals both sides are rounded to; -1 = off */
	bool trim;		  /* default true */
	bool ignore_case;	  /* default false */
	bool collapse_whitespace; /* default false */
	bool numeric_strings;	  /* a numeric string matches a number; default true */
	bool skip_empty;	  /* empty oracle cells are not graded; default true */
	bool strict; /* extra content where the oracle is empty counts; default false */
	sbx_formula_mode formulas;
	sbx_missing_sheet missing_sheet;
	double pass_threshold;	   /* PASS when score >= this; default 1.0 */
	double fail_threshold;	   /* FAIL when score < this or nothing matched; default 0 */
	sbx_grading_sheet *sheets; /* NULL/0: every sheet of the oracle */
	size_t n_sheets;
	sbx_grading_range *ranges; /* NULL/0: the used range of each graded sheet */
	size_t n_ranges;
	/* Text rewriting before comparing, in this order: replace, then strip, then trim etc. */
	char **replace;	   /* pairs: replace[2i] becomes replace[2i+1]; NULL/0: none */
	size_t n_replace;  /* number of pairs */
	char *strip_chars; /* bytes removed from text; NULL: none */
} sbx_grading_opts;

/* One test case: an output graded against an oracle under opts. */
typedef struct sbx_grading_case {
	char *name;
	char *output; /* relative to the output directory; NULL: the task's first output */
	char *oracle; /* relative to the task directory; NULL: the task's first oracle */
	sbx_grading_opts opts;
	/* gate: must PASS, else the whole grade FAILs with score 0; adds nothing to the score
	 * (e.g. "the given inputs are unchanged"). */
	bool gate;
} sbx_grading_case;

/* A grading configuration: always at least one case. */
typedef struct sbx_grading_spec {
	sbx_grading_case *cases;
	size_t n_cases;
} sbx_grading_spec;

/* Fills opts with the documented defaults (no sheets, no ranges). */
void sbx_grading_opts_init(sbx_grading_opts *opts);

/* Frees what opts owns (sheets, ranges) and resets it to the defaults. */
void sbx_grading_opts_clear(sbx_grading_opts *opts);

/* Frees what spec owns and leaves it empty. Accepts NULL. */
void sbx_grading_spec_clear(sbx_grading_spec *spec);

/*
 * Loads a standalone grading.yaml: the keys of a task's `grading:` mapping at
 * top level. Fills *out (caller clears it with sbx_grading_spec_clear).
 * Returns 0 or a negative errno with a "path:line:col: ..." message.
 */
int sbx_grading_spec_load(const char *path, sbx_grading_spec *out, sbx_error *err);

/* Same from memory; name appears in messages. */
int sbx_grading_spec_parse(const char *name, const char *text, size_t len, sbx_grading_spec *out,
			   sbx_error *err);

typedef enum sbx_task_difficulty {
	SBX_TASK_EASY,
	SBX_TASK_MEDIUM,
	SBX_TASK_HARD,
} sbx_task_difficulty;

const char *sbx_task_difficulty_name(sbx_task_difficulty d);

/*
 * An episode's limits, one type wherever they travel: a task's (task.yaml
 * `limits:`), the command line's, a sweep's plan, the run's as applied, a
 * warm sandbox's, the sandbox's spec. 0 (or "") in a field means "not set
 * here": sbx_limits_resolve takes it from the next source.
 */
#define SBX_LIMITS_RUNTIME_MAX 63

typedef struct sbx_limits {
	uint32_t timeout_s; /* the agent's deadline, in seconds from the episode's start */
	uint64_t memory;    /* bytes */
	double cpus;	    /* CPUs, fractions allowed */
	uint32_t pids;	    /* processes */
	char runtime[SBX_LIMITS_RUNTIME_MAX + 1]; /* the OCI runtime; "": the engine's default */
	uint32_t grace_s;    /* PID 1's grace past the deadline before it ends the sandbox */
	bool engine_seccomp; /* the engine's default seccomp profile instead of ours */
} sbx_limits;

/*
 * Each field of *out from the first source that sets it: flag (the command
 * line), then task, then defaults (which should set them all). Sources may
 * be NULL.
 */
void sbx_limits_resolve(sbx_limits *out, const sbx_limits *flag, const sbx_limits *task,
			const sbx_limits *defaults);

/*
 * True when a and b make the same sandbox: memory, CPUs, pids, runtime and
 * seccomp profile (not the deadline or grace, which are the episode's).
 */
bool sbx_limits_same_sandbox(const sbx_limits *a, const sbx_limits *b);

/* Sets the runtime (NULL: ""), cut at SBX_LIMITS_RUNTIME_MAX bytes. */
void sbx_limits_set_runtime(sbx_limits *l, const char *runtime);

/* A field of sbx_limits, and the JSON key it has in one document. */
typedef enum sbx_limits_field {
	SBX_LIMITS_TIMEOUT,
	SBX_LIMITS_MEMORY,
	SBX_LIMITS_CPUS,
	SBX_LIMITS_PIDS,
	SBX_LIMITS_RUNTIME,
	SBX_LIMITS_GRACE,
	SBX_LIMITS_SECCOMP,
} sbx_limits_field;

typedef struct sbx_limits_key {
	sbx_limits_field field;
	const char *key;
} sbx_limits_key;

struct cJSON;

/*
 * Adds the fields keys[0..n) name to the object o, in that order, under
 * their keys: numbers; the runtime a string, or null when ""; the seccomp
 * profile "default" (the engine's) or "sandbox". result.json's "limits" and
 * a sweep's plan both write through it, each with its own keys.
 */
void sbx_limits_json_write(struct cJSON *o, const sbx_limits *l, const sbx_limits_key *keys,
			   size_t n);

/*
 * Reads the fields keys[0..n) name from the object o into *l. An absent key
 * leaves its field as it is; memory and CPUs that are not numbers, and a
 * runtime that is not a string, read as unset. Returns 0, or a mask of
 * (1u << field) for each field out of range: timeout 0..7 days, memory
 * 0..1e15, CPUs 0..1024, pids 0..2^22 and grace 0..3600, counts whole.
 */
unsigned sbx_limits_json_read(const struct cJSON *o, const sbx_limits_key *keys, size_t n,
			      sbx_limits *l);

/* The tools the sandbox's server offers the agent (task.yaml `tools:`). */
typedef enum sbx_task_toolset {
	SBX_TASK_TOOLS_ALL = 0, /* every tool */
	/* The desktop only: computer-use tools, get_task_status, complete_task and the
	 * tools that only read; no cell writing, no execute_*. Needs gui: true. */
	SBX_TASK_TOOLS_GUI,
} sbx_task_toolset;

/* "all" or "gui": the task.yaml value, also the sandbox's SANDBOX_TOOLSET. */
const char *sbx_task_toolset_name(sbx_task_toolset t);

/*
 * A Harbor task directory (task.toml beside instruction.md, environment/,
 * tests/test.sh, solution/solve.sh): what a run needs beyond the task model.
 * Paths are relative to the task's dir.
 */
typedef struct sbx_task_harbor {
	char *environment;  /* "environment": its Dockerfile and build context */
	char *docker_image; /* [environment] docker_image: a ready image instead, or NULL */
	char *solution;	    /* "solution/solve.sh" when present, else NULL */
	char *name;	    /* [task] name ("org/name"), or NULL */
	/* The workdir, the agent's workspace: [environment] workdir, else the Dockerfile's
	 * last WORKDIR (without a trailing '/'); NULL: the image's, else /workspace. */
	char *workdir;
	uint32_t verifier_timeout_s; /* [verifier] timeout_sec; default 600 */
	uint32_t build_timeout_s;    /* [environment] build_timeout_sec; default 600 */
} sbx_task_harbor;

#define SBX_TASK_HARBOR_WORKDIR		"/workspace" /* when neither task nor image says */
#define SBX_TASK_HARBOR_WORKDIR_MAX	200
#define SBX_TASK_HARBOR_TIMEOUT_S	600
#define SBX_TASK_HARBOR_INSTRUCTION_MAX (1u << 20)

typedef struct sbx_task {
	char *dir;  /* the task's directory, as resolved (no trailing slash) */
	char *path; /* its task.yaml */
	char *id;
	char *title;
	sbx_task_difficulty difficulty;
	char *prompt;
	char **files; /* starting files, relative to dir; placed in the workspace by basename */
	size_t n_files;
	char **outputs; /* files to collect, relative to the workspace */
	size_t n_outputs;
	char **oracles; /* relative to dir */
	size_t n_oracles;
	sbx_grading_spec grading;
	sbx_limits limits; /* what task.yaml sets; 0: not set */
	bool gui;
	sbx_task_toolset tools;
	/* generator: NULL (not seedable), "builtin" (compiled into sandboxctl under the
	 * task's id) or a program relative to dir, run on the host as PROGRAM DIR [SEED]. */
	char *generator;
	/* libreoffice: the sandbox needs LibreOffice (e.g. recalculate, so formulas get values)
	 * without the desktop: the full image. */
	bool libreoffice;
	/* image: the sandbox's image, any linux/amd64 reference (NULL: slim, or full for
	 * gui/libreoffice); --image overrides it. */
	char *image;
	/* Read from the reference system's task.json (sbx_task_reference_to_yaml), not task.yaml.
	 */
	bool reference;
	/* A Harbor task directory (task.toml): graded by its tests/test.sh; else NULL. */
	sbx_task_harbor *harbor;
} sbx_task;

/*
 * Loads a Harbor task directory's task.toml (path: the file) into the task
 * model: the prompt is instruction.md; [agent] timeout_sec, [environment]
 * cpus and memory_mb become limits; [verifier] timeout_sec and the
 * environment's image go in task->harbor. Refused, one line each
 * ("dir/task.toml:12:1: ..."): network (anything but network_mode
 * "no-network"), [[steps]] (multi-step), GPUs, another os, a workdir
 * sbx_task_harbor_workdir_refusal refuses, a
 * missing instruction.md, environment/Dockerfile (unless docker_image) or
 * tests/test.sh, unknown keys in [environment], [agent], [verifier].
 */
int sbx_task_harbor_load(const char *path, sbx_task **out, sbx_error *err);

/*
 * Why wd (without a trailing '/') cannot be a Harbor task's workdir, or NULL
 * when it can: it must be absolute, plain ([A-Za-z0-9._-] components, no "."
 * or ".."), not "/", not at or under the sandbox's own mounts (/proc, /sys,
 * /dev, /tmp, /run, /opt/sandboxctl, /tests, /logs) or above one (/opt), and
 * not a system directory whose content the verifier's programs load (/etc,
 * /usr, /bin, /lib...). (A symlink there is refused on the created sandbox.)
 */
const char *sbx_task_harbor_workdir_refusal(const char *wd);

/* True when path names a Harbor task.toml. */
bool sbx_task_is_harbor_file(const char *path);

/*
 * The reference system's task folders: task.json beside starting_files/ and
 * oracle/. Keys: id; name or title; description and/or prompt (or
 * instructions), which become the prompt; difficulty; files (names in
 * starting_files/, default all of it); oracle (a name or a list, in oracle/,
 * default all of it); output (default: the starting files' names, which the
 * agent overwrites in place); grading {numeric_tolerance (0.01),
 * check_formulas (formulas: require), ignore_empty_cells (true),
 * sheets_to_check, pass_threshold (0.95)}; timeout (seconds). Writes the
 * equivalent task.yaml text to *out (malloc'd, paths relative to the
 * folder). Unknown keys and bad values are errors naming their JSON path:
 * "x/task.json: $.grading.foo: unknown key 'foo'".
 */
int sbx_task_reference_to_yaml(const char *json_path, unsigned flags, char **out, sbx_error *err);

/*
 * flags: grade only the cells the oracle adds beyond the starting file's
 * used range (given cells must be the same in both) and gate the given cells
 * as unchanged, instead of the reference's whole-sheet grading; the task then
 * passes `tasks validate`. For `tasks import --answer-ranges`.
 */
#define SBX_TASK_REFERENCE_ANSWER_RANGES 1u

/*
 * The same from memory: name appears in messages; dir is the task folder the
 * files are looked up in (NULL: not looked up, names map to starting_files/
 * and oracle/, and files/oracle are required).
 */
int sbx_task_reference_parse(const char *name, const char *dir, const char *text, size_t len,
			     unsigned flags, char **out, sbx_error *err);

/* True when path names a reference task file (*.json) rather than a task.yaml. */
bool sbx_task_is_reference_file(const char *path);

/*
 * Loads and validates path (a task.yaml, a reference task.json, or a
 * directory holding either; task.yaml wins).
 * Starting and oracle files must exist as regular files beneath the task
 * directory. On success *out owns a task (sbx_task_free).
 */
int sbx_task_load(const char *path, sbx_task **out, sbx_error *err);

/* Parses task.yaml text; dir is where the files are checked (NULL: not checked). */
int sbx_task_parse(const char *name, const char *dir, const char *text, size_t len, sbx_task **out,
		   sbx_error *err);

/* Frees a task. Accepts NULL; returns NULL. */
sbx_task *sbx_task_free(sbx_task *task);

/*
 * The tasks directory: $SBX_TASKS_DIR if set, else ./tasks if it exists, else
 * the installed directory, else the source tree's tasks/. Returns a malloc'd
 * path (free it) or NULL on OOM.
 */
char *sbx_task_dir_default(void);

/* True when dir holds a task file: task.yaml, the reference's task.json or Harbor's task.toml. */
bool sbx_task_dir_is_task(const char *dir);

/*
 * Resolves a task name ("banking_reserve", looked up in tasks_dir, or the
 * default when NULL) or a path (contains '/', or names an existing file or
 * directory) to its task.yaml, else its reference task.json. *out is malloc'd.
 */
int sbx_task_resolve(const char *tasks_dir, const char *name_or_path, char **out, sbx_error *err);

/*
 * Lists the task names in tasks_dir (subdirectories holding a task.yaml or a
 * reference task.json),
 * sorted. *out is a NULL-terminated malloc'd array of malloc'd strings
 * (sbx_task_names_free). A missing directory is an error.
 */
int sbx_task_list(const char *tasks_dir, char ***out, size_t *n_out, sbx_error *err);

void sbx_task_names_free(char **names);

/* True when s is a valid task id: 1..64 of [a-z0-9_-], starting with a letter or digit. */
bool sbx_task_id_valid(const char *s);

/* True when the task has a generator: `run --seed` can make fresh instances of it. */
bool sbx_task_seedable(const sbx_task *task);

/*
 * Runs the task's generator into dir (made if missing): dir/files/... and
 * dir/oracle/... at the task's relative paths. seed NULL: the committed
 * files (builtin generators give their bytes exactly); else a fresh
 * instance, the same bytes for the same seed. Checks that every starting
 * file and oracle was written.
 */
int sbx_task_generate(const sbx_task *task, const uint64_t *seed, const char *dir, sbx_error *err);

/*
 * sbx_task_generate that a signal handler can end (tasks generate, tasks
 * new): once *stop is non-zero (stop may be NULL: never), a task's own
 * generator, in its process group, gets SIGTERM, then SIGKILL after
 * SBX_TASK_GENERATOR_STOP_MS; -EINTR once it is gone. A built-in generator
 * runs to its end (in-process, milliseconds).
 */
int sbx_task_generate_until(const sbx_task *task, const uint64_t *seed, const char *dir,
			    const volatile sig_atomic_t *stop, sbx_error *err);
#define SBX_TASK_GENERATOR_STOP_MS 2000

/*
 * Makes the instance of task for seed in dir (which holds, or gets, a copy
 * of task.yaml) and points task->dir and task->path at it, so the run copies
 * in, hands the oracle agent and grades against the instance.
 */
int sbx_task_instantiate(sbx_task *task, uint64_t seed, const char *dir, sbx_error *err);

/* Largest seed accepted (2^53 - 1: exact as a JSON number). */
#define SBX_TASK_SEED_MAX 9007199254740991ULL

/* SPDX-License-Identifier: MIT */
/* sandboxctl tasks list | show NAME | validate [PATH...] */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "sbx/docker.h"
#include "sbx/grade.h"
#include "sbx/image.h"
#include "sbx/file.h"
#include "sbx/json.h"
#include "sbx/log.h"
#include "sbx/path.h"
#include "sbx/run.h"
#include "sbx/sheet_ref.h"
#include "sbx/suggest.h"
#include "sbx/task.h"

static const char *arg_tasks_dir;
static bool arg_json;
static const char *arg_out;
static const char *arg_id;
static const char *arg_format;
static bool arg_answer_ranges;
static bool arg_seeded;
static uint64_t arg_seed;
static volatile sig_atomic_t arg_stop;

/*
 * generate and new: a task's own generator runs in a process group of its own
 * (a terminal's Ctrl-C does not reach it), so the signal is ours to pass on:
 * it ends the generator and then sandboxctl, exit 130.
 */
static void on_stop(int sig)
{
	(void)sig;
	arg_stop = 1;
}

static void help(void)
{
	printf("Usage: sandboxctl tasks list [--json]\n"
	       "       sandboxctl tasks show NAME|PATH [--json]\n"
	       "       sandboxctl tasks validate [NAME|PATH...]\n"
	       "       sandboxctl tasks generate NAME|PATH DIR [--seed N]\n"
	       "       sandboxctl tasks new NAME|PATH [--format csv|ods|xlsx]\n"
	       "       sandboxctl tasks import PATH --out DIR [--id ID] [--answer-ranges]\n"
	       "\n"
	       "list      the tasks in the tasks directory: name, difficulty, title\n"
	       "show      a task's prompt, files, outputs, oracle, grading and limits\n"
	       "validate  loads each task (all tasks when none is named), grades its\n"
	       "          oracle against itself (must PASS), opens its workbook starting\n"
	       "          files (each must parse and hold the sheets its gate cases name),\n"
	       "          grades them untouched (must score 0), and prints 'OK' or the\n"
	       "          first error\n"
	       "generate  runs the task's generator into DIR (DIR/files, DIR/oracle): the\n"
	       "          committed files, or with --seed N a fresh instance (the same\n"
	       "          bytes for the same seed; what 'run --seed N' uses). Ctrl-C\n"
	       "          ends the generator too (SIGTERM, SIGKILL 2 s later), exit 130\n"
	       "new       scaffolds a task in the tasks directory (or at PATH): task.yaml,\n"
	       "          a seedable generator gen.py (Python, standard library only, run\n"
	       "          on the host), files/ and oracle/ made by it; it validates as it\n"
	       "          stands and its oracle passes\n"
	       "import    converts a reference system task folder (task.json,\n"
	       "          starting_files/, oracle/) into DIR: task.yaml and copies of its\n"
	       "          files. run, show and validate also read such a folder as it is\n"
	       "          (see tasks/README.md). Its grading stays the reference's\n"
	       "          (whole sheets); --answer-ranges grades only the cells the oracle\n"
	       "          adds and gates the given ones as unchanged, so it validates\n"
	       "\n"
	       "Options:\n"
	       "  --seed N          instance seed, 0..2^53-1 (generate)\n"
	       "  --format F        new: the task's files, csv (default), ods or xlsx\n"
	       "  --out DIR         where import writes the task (e.g. tasks/NAME)\n"
	       "  --id ID           import: the task's id (default: DIR's name, so\n"
	       "                    'run --task NAME' reports as NAME)\n"
	       "  --answer-ranges   import: grade the answer cells, gate the inputs\n"
	       "  --tasks-dir DIR   tasks directory (default: $SBX_TASKS_DIR, else ./tasks,\n"
	       "                    else the installed tasks)\n"
	       "  --json            machine-readable output (list, show)\n"
	       "  -h, --help        show this help\n"
	       "\n"
	       "Exit status: 0 success, 2 usage error, unknown task or invalid task,\n"
	       "130 interrupted (generate, new).\n");
}

static char *tasks_dir(void)
{
	return arg_tasks_dir ? strdup(arg_tasks_dir) : sbx_task_dir_default();
}

static int load(const char *name, sbx_task **out, sbx_error *err)
{
	_cleanup_free_ char *yaml = NULL;
	int r;

	r = sbx_task_resolve(arg_tasks_dir, name, &yaml, err);
	if (r < 0)
		return r;
	return sbx_task_load(yaml, out, err);
}

/*
 * What reaches the terminal from a task folder (names, titles, paths, the
 * prompt, grading strings) goes through sbx_escape_controls: a foreign
 * task.json must not retitle, clear or recolour the operator's terminal.
 */
static void put_field(const char *label, const char *value)
{
	fputs(label, stdout);
	sbx_fputs_escaped_line(value, stdout);
	fputc('\n', stdout);
}

/* A task folder's name, escaped, left-aligned in 24 columns as "%-24s" would. */
static void print_name_column(const char *name)
{
	char shown[256];

	sbx_escape_controls(shown, sizeof(shown), name, false);
	printf("%-24s", shown);
}

static int do_list(void)
{
	_cleanup_free_ char *dir = tasks_dir();
	_cleanup_json_ cJSON *arr = NULL;
	sbx_error err = SBX_ERROR_INIT;
	char **names = NULL;
	int r;

	if (!dir)
		return EXIT_ENGINE;
	r = sbx_task_list(dir, &names, NULL, &err);
	if (r < 0) {
		cli_error("tasks: %s", err.msg);
		return EXIT_USAGE;
	}
	arr = arg_json ? cJSON_CreateArray() : NULL;
	for (char **n = names; *n; n++) {
		char path[4096];
		sbx_task *t = NULL;

		sbx_error_clear(&err);
		/* The folder: its task.yaml, or a reference task.json. */
		snprintf(path, sizeof(path), "%s/%s", dir, *n);
		r = sbx_task_load(path, &t, &err);
		if (arr) {
			cJSON *o = cJSON_CreateObject();

			if (o && cJSON_AddItemToArray(arr, o)) {
				sbx_json_add_string(o, "name", *n);
				if (r >= 0) {
					sbx_json_add_string(o, "title", t->title);
					sbx_json_add_string(
						o, "difficulty",
						sbx_task_difficulty_name(t->difficulty));
					sbx_json_add_bool(o, "gui", t->gui);
				} else {
					sbx_json_add_string(o, "error", err.msg);
				}
			}
		} else if (r >= 0) {
			/* The folder's name and its title are the task author's bytes. */
			print_name_column(*n);
			printf(" %-7s ", sbx_task_difficulty_name(t->difficulty));
			sbx_fputs_escaped_line(t->title, stdout);
			printf("%s\n", t->gui ? " (GUI)" : "");
		} else {
			print_name_column(*n);
			printf(" %-7s (invalid: %s)\n", "-", err.msg); /* err.msg: escaped */
		}
		sbx_task_free(t);
	}
	sbx_task_names_free(names);
	if (arr) {
		_cleanup_free_ char *s = cJSON_Print(arr);

		if (s)
			printf("%s\n", s);
	}
	return EXIT_PASS;
}

static void print_opts(const sbx_grading_opts *o)
{
	static const char *const formulas[] = {"ignore", "require", "match"};
	char round[16] = "off";

	if (o->round_digits >= 0)
		snprintf(round, sizeof(round), "%d", o->round_digits);
	printf("    tolerance %g, relative_tolerance %g, round %s\n", o->abs_tol, o->rel_tol,
	       round);
	printf("    trim %s, ignore_case %s, collapse_whitespace %s, numeric_strings %s\n",
	       o->trim ? "yes" : "no", o->ignore_case ? "yes" : "no",
	       o->collapse_whitespace ? "yes" : "no", o->numeric_strings ? "yes" : "no");
	printf("    skip_empty %s, strict %s, formulas %s, missing_sheet %s\n",
	       o->skip_empty ? "yes" : "no", o->strict ? "yes" : "no", formulas[o->formulas],
	       o->missing_sheet == SBX_MISSING_SHEET_FAIL ? "fail" : "mismatch");
	printf("    pass_threshold %g, fail_threshold %g\n", o->pass_threshold, o->fail_threshold);
	if (o->strip_chars) {
		fputs("    strip_chars '", stdout);
		sbx_fputs_escaped_line(o->strip_chars, stdout);
		fputs("'\n", stdout);
	}
	for (size_t i = 0; i < o->n_replace; i++) {
		fputs("    replace '", stdout);
		sbx_fputs_escaped_line(o->replace[2 * i], stdout);
		fputs("' -> '", stdout);
		sbx_fputs_escaped_line(o->replace[2 * i + 1], stdout);
		fputs("'\n", stdout);
	}
	for (size_t i = 0; i < o->n_sheets; i++) {
		if (o->sheets[i].name) {
			fputs("    sheet '", stdout);
			sbx_fputs_escaped_line(o->sheets[i].name, stdout);
			fputs("'\n", stdout);
		} else {
			printf("    sheet #%d\n", o->sheets[i].index);
		}
	}
	for (size_t i = 0; i < o->n_ranges; i++) {
		const sbx_grading_range *g = &o->ranges[i];
		sbx_ref a = {.row = g->first_row, .col = g->first_col};
		sbx_ref b = {.row = g->last_row, .col = g->last_col};
		_cleanup_free_ char *s = sbx_range_format(g->sheet, &a, &b);

		put_field("    range ", s ? s : "?"); /* holds the sheet's name */
	}
}

/* Unset limits show the run's default (lib/run/lifecycle.c), not a zero. */
/* A task's limits as a run gets them: its own, else the run's default (is_default). */
typedef struct shown_limit {
	const char *key;
	double value;
	bool is_default;
} shown_limit;

enum { LIMIT_DEADLINE, LIMIT_MEMORY, LIMIT_CPUS, LIMIT_PIDS, N_LIMITS };

static void effective_limits(const sbx_limits *l, shown_limit out[N_LIMITS])
{
	static const sbx_limits defaults = SBX_RUN_DEFAULT_LIMITS;
	sbx_limits e;

	sbx_limits_resolve(&e, NULL, l, &defaults);
	out[LIMIT_DEADLINE] = (shown_limit){"deadline", e.timeout_s, !l->timeout_s};
	out[LIMIT_MEMORY] = (shown_limit){"memory", (double)e.memory, !l->memory};
	out[LIMIT_CPUS] = (shown_limit){"cpus", e.cpus, !(l->cpus > 0)};
	out[LIMIT_PIDS] = (shown_limit){"pids", e.pids, !l->pids};
}

static void print_limits(const sbx_limits *l)
{
	shown_limit e[N_LIMITS];
	char text[N_LIMITS][48];
	uint64_t mem;

	effective_limits(l, e);
	mem = (uint64_t)e[LIMIT_MEMORY].value;
	snprintf(text[LIMIT_DEADLINE], sizeof(text[0]), "%.0fs", e[LIMIT_DEADLINE].value);
	if (mem >= (1ULL << 30) && mem % (1ULL << 30) == 0)
		snprintf(text[LIMIT_MEMORY], sizeof(text[0]), "%llu GiB",
			 (unsigned long long)(mem >> 30));
	else
		snprintf(text[LIMIT_MEMORY], sizeof(text[0]), "%llu MiB",
			 (unsigned long long)(mem >> 20));
	snprintf(text[LIMIT_CPUS], sizeof(text[0]), "%g", e[LIMIT_CPUS].value);
	snprintf(text[LIMIT_PIDS], sizeof(text[0]), "%.0f", e[LIMIT_PIDS].value);
	printf("limits:    ");
	for (size_t i = 0; i < N_LIMITS; i++)
		printf("%s %s%s%s%s", i ? "," : "", e[i].key, e[i].is_default ? " default (" : " ",
		       text[i], e[i].is_default ? ")" : "");
	printf("\n");
}

/* limits: the effective numbers; limits_default: the keys that are the run's defaults. */
static void add_limits_json(cJSON *o, const sbx_limits *l)
{
	cJSON *limits = cJSON_AddObjectToObject(o, "limits");
	cJSON *defaults = cJSON_AddArrayToObject(o, "limits_default");
	shown_limit e[N_LIMITS];

	effective_limits(l, e);
	for (size_t i = 0; i < N_LIMITS; i++) {
		sbx_json_add_number(limits, e[i].key, e[i].value);
		if (e[i].is_default && defaults)
			cJSON_AddItemToArray(defaults, cJSON_CreateString(e[i].key));
	}
}

static cJSON *strv_json(char **v)
{
	cJSON *arr = cJSON_CreateArray();

	for (; arr && v && *v; v++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(*v));
	return arr;
}

static int do_show(const char *name)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;

	if (load(name, &t, &err) < 0) {
		cli_error("tasks: %s", err.msg);
		return EXIT_USAGE;
	}
	if (arg_json) {
		_cleanup_json_ cJSON *o = cJSON_CreateObject();
		_cleanup_free_ char *s = NULL;
		if (!o)
			goto oom;
		sbx_json_add_string(o, "id", t->id);
		sbx_json_add_string(o, "title", t->title);
		sbx_json_add_string(o, "difficulty", sbx_task_difficulty_name(t->difficulty));
		sbx_json_add_string(o, "path", t->path);
		sbx_json_add_string(o, "prompt", t->prompt);
		cJSON_AddItemToObject(o, "files", strv_json(t->files));
		cJSON_AddItemToObject(o, "outputs", strv_json(t->outputs));
		cJSON_AddItemToObject(o, "oracle", strv_json(t->oracles));
		add_limits_json(o, &t->limits);
		sbx_json_add_bool(o, "gui", t->gui);
		sbx_json_add_string(o, "tools", sbx_task_toolset_name(t->tools));
		sbx_json_add_bool(o, "seedable", sbx_task_seedable(t));
		sbx_json_add_bool(o, "libreoffice", t->libreoffice);
		sbx_json_add_bool(o, "reference", t->reference);
		sbx_json_add_bool(o, "harbor", t->harbor != NULL);
		if (t->harbor)
			sbx_json_add_number(o, "verifier_timeout_s", t->harbor->verifier_timeout_s);
		sbx_json_add_number(o, "cases", (double)t->grading.n_cases);
		s = cJSON_Print(o);
		if (!s)
			goto oom;
		printf("%s\n", s);
		sbx_task_free(t);
		return EXIT_PASS;
	}
	put_field("id:         ", t->id);
	put_field("title:      ", t->title);
	put_field("difficulty: ", sbx_task_difficulty_name(t->difficulty));
	put_field("path:       ", t->path);
	printf("gui:        %s\n", t->gui ? "yes"
				   : t->libreoffice
					   ? "no (LibreOffice without the desktop: full image)"
					   : "no");
	if (t->reference)
		printf("format:     the reference system's task.json (read as it is; 'tasks "
		       "import' writes a task.yaml)\n");
	if (t->harbor) {
		printf("format:     Harbor task directory (task.toml; graded by tests/test.sh in "
		       "a fresh sandbox)\n");
		put_field("image:      ", t->harbor->docker_image
						  ? t->harbor->docker_image
						  : "built from environment/Dockerfile");
		printf("verifier:   %u s timeout\n", t->harbor->verifier_timeout_s);
		printf("oracle:     %s\n", t->harbor->solution ? "solution/solve.sh" : "none");
	}
	printf("tools:      %s\n",
	       t->tools == SBX_TASK_TOOLS_GUI
		       ? "gui (the desktop only: computer-use and reading tools, no cell writing)"
		       : "all");
	print_limits(&t->limits);
	if (sbx_task_seedable(t)) {
		fputs("seedable:   yes (generator ", stdout);
		sbx_fputs_escaped_line(t->generator, stdout);
		fputs("): 'run --seed N' makes a fresh instance\n", stdout);
	} else {
		printf("seedable:   no (no generator: every run uses the committed files)\n");
	}
	for (size_t i = 0; i < t->n_files; i++)
		put_field("file:       ", t->files[i]);
	for (size_t i = 0; i < t->n_outputs; i++)
		put_field("output:     ", t->outputs[i]);
	for (size_t i = 0; i < t->n_oracles; i++)
		put_field("oracle:     ", t->oracles[i]);
	for (size_t i = 0; i < t->grading.n_cases; i++) {
		const sbx_grading_case *c = &t->grading.cases[i];

		fputs("case '", stdout);
		sbx_fputs_escaped_line(c->name, stdout);
		printf("'%s: ", c->gate ? " (gate: must pass, not scored)" : "");
		sbx_fputs_escaped_line(c->output ? c->output : t->outputs[0], stdout);
		fputs(" vs ", stdout);
		put_field("", c->oracle ? c->oracle : t->oracles[0]);
		print_opts(&c->opts);
	}
	/* The prompt keeps its lines and tabs; every other control is shown escaped. */
	fputs("prompt:\n", stdout);
	sbx_fputs_escaped(t->prompt, stdout);
	if (!t->prompt[0] || t->prompt[strlen(t->prompt) - 1] != '\n')
		fputc('\n', stdout);
	sbx_task_free(t);
	return EXIT_PASS;
oom:
	sbx_task_free(t);
	cli_error("tasks: out of memory");
	return EXIT_ENGINE;
}

/*
 * A Harbor task's image: its docker_image, or every FROM of its Dockerfile,
 * must be on the engine (nothing is pulled). No engine: said, not failed.
 */
static int check_harbor_image(const sbx_task *t, sbx_error *err)
{
	_cleanup_docker_ sbx_docker *d = NULL;
	_cleanup_free_ char *df = NULL;
	sbx_docker_opts o = SBX_DOCKER_OPTS_INIT;
	sbx_error e = SBX_ERROR_INIT;

	if (sbx_docker_open(&d, &o, &e) < 0) {
		sbx_fputs_escaped_line(t->path, stdout);
		printf(": base images not checked (no engine: %s)\n", e.msg);
		return 0;
	}
	if (t->harbor->docker_image) {
		if (!sbx_image_present(d, t->harbor->docker_image))
			return sbx_error_set(
				err, -ENOENT,
				"%s: environment.docker_image '%s' is not on the engine", t->path,
				t->harbor->docker_image);
		return 0;
	}
	if (asprintf(&df, "%s/%s/Dockerfile", t->dir, t->harbor->environment) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return sbx_image_check_bases(d, df, err);
}

static bool validate_one(const char *name)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;

	if (load(name, &t, &err) < 0 ||
	    (t->harbor ? check_harbor_image(t, &err) : sbx_grade_task_check(t, &err)) < 0) {
		printf("%s\n", err.msg);
		sbx_task_free(t);
		return false;
	}
	if (t->reference) {
		sbx_fputs_escaped_line(t->path, stdout);
		printf(": read as a reference task (task.json; 'sandboxctl tasks import' makes a "
		       "task.yaml of it)\n");
	}
	sbx_fputs_escaped_line(t->path, stdout);
	printf(": OK\n");
	sbx_task_free(t);
	return true;
}

static int do_validate(int n, char **names)
{
	_cleanup_free_ char *dir = NULL;
	sbx_error err = SBX_ERROR_INIT;
	char **all = NULL;
	bool ok = true;

	if (n > 0) {
		for (int i = 0; i < n; i++)
			ok = validate_one(names[i]) && ok;
		return ok ? EXIT_PASS : EXIT_USAGE;
	}
	dir = tasks_dir();
	if (!dir)
		return EXIT_ENGINE;
	if (sbx_task_list(dir, &all, NULL, &err) < 0) {
		cli_error("tasks: %s", err.msg);
		return EXIT_USAGE;
	}
	for (char **p = all; *p; p++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", dir, *p);
		ok = validate_one(path) && ok;
	}
	sbx_task_names_free(all);
	return ok ? EXIT_PASS : EXIT_USAGE;
}

/* A task whose files are not there yet (a new task, before its first generation). */
int cmd_tasks__load_unchecked(const char *name, sbx_task **out, sbx_error *err)
{
	_cleanup_free_ char *yaml = NULL, *text = NULL;
	char *slash;
	size_t len;
	int r;

	r = sbx_task_resolve(arg_tasks_dir, name, &yaml, err);
	if (r >= 0)
		r = sbx_file_read_capped(AT_FDCWD, yaml, 1 << 20, &text, &len, err);
	if (r >= 0)
		r = sbx_task_parse(yaml, NULL, text, len, out, err);
	if (r < 0)
		return r;
	slash = strrchr(yaml, '/');
	if (slash)
		*slash = '\0';
	free((*out)->dir);
	(*out)->dir = strdup(slash ? yaml : ".");
	if (!(*out)->dir)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

static int do_generate(const char *name, const char *dir)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;
	int r;

	if (load(name, &t, &err) < 0) {
		sbx_task_free(t);
		t = NULL;
		sbx_error_clear(&err);
		if (cmd_tasks__load_unchecked(name, &t, &err) < 0) {
			sbx_task_free(t);
			cli_error("tasks: %s", err.msg);
			return EXIT_USAGE;
		}
	}
	cli_on_stop_signals(on_stop);
	r = sbx_task_generate_until(t, arg_seeded ? &arg_seed : NULL, dir, &arg_stop, &err);
	sbx_task_free(t);
	if (arg_stop) {
		cli_error("tasks: generate: interrupted; the generator was stopped ('%s' may "
			  "hold part of an instance)",
			  dir);
		return EXIT_INTERRUPTED;
	}
	if (r < 0) {
		cli_error("tasks: %s", err.msg);
		return r == -EINVAL ? EXIT_USAGE : EXIT_ENGINE;
	}
	return EXIT_PASS;
}

static int parse_seed(const char *text)
{
	char *end;

	errno = 0;
	arg_seed = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || arg_seed > SBX_TASK_SEED_MAX) {
		cli_error("tasks: --seed: '%s' is not a number 0..%llu", text, SBX_TASK_SEED_MAX);
		return -EINVAL;
	}
	arg_seeded = true;
	return 0;
}

int cmd_tasks(int argc, char **argv)
{
	static const cli_option opts[] = {
		{"tasks-dir", .value = &arg_tasks_dir},
		{"json", .flag = &arg_json},
		{"seed", .parse = parse_seed},
		{"out", .value = &arg_out},
		{"id", .value = &arg_id},
		{"format", .value = &arg_format},
		{"answer-ranges", .flag = &arg_answer_ranges},
		{0},
	};
	const char *verb;
	int r;

	r = cli_parse_options("tasks", argc, argv, opts, help);
	if (r <= 0)
		return -r;
	verb = optind < argc ? argv[optind++] : "list";
	if (arg_format && strcmp(verb, "new") != 0) {
		cli_error("tasks: --format is for 'tasks new' (the format of its files)");
		return EXIT_USAGE;
	}
	if (strcmp(verb, "list") == 0 && optind == argc)
		return do_list();
	if (strcmp(verb, "show") == 0 && optind + 1 == argc)
		return do_show(argv[optind]);
	if (strcmp(verb, "validate") == 0)
		return do_validate(argc - optind, argv + optind);
	if (strcmp(verb, "new") == 0 && optind + 1 == argc) {
		_cleanup_free_ char *tdir = tasks_dir();

		if (!tdir)
			return EXIT_ENGINE;
		cli_on_stop_signals(on_stop);
		return cmd_tasks__new(argv[optind], tdir, arg_format, &arg_stop);
	}
	if (strcmp(verb, "import") == 0 && optind + 1 == argc) {
		if (!arg_out) {
			cli_error("tasks: import: --out DIR is required (e.g. --out tasks/NAME)");
			return EXIT_USAGE;
		}
		return cmd_tasks__import(argv[optind], arg_out, arg_id,
					 arg_answer_ranges ? SBX_TASK_REFERENCE_ANSWER_RANGES : 0);
	}
	if (strcmp(verb, "generate") == 0 && optind + 2 == argc)
		return do_generate(argv[optind], argv[optind + 1]);
	{
		static const char *const verbs[] = {"list",	"show", "validate",
						    "generate", "new",	"import"};
		const char *near = sbx_suggest(verb, verbs, SBX_ELEMENTSOF(verbs));

		if (near && strcmp(near, verb) != 0)
			cli_error("tasks: unknown verb '%s' (did you mean '%s'?)", verb, near);
	}
	cli_error("tasks: usage: tasks list | show NAME | validate [PATH...] | generate NAME DIR | "
		  "new NAME [--format F] | import PATH --out DIR (see --help)");
	return EXIT_USAGE;
}

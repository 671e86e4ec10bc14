/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl tasks list | show NAME | validate [PATH...] | generate | new |
 * import: the options, --help, the verbs; list and generate here, the
 * others in cmd_tasks_<verb>.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "sbx/file.h"
#include "sbx/json.h"
#include "sbx/log.h"
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

char *cmd_tasks__dir(void)
{
	return arg_tasks_dir ? strdup(arg_tasks_dir) : sbx_task_dir_default();
}

int cmd_tasks__load(const char *name, sbx_task **out, sbx_error *err)
{
	_cleanup_free_ char *yaml = NULL;
	int r;

	r = sbx_task_resolve(arg_tasks_dir, name, &yaml, err);
	if (r < 0)
		return r;
	return sbx_task_load(yaml, out, err);
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
	_cleanup_free_ char *dir = cmd_tasks__dir();
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

	if (cmd_tasks__load(name, &t, &err) < 0) {
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

static const cli_option tasks_options[] = {
	{.text = "Usage: sandboxctl tasks list [--json]\n"
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
		 "          adds and gates the given ones as unchanged, so it validates\n"},
	{.heading = "Options:", .column = 20},
	{"seed", .parse = parse_seed, .usage = "--seed N",
	 .help = "instance seed, 0..2^53-1 (generate)"},
	{"format", .value = &arg_format, .usage = "--format F",
	 .help = "new: the task's files, csv (default), ods or xlsx"},
	{"out", .value = &arg_out, .usage = "--out DIR",
	 .help = "where import writes the task (e.g. tasks/NAME)"},
	{"id", .value = &arg_id, .usage = "--id ID",
	 .help = "import: the task's id (default: DIR's name, so\n"
		 "'run --task NAME' reports as NAME)"},
	{"answer-ranges", .flag = &arg_answer_ranges,
	 .help = "import: grade the answer cells, gate the inputs"},
	{"tasks-dir", .value = &arg_tasks_dir, .usage = "--tasks-dir DIR",
	 .help = "tasks directory (default: $SBX_TASKS_DIR, else ./tasks,\n"
		 "else the installed tasks)"},
	{"json", .flag = &arg_json, .help = "machine-readable output (list, show)"},
	{.usage = "-h, --help", .help = "show this help"},
	{.text = "\nExit status: 0 success, 2 usage error, unknown task or invalid task,\n"
		 "130 interrupted (generate, new).\n"},
	{0},
};

int cmd_tasks(int argc, char **argv)
{
	const char *verb;
	int r;

	r = cli_parse_options("tasks", argc, argv, tasks_options, NULL);
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
		return cmd_tasks__show(argv[optind], arg_json);
	if (strcmp(verb, "validate") == 0)
		return cmd_tasks__validate(argc - optind, argv + optind);
	if (strcmp(verb, "new") == 0 && optind + 1 == argc) {
		_cleanup_free_ char *tdir = cmd_tasks__dir();

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

/* SPDX-License-Identifier: MIT */
/* sandboxctl tasks show NAME|PATH [--json]: a task as sandboxctl reads it. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sbx/json.h"
#include "sbx/log.h"
#include "sbx/run.h"
#include "sbx/sheet_ref.h"
#include "sbx/task.h"

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

int cmd_tasks__show(const char *name, bool json)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;

	if (cmd_tasks__load(name, &t, &err) < 0) {
		cli_error("tasks: %s", err.msg);
		return EXIT_USAGE;
	}
	if (json) {
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

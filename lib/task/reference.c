/* SPDX-License-Identifier: MIT */
/*
 * The reference system's task folders: task.json beside starting_files/ and
 * oracle/, mapped onto our task model by writing the task.yaml it means.
 * One mapping serves loading (`run --task-dir`, `tasks validate`) and
 * `tasks import`, so what runs is exactly what an import would write.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/task.h"
#include "answer.h"
#include "task_schema.h"
#include "yamltext.h"

#define MAX_JSON   (1u << 20)
#define TITLE_MAX  256	       /* as task.yaml's */
#define PROMPT_MAX (64 * 1024) /* as task.yaml's */
#define MAX_YAML   (1u << 20)

/* The reference's grade.py passes at 95 % of the graded cells. */
#define REFERENCE_PASS_THRESHOLD 0.95

static const char *const top_keys[] = {
	"id",	 "name",   "title",  "description", "prompt",  "instructions", "difficulty",
	"files", "oracle", "output", "grading",	    "timeout", NULL,
};
static const char *const grading_keys[] = {
	"numeric_tolerance", "check_formulas", "ignore_empty_cells",
	"sheets_to_check",   "pass_threshold", NULL,
};

typedef struct conv {
	const char *name; /* the task.json path, for messages */
	const char *dir;  /* the task folder; NULL: files are not looked up */
	sbx_error *err;
	sbx_buf out;
	bool oom;
	bool answer_ranges;		    /* SBX_TASK_REFERENCE_ANSWER_RANGES */
	char **files, **oracles, **outputs; /* NULL-terminated, owned */
} conv;

static int fail(conv *c, const char *jpath, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(conv *c, const char *jpath, const char *fmt, ...)
{
	char msg[SBX_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Names from the file may hold anything; the message stays one line. */
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = '?';
	return sbx_error_set(c->err, -EINVAL, "%s: %s: %s", c->name, jpath, msg);
}

static void emit(conv *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends to the YAML; a failure sticks (the buffer frees itself on one). */
static void emit(conv *c, const char *fmt, ...)
{
	va_list ap;

	if (c->oom)
		return;
	va_start(ap, fmt);
	if (sbx_buf_vprintf(&c->out, fmt, ap) < 0)
		c->oom = true;
	va_end(ap);
}

/* Appends through yamltext.c; a failure sticks like emit's. */
static void emit_quoted(conv *c, const char *s)
{
	if (!c->oom && sbx_task__yaml_quoted(&c->out, s) < 0)
		c->oom = true;
}

static void emit_text(conv *c, const char *key, const char *s)
{
	if (!c->oom && sbx_task__yaml_text(&c->out, key, s) < 0)
		c->oom = true;
}

static void emit_list(conv *c, const char *key, char **v)
{
	emit(c, "%s:\n", key);
	for (; *v; v++) {
		emit(c, "  - ");
		emit_quoted(c, *v);
		emit(c, "\n");
	}
}

static int check_keys(conv *c, const cJSON *obj, const char *jpath, const char *const *keys)
{
	const cJSON *it;

	cJSON_ArrayForEach (it, obj) {
		size_t i = 0;

		while (keys[i] && strcmp(keys[i], it->string) != 0)
			i++;
		if (!keys[i])
			return fail(c, jpath, "unknown key '%s'", it->string);
	}
	return 0;
}

/* An absolute path or a '..' component could name a file outside the folder. */
static bool escapes(const char *p)
{
	if (p[0] == '/')
		return true;
	for (const char *s = p; s; s = strchr(s, '/'), s = s ? s + 1 : NULL)
		if (s[0] == '.' && s[1] == '.' && (s[2] == '/' || s[2] == '\0'))
			return true;
	return false;
}

static bool is_regular(const char *dir, const char *rel)
{
	_cleanup_free_ char *p = NULL;
	struct stat st;

	if (!dir)
		return false;
	return asprintf(&p, "%s/%s", dir, rel) >= 0 && lstat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int strv_push(char ***v, size_t *n, char *s)
{
	char **grown;

	if (!s)
		return -ENOMEM;
	grown = realloc(*v, (*n + 2) * sizeof(**v));
	if (!grown) {
		free(s);
		return -ENOMEM;
	}
	*v = grown;
	grown[(*n)++] = s;
	grown[*n] = NULL;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file directly in dir/sub, sorted: what the reference copies when no list is given.
 */
static int folder_files(conv *c, const char *sub, const char *jpath, char ***out)
{
	_cleanup_free_ char *path = NULL;
	char **v = NULL;
	size_t n = 0;
	struct dirent *de;
	DIR *d;

	if (!c->dir)
		return fail(c, jpath, "missing (required when the folder is not read)");
	if (asprintf(&path, "%s/%s", c->dir, sub) < 0)
		return sbx_error_set(c->err, -ENOMEM, "out of memory");
	d = opendir(path);
	if (!d)
		return fail(c, jpath, "missing, and there is no %s/ folder to take it from", sub);
	while ((de = readdir(d))) {
		char *rel;

		if (de->d_name[0] == '.' || asprintf(&rel, "%s/%s", sub, de->d_name) < 0)
			continue;
		if (!is_regular(c->dir, rel) || n >= SBX_TASK_MAX_FILES) {
			free(rel);
			continue;
		}
		if (strv_push(&v, &n, rel) < 0) {
			closedir(d);
			sbx_strv_free(v);
			return sbx_error_set(c->err, -ENOMEM, "out of memory");
		}
	}
	closedir(d);
	if (n == 0)
		return fail(c, jpath, "missing, and %s/ holds no files", sub);
	qsort(v, n, sizeof(*v), cmp_str);
	*out = v;
	return 0;
}

/*
 * A string or a list of strings naming files in sub/ (or, failing that, in
 * the task folder itself); resolved to paths relative to the task folder.
 */
static int file_list(conv *c, const cJSON *node, const char *key, const char *sub, char ***out)
{
	char jpath[64], **v = NULL;
	size_t n = 0;
	const cJSON *it;
	int i = 0;

	snprintf(jpath, sizeof(jpath), "$.%s", key);
	if (!node)
		return folder_files(c, sub, jpath, out);
	if (!cJSON_IsString(node) && !cJSON_IsArray(node))
		return fail(c, jpath, "expected a file name or a list of file names");
	if (cJSON_IsArray(node) && cJSON_GetArraySize(node) == 0)
		return fail(c, jpath, "the list is empty");
	for (it = cJSON_IsArray(node) ? node->child : node; it;
	     it = cJSON_IsArray(node) ? it->next : NULL, i++) {
		char *rel = NULL;

		if (cJSON_IsArray(node))
			snprintf(jpath, sizeof(jpath), "$.%s[%d]", key, i);
		if (!cJSON_IsString(it) || !*it->valuestring) {
			sbx_strv_free(v);
			return fail(c, jpath, "expected a file name");
		}
		if (escapes(it->valuestring)) {
			int r = fail(c, jpath,
				     "'%s' must be a relative path inside the task folder",
				     it->valuestring);
			sbx_strv_free(v);
			return r;
		}
		if (n >= SBX_TASK_MAX_FILES) {
			sbx_strv_free(v);
			return fail(c, jpath, "too many files (at most %d)", SBX_TASK_MAX_FILES);
		}
		if (asprintf(&rel, "%s/%s", sub, it->valuestring) < 0) {
			sbx_strv_free(v);
			return sbx_error_set(c->err, -ENOMEM, "out of memory");
		}
		/* No folder to look in (fuzzing, memory): the reference's layout is assumed. */
		if (c->dir && !is_regular(c->dir, rel)) {
			free(rel);
			rel = is_regular(c->dir, it->valuestring) ? strdup(it->valuestring) : NULL;
			if (!rel) {
				int r = fail(c, jpath, "'%s' not found in %s/ or the task folder",
					     it->valuestring, sub);
				sbx_strv_free(v);
				return r;
			}
		}
		if (strv_push(&v, &n, rel) < 0) {
			sbx_strv_free(v);
			return sbx_error_set(c->err, -ENOMEM, "out of memory");
		}
	}
	*out = v;
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static int outputs_of(conv *c, const cJSON *node)
{
	size_t n = 0;
	const cJSON *it;
	int i = 0;

	if (node && !cJSON_IsString(node) && !cJSON_IsArray(node))
		return fail(c, "$.output", "expected a file name or a list of file names");
	if (!node) {
		/* The reference's agents overwrite their starting files in place. */
		for (char **f = c->files; *f; f++)
			if (strv_push(&c->outputs, &n, strdup(base_name(*f))) < 0)
				return sbx_error_set(c->err, -ENOMEM, "out of memory");
		return 0;
	}
	for (it = cJSON_IsArray(node) ? node->child : node; it;
	     it = cJSON_IsArray(node) ? it->next : NULL, i++) {
		const char *why;
		char jpath[64];

		snprintf(jpath, sizeof(jpath), cJSON_IsArray(node) ? "$.output[%d]" : "$.output",
			 i);
		if (!cJSON_IsString(it) || !*it->valuestring || escapes(it->valuestring))
			return fail(c, jpath, "expected a file name relative to the workspace");
		why = sbx_task__file_path_problem(it->valuestring, strlen(it->valuestring));
		if (why)
			return fail(c, jpath, "'%s' is not a plain relative file path (%s)",
				    it->valuestring, why);
		if (n >= SBX_TASK_MAX_FILES)
			return fail(c, jpath, "too many files (at most %d)", SBX_TASK_MAX_FILES);
		if (strv_push(&c->outputs, &n, strdup(it->valuestring)) < 0)
			return sbx_error_set(c->err, -ENOMEM, "out of memory");
	}
	return 0;
}

static size_t count(char **v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

static int number(conv *c, const cJSON *j, const char *jpath, double min, double max, double *out)
{
	if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble) || j->valuedouble < min ||
	    j->valuedouble > max)
		return fail(c, jpath, "expected a number from %g to %g", min, max);
	*out = j->valuedouble;
	return 0;
}

static int boolean(conv *c, const cJSON *j, const char *jpath, bool *out)
{
	if (!cJSON_IsBool(j))
		return fail(c, jpath, "expected true or false");
	*out = cJSON_IsTrue(j);
	return 0;
}

static void emit_ranges(conv *c, char **v)
{
	emit(c, "      ranges: [");
	for (size_t i = 0; v && v[i]; i++) {
		if (i)
			emit(c, ", ");
		emit_quoted(c, v[i]);
	}
	emit(c, "]\n");
}

/* Grade only the cells the oracle adds; the given ones must stay (a gate), as our tasks do. */
static int emit_answer_cases(conv *c, const cJSON *sheets)
{
	_cleanup_free_ char *start = NULL, *oracle = NULL;
	char **names = NULL, **answer = NULL, **inputs = NULL;
	size_t n = 0;
	const cJSON *it;
	int r = 0;

	if (count(c->files) != 1 || count(c->oracles) != 1 || count(c->outputs) != 1)
		return fail(c, "$.files",
			    "answer ranges need one starting file, one output and one oracle");
	if (!c->dir || asprintf(&start, "%s/%s", c->dir, c->files[0]) < 0 ||
	    asprintf(&oracle, "%s/%s", c->dir, c->oracles[0]) < 0)
		return sbx_error_set(c->err, -ENOMEM, "out of memory");
	cJSON_ArrayForEach (it, sheets)
		if ((r = strv_push(&names, &n, strdup(it->valuestring))) < 0)
			break;
	if (r >= 0)
		r = sbx_task__answer_ranges(start, oracle, names, &answer, &inputs, c->err);
	sbx_strv_free(names);
	if (r < 0)
		return r == -ENOMEM ? sbx_error_set(c->err, r, "out of memory")
				    : sbx_error_prefix(c->err, r, "%s: answer ranges", c->name);
	emit(c, "  cases:\n    - name: answer\n");
	emit_ranges(c, answer);
	if (inputs) {
		emit(c, "    - name: inputs unchanged\n      gate: true\n      skip_empty: false\n"
			"      tolerance: 0\n");
		emit_ranges(c, inputs);
	}
	sbx_strv_free(answer);
	sbx_strv_free(inputs);
	return 0;
}

/* The grading options both a single grade and every case share. */
static int emit_grading(conv *c, const cJSON *g)
{
	double tol = 0.01, pass = REFERENCE_PASS_THRESHOLD;
	bool formulas = false, skip_empty = true;
	const cJSON *sheets = sbx_json_get(g, "sheets_to_check"), *it;
	size_t n_out = count(c->outputs), n_oracle = count(c->oracles);
	int r, i = 0;

	if (g && !cJSON_IsObject(g))
		return fail(c, "$.grading", "expected an object");
	if ((r = check_keys(c, g, "$.grading", grading_keys)) < 0)
		return r;
	if (sbx_json_get(g, "numeric_tolerance") &&
	    (r = number(c, sbx_json_get(g, "numeric_tolerance"), "$.grading.numeric_tolerance", 0,
			1e12, &tol)) < 0)
		return r;
	if (sbx_json_get(g, "pass_threshold") &&
	    (r = number(c, sbx_json_get(g, "pass_threshold"), "$.grading.pass_threshold", 0, 1,
			&pass)) < 0)
		return r;
	if (sbx_json_get(g, "check_formulas") &&
	    (r = boolean(c, sbx_json_get(g, "check_formulas"), "$.grading.check_formulas",
			 &formulas)) < 0)
		return r;
	if (sbx_json_get(g, "ignore_empty_cells") &&
	    (r = boolean(c, sbx_json_get(g, "ignore_empty_cells"), "$.grading.ignore_empty_cells",
			 &skip_empty)) < 0)
		return r;
	if (sheets && (!cJSON_IsArray(sheets) || cJSON_GetArraySize(sheets) == 0))
		return fail(c, "$.grading.sheets_to_check",
			    "expected a non-empty list of sheet names");
	emit(c, "grading:\n  tolerance: %.15g\n  skip_empty: %s\n  pass_threshold: %.15g\n", tol,
	     skip_empty ? "true" : "false", pass);
	if (formulas)
		emit(c, "  formulas: require\n");
	if (sheets)
		emit(c, "  sheets:\n");
	cJSON_ArrayForEach (it, sheets) {
		char jpath[64];

		snprintf(jpath, sizeof(jpath), "$.grading.sheets_to_check[%d]", i++);
		if (!cJSON_IsString(it) || !*it->valuestring)
			return fail(c, jpath, "expected a sheet name");
		emit(c, "    - ");
		emit_quoted(c, it->valuestring);
		emit(c, "\n");
	}
	if (c->answer_ranges)
		return emit_answer_cases(c, sheets);
	if (n_out <= 1 && n_oracle <= 1)
		return 0;
	/* Several files: graded pairwise, output i against oracle i. */
	if (n_out != n_oracle)
		return fail(c, "$.output",
			    "%zu outputs and %zu oracle files: name one output per oracle, in "
			    "the same order",
			    n_out, n_oracle);
	emit(c, "  cases:\n");
	for (size_t k = 0; k < n_out; k++) {
		emit(c, "    - name: ");
		emit_quoted(c, c->outputs[k]);
		emit(c, "\n      output: ");
		emit_quoted(c, c->outputs[k]);
		emit(c, "\n      oracle: ");
		emit_quoted(c, c->oracles[k]);
		emit(c, "\n");
	}
	return 0;
}

static int convert(conv *c, const cJSON *j)
{
	const char *id, *title, *desc, *prompt, *difficulty;
	_cleanup_free_ char *text = NULL;
	const cJSON *v;
	double timeout = 0;
	int r;

	if (!cJSON_IsObject(j))
		return fail(c, "$", "expected an object");
	if ((r = check_keys(c, j, "$", top_keys)) < 0)
		return r;
	for (const char *const *k =
		     (const char *const[]){"id", "name", "title", "description", "prompt",
					   "instructions", "difficulty", NULL};
	     *k; k++)
		if ((v = sbx_json_get(j, *k)) && !cJSON_IsString(v)) {
			char jpath[32];
			snprintf(jpath, sizeof(jpath), "$.%s", *k);
			return fail(c, jpath, "expected a string");
		}
	id = sbx_json_get_string(j, "id", NULL);
	if (!id)
		return fail(c, "$", "missing required key 'id'");
	if (!sbx_task_id_valid(id))
		return fail(c, "$.id",
			    "'%s': must be 1..64 characters of a-z, 0-9, '_' and '-', starting "
			    "with a letter or digit",
			    id);
	title = sbx_json_get_string(j, "title", sbx_json_get_string(j, "name", id));
	if (strlen(title) > TITLE_MAX)
		return fail(c, sbx_json_get(j, "title") ? "$.title" : "$.name",
			    "longer than %d bytes", TITLE_MAX);
	desc = sbx_json_get_string(j, "description", NULL);
	prompt = sbx_json_get_string(j, "prompt", sbx_json_get_string(j, "instructions", NULL));
	if (sbx_json_get(j, "prompt") && sbx_json_get(j, "instructions"))
		return fail(c, "$.instructions",
			    "give the prompt once: 'prompt' or 'instructions'");
	if (!desc && !prompt)
		return fail(c, "$", "missing required key 'description' (or 'prompt')");
	/* The reference shows the agent both: what the task is, then how to do it. */
	if (desc && prompt && asprintf(&text, "%s\n\n%s", desc, prompt) < 0)
		return sbx_error_set(c->err, -ENOMEM, "out of memory");
	if (strlen(text ? text : prompt ? prompt : desc) > PROMPT_MAX)
		return fail(c, prompt ? "$.prompt" : "$.description", "longer than %d bytes",
			    PROMPT_MAX);
	difficulty = sbx_json_get_string(j, "difficulty", "medium");
	if (strcmp(difficulty, "easy") != 0 && strcmp(difficulty, "medium") != 0 &&
	    strcmp(difficulty, "hard") != 0)
		return fail(c, "$.difficulty", "'%s': expected easy, medium or hard", difficulty);
	if ((v = sbx_json_get(j, "timeout")) &&
	    (r = number(c, v, "$.timeout", 0.001, 7 * 86400, &timeout)) < 0)
		return r;
	if ((r = file_list(c, sbx_json_get(j, "files"), "files", "starting_files", &c->files)) <
		    0 ||
	    (r = file_list(c, sbx_json_get(j, "oracle"), "oracle", "oracle", &c->oracles)) < 0 ||
	    (r = outputs_of(c, sbx_json_get(j, "output"))) < 0)
		return r;

	emit(c, "# Converted from the reference system's %s.\nid: %s\ntitle: ", base_name(c->name),
	     id);
	emit_quoted(c, title);
	emit(c, "\ndifficulty: %s\n", difficulty);
	emit_text(c, "prompt", text ? text : prompt ? prompt : desc);
	emit_list(c, "files", c->files);
	emit_list(c, "outputs", c->outputs);
	emit_list(c, "oracle", c->oracles);
	if ((r = emit_grading(c, sbx_json_get(j, "grading"))) < 0)
		return r;
	if (timeout > 0)
		emit(c, "limits:\n  deadline: %u\n", (unsigned)ceil(timeout));
	emit(c, "gui: false\n");
	return c->oom ? sbx_error_set(c->err, -ENOMEM, "%s: out of memory", c->name) : 0;
}

bool sbx_task_is_reference_file(const char *path)
{
	size_t n = strlen(path);

	return n >= 5 && strcmp(path + n - 5, ".json") == 0;
}

int sbx_task_reference_parse(const char *name, const char *dir, const char *text, size_t len,
			     unsigned flags, char **out, sbx_error *err)
{
	_cleanup_json_ cJSON *j = NULL;
	sbx_error perr = SBX_ERROR_INIT;
	conv c = {.name = name,
		  .dir = dir,
		  .err = err,
		  .out = SBX_BUF_INIT(MAX_YAML),
		  .answer_ranges = flags & SBX_TASK_REFERENCE_ANSWER_RANGES};
	ssize_t bad;
	int r;

	if (len > MAX_JSON)
		return sbx_error_set(err, -EFBIG, "%s: larger than %u bytes", name, MAX_JSON);
	/* task.yaml is UTF-8 (libyaml checks), and JSON is too; say so here, with where. */
	if ((bad = sbx_task__utf8_invalid(text, len)) >= 0)
		return sbx_error_set(err, -EINVAL, "%s: byte %zd: not UTF-8 text", name, bad);
	if (sbx_json_parse(text, len, &j, &perr) < 0)
		return sbx_error_set(err, -EINVAL, "%s: not JSON: %s", name,
				     sbx_error_message(&perr));
	r = convert(&c, j);
	sbx_strv_free(c.files);
	sbx_strv_free(c.oracles);
	sbx_strv_free(c.outputs);
	if (r < 0) {
		sbx_buf_free(&c.out);
		return r;
	}
	*out = sbx_buf_steal(&c.out, NULL);
	return *out ? 0 : sbx_error_set(err, -ENOMEM, "out of memory");
}

int sbx_task_reference_to_yaml(const char *json_path, unsigned flags, char **out, sbx_error *err)
{
	_cleanup_free_ char *text = NULL, *dir = NULL;
	size_t len;
	char *slash;
	int r;

	r = sbx_task__read_file(json_path, &text, &len, err);
	if (r < 0)
		return r;
	dir = strdup(json_path);
	if (!dir)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	return sbx_task_reference_parse(json_path, dir, text, len, flags, out, err);
}

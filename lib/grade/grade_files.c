/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <libxml/parser.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/formula.h"
#include "sbx/path.h"
#include "grader-internal.h"

sbx_grade_result *sbx_grade_result_free(sbx_grade_result *r)
{
	if (!r)
		return NULL;
	for (size_t i = 0; i < r->n_cases; i++)
		sbx_grade_case_result_clear(&r->cases[i]);
	free(r->cases);
	free(r);
	return NULL;
}

void sbx_grade_result_summarise(sbx_grade_result *r)
{
	size_t passed = 0, failed = 0, scored = 0;
	bool gate_failed = false;

	r->graded = r->matched = 0;
	for (size_t i = 0; i < r->n_cases; i++)
		scored += !r->cases[i].gate;
	for (size_t i = 0; i < r->n_cases; i++) {
		/* Gates only decide; the score is the answer's (all cases when all are gates). */
		if (!r->cases[i].gate || !scored) {
			r->graded += r->cases[i].graded;
			r->matched += r->cases[i].matched;
		}
		gate_failed |= r->cases[i].gate && r->cases[i].status != SBX_GRADE_PASS;
		passed += r->cases[i].status == SBX_GRADE_PASS;
		/* Every answer case failing is a FAIL, whatever the gates say. */
		failed += r->cases[i].status == SBX_GRADE_FAIL && (!r->cases[i].gate || !scored);
	}
	r->gate_failed = gate_failed;
	r->score = r->graded && !gate_failed ? (double)r->matched / (double)r->graded : 0;
	r->soft = r->n_cases ? (double)passed / (double)r->n_cases : 0;
	r->hard = r->n_cases && passed == r->n_cases;
	r->status = r->hard						      ? SBX_GRADE_PASS
		    : gate_failed || failed == (scored ? scored : r->n_cases) ? SBX_GRADE_FAIL
									      : SBX_GRADE_PARTIAL;
}

/* Reads an opened file (up to the reader's file-size limit) and parses it as a workbook. */
static int open_fd(int fd, const char *name, sbx_book **out, sbx_error *err)
{
	sbx_sheet_limits limits = SBX_SHEET_LIMITS_INIT;
	sbx_sheet_open_options opts = SBX_SHEET_OPEN_OPTIONS_INIT;
	_cleanup_free_ char *data = NULL;
	struct stat st;
	size_t len = 0;
	int r;

	sbx_sheet_limits_default(&limits);
	if (fstat(fd, &st) < 0)
		return sbx_error_set(err, -errno, "'%s': %s", name, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return sbx_error_set(err, -EINVAL, "'%s': not a regular file", name);
	if ((uint64_t)st.st_size > limits.max_file_size)
		return sbx_error_set(err, -EFBIG, "'%s': file too large (%lld bytes)", name,
				     (long long)st.st_size);
	r = sbx_file_read_fd(fd, (size_t)st.st_size, &data, &len);
	if (r == -ENOMEM)
		return sbx_error_set(err, r, "out of memory");
	if (r < 0)
		return sbx_error_set(err, r, "'%s': %s", name, strerror(-r));
	return sbx_book_open_memory(data, len, name, &opts, out, err);
}

/* Opens an output; failures become the case's failure text, not an error. */
static int open_output(int dirfd, const char *path, sbx_book **out, char **problem)
{
	sbx_error err = SBX_ERROR_INIT;
	_cleanup_close_ int fd = -1;
	int r;

	if (dirfd >= 0)
		fd = sbx_path_open_beneath(dirfd, path, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0, true,
					   &err);
	else if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) < 0)
		fd = sbx_error_set(&err, -errno, "%s", strerror(errno));
	if (fd == -ENOENT)
		r = asprintf(problem, "output '%s' not found", path);
	else if (fd < 0)
		r = asprintf(problem, "output '%s': %s", path, err.msg);
	else if (open_fd(fd, path, out, &err) < 0)
		r = asprintf(problem, "output unreadable: %s", err.msg);
	else
		return 0;
	return r < 0 ? -ENOMEM : 0;
}

/* One output being opened, possibly on its own thread. */
typedef struct opening {
	int dirfd;
	const char *path;
	sbx_book *book;
	char *problem;
	int r;
} opening;

static void *open_output_thread(void *p)
{
	opening *o = p;

	o->r = open_output(o->dirfd, o->path, &o->book, &o->problem);
	return NULL;
}

static void init_xml(void)
{
	xmlInitParser();
}

/*
 * Opens the oracle here and the output on a second thread: the two reads are
 * most of a grade's time and independent (distinct books). libxml2 is
 * initialised once first, as it requires before use from several threads.
 */
static int open_pair(const char *oracle_path, int dirfd, const char *output_path, sbx_book **oracle,
		     opening *o, sbx_error *err)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_t th;
	bool threaded;
	int r;

	*o = (opening){.dirfd = dirfd, .path = output_path};
	pthread_once(&once, init_xml);
	threaded = pthread_create(&th, NULL, open_output_thread, o) == 0;
	r = sbx_book_open(oracle_path, NULL, oracle, err);
	if (threaded)
		pthread_join(th, NULL);
	else
		open_output_thread(o);
	if (r < 0) {
		o->book = sbx_book_free(o->book);
		free(o->problem);
		o->problem = NULL;
		return sbx_error_prefix(err, r, "oracle");
	}
	if (o->r < 0) {
		*oracle = sbx_book_free(*oracle);
		return sbx_error_set(err, o->r, "out of memory");
	}
	return 0;
}

const char *sbx_grade_recalc_method(const sbx_grade_recalc *r)
{
	return r->computed ? "native" : "none";
}

/* Gives the output's formulas without cached values their values (natively). */
static int recalc_output(sbx_book *b, sbx_grade_recalc *acc, sbx_error *err)
{
	sbx_recalc_options o = SBX_RECALC_OPTIONS_INIT;
	sbx_recalc_stats st;
	uint64_t formulas, missing;
	int r;

	sbx_book_count_formulas(b, &formulas, &missing);
	acc->formulas += formulas;
	acc->missing += missing;
	if (!missing)
		return 0;
	o.missing_only = true;
	r = sbx_book_recalc(b, &o, &st, err);
	if (r == -E2BIG) {
		/* Too much work: grade what is there, as before, and say so. */
		snprintf(acc->why, sizeof(acc->why), "%s", sbx_error_message(err));
		sbx_error_clear(err);
		return 0;
	}
	if (r < 0)
		return r;
	acc->computed += st.computed;
	acc->unsupported += st.unsupported;
	if (st.unsupported && !acc->why[0])
		snprintf(acc->why, sizeof(acc->why), "%s", st.why);
	return 0;
}

/* Shared by sbx_grade_files and sbx_grade_task: output paths relative to out_dirfd (or cwd). */
static int grade_cases(const sbx_grading_spec *spec, int out_dirfd, const char *const *outputs,
		       const char *const *oracles, sbx_grade_result **out, sbx_error *err)
{
	_cleanup_(sbx_grade_result_freep) sbx_grade_result *res = NULL;
	sbx_book *oracle = NULL;
	opening o = {0};
	int r = 0;

	if (spec->n_cases == 0)
		return sbx_error_set(err, -EINVAL, "grading: no cases");
	res = calloc(1, sizeof(*res));
	if (!res || !(res->cases = calloc(spec->n_cases, sizeof(*res->cases))))
		return sbx_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < spec->n_cases; i++) {
		const sbx_grading_case *gc = &spec->cases[i];
		sbx_grade_case_result *cr = &res->cases[res->n_cases];

		/* Cases often share their files: read them once. */
		if (i == 0 || strcmp(oracles[i], oracles[i - 1]) != 0 ||
		    strcmp(outputs[i], outputs[i - 1]) != 0) {
			oracle = sbx_book_free(oracle);
			o.book = sbx_book_free(o.book);
			free(o.problem);
			r = open_pair(oracles[i], out_dirfd, outputs[i], &oracle, &o, err);
			if (r == 0 && o.book)
				r = recalc_output(o.book, &res->recalc, err);
			if (r < 0) {
				sbx_book_free(oracle);
				sbx_book_free(o.book);
				free(o.problem);
				return r;
			}
		}
		r = sbx_grade_books(&gc->opts, o.book, o.problem, oracle, cr, err);
		if (r < 0) {
			if (spec->n_cases > 1)
				sbx_error_prefix(err, r, "case '%s'", gc->name);
			break;
		}
		res->n_cases++;
		cr->gate = gc->gate;
		cr->name = strdup(gc->name);
		cr->output = strdup(outputs[i]);
		cr->oracle = strdup(oracles[i]);
		if (!cr->name || !cr->output || !cr->oracle) {
			r = sbx_error_set(err, -ENOMEM, "out of memory");
			break;
		}
	}
	sbx_book_free(oracle);
	sbx_book_free(o.book);
	free(o.problem);
	if (r < 0)
		return r;
	sbx_grade_result_summarise(res);
	*out = TAKE_PTR(res);
	return 0;
}

int sbx_grade_files(const sbx_grading_spec *spec, const char *const *outputs,
		    const char *const *oracles, sbx_grade_result **out, sbx_error *err)
{
	return grade_cases(spec, -1, outputs, oracles, out, err);
}

int sbx_grade_task(const sbx_task *task, const char *output, sbx_grade_result **out, sbx_error *err)
{
	const sbx_grading_spec *spec = &task->grading;
	char **outputs = NULL, **oracles = NULL;
	_cleanup_close_ int dirfd = -1;
	struct stat st;
	int r = 0;

	if (stat(output, &st) < 0)
		return sbx_error_set(err, -errno, "output '%s': %s", output, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		dirfd = open(output, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			return sbx_error_set(err, -errno, "output directory '%s': %s", output,
					     strerror(errno));
	} else if (task->n_outputs > 1) {
		return sbx_error_set(err, -EINVAL,
				     "task '%s' has %zu outputs: pass the directory that holds "
				     "them, not one file",
				     task->id, task->n_outputs);
	}
	outputs = calloc(spec->n_cases, sizeof(*outputs));
	oracles = calloc(spec->n_cases, sizeof(*oracles));
	if (!outputs || !oracles) {
		r = sbx_error_set(err, -ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < spec->n_cases; i++) {
		const sbx_grading_case *gc = &spec->cases[i];
		const char *o = gc->output ? gc->output : task->outputs[0];

		outputs[i] = strdup(dirfd >= 0 ? o : output);
		if (asprintf(&oracles[i], "%s/%s", task->dir ? task->dir : ".",
			     gc->oracle ? gc->oracle : task->oracles[0]) < 0)
			oracles[i] = NULL;
		if (!outputs[i] || !oracles[i]) {
			r = sbx_error_set(err, -ENOMEM, "out of memory");
			goto done;
		}
	}
	r = grade_cases(spec, dirfd, (const char *const *)outputs, (const char *const *)oracles,
			out, err);
done:
	sbx_strv_free_n(outputs, spec->n_cases);
	sbx_strv_free_n(oracles, spec->n_cases);
	return r;
}

/* SPDX-License-Identifier: MIT */
/*
 * Grades FILE against itself (or ORACLE) with the grader library (default
 * options: tolerance 0.01, trimmed text, empty oracle cells skipped) and
 * prints the wall time, the cell counts and the peak RSS (getrusage).
 * With --read, only reads FILE once (the reader's share of a grade); with
 * --compare, reads both first and times the comparison alone.
 * Usage: grade_bench [--read | --compare] FILE [ORACLE]
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "sbx/grade.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	sbx_grading_opts opts = {
		.abs_tol = 0.01,
		.round_digits = -1,
		.trim = true,
		.numeric_strings = true,
		.skip_empty = true,
		.pass_threshold = 1.0,
	};
	sbx_grading_case gc = {.name = (char *)"bench", .opts = opts};
	sbx_grading_spec spec = {.cases = &gc, .n_cases = 1};
	sbx_error err = SBX_ERROR_INIT;
	sbx_grade_result *res = NULL;
	bool read_only = argc > 1 && strcmp(argv[1], "--read") == 0;
	bool compare_only = argc > 1 && strcmp(argv[1], "--compare") == 0;
	struct rusage ru;
	double t0;

	argv += read_only || compare_only;
	argc -= read_only || compare_only;
	if (argc < 2) {
		fprintf(stderr, "Usage: grade_bench [--read | --compare] FILE [ORACLE]\n");
		return 2;
	}
	const char *out[] = {argv[1]}, *ora[] = {argc > 2 ? argv[2] : argv[1]};

	t0 = now();
	if (read_only) {
		sbx_book *b = NULL;

		if (sbx_book_open(argv[1], NULL, &b, &err) < 0) {
			fprintf(stderr, "grade_bench: %s\n", err.msg);
			return 1;
		}
		printf("read one file: %.3f s, %llu cells\n", now() - t0,
		       (unsigned long long)sbx_sheet_cell_count(sbx_book_sheet(b, 0)));
		sbx_book_free(b);
	} else if (compare_only) {
		sbx_book *a = NULL, *e = NULL;
		sbx_grade_case_result cr;

		if (sbx_book_open(out[0], NULL, &a, &err) < 0 ||
		    sbx_book_open(ora[0], NULL, &e, &err) < 0) {
			fprintf(stderr, "grade_bench: %s\n", err.msg);
			return 1;
		}
		t0 = now();
		if (sbx_grade_books(&opts, a, NULL, e, &cr, &err) < 0) {
			fprintf(stderr, "grade_bench: %s\n", err.msg);
			return 1;
		}
		printf("compare only: %.3f s, %llu cells graded\n", now() - t0,
		       (unsigned long long)cr.graded);
		sbx_grade_case_result_clear(&cr);
		sbx_book_free(a);
		sbx_book_free(e);
	} else {
		/* The whole grade: both files read (in parallel), compared, reported. */
		if (sbx_grade_files(&spec, out, ora, &res, &err) < 0) {
			fprintf(stderr, "grade_bench: %s\n", err.msg);
			return 1;
		}
		printf("grade (2 reads + compare): %.3f s\n", now() - t0);
		printf("cells graded: %llu, matched %llu, status %s\n",
		       (unsigned long long)res->graded, (unsigned long long)res->matched,
		       sbx_grade_status_name(res->status));
		sbx_grade_result_free(res);
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS: %.1f MiB\n", ru.ru_maxrss / 1024.0);
	return 0;
}

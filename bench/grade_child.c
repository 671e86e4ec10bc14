/* SPDX-License-Identifier: MIT */
/*
 * What grading in a child process costs (sbx_run_grade_isolated, how every
 * episode is graded) against grading in process (sbx_run_grade_outputs), the
 * two interleaved in one run so the host's load hits both alike:
 *   bench-grade-child TASK.yaml OUTPUTS_DIR N PROGRAM...
 * (each PROGRAM a grading child: sandbox-grader, sandboxctl). Prints the
 * median, p90 and minimum of each, and each child's overhead at the median.
 * bench/grade_child.sh runs it on banking_reserve and a large sheet.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_median.h"
#include "sbx/clock.h"
#include "sbx/run.h"
#include "sbx/task.h"

static int grade_once(const char *program, const sbx_task *task, const char *outputs, double *ms)
{
	sbx_run_grade g = {0};
	sbx_error err = SBX_ERROR_INIT;
	double t0 = sbx_now_msf();
	int r = program ? sbx_run_grade_isolated(program, task, outputs, NULL, &g, &err)
			: sbx_run_grade_outputs(task, outputs, &g, &err);

	*ms = sbx_now_msf() - t0;
	if (r >= 0 && !g.graded)
		fprintf(stderr, "grade error: %s\n", g.error ? g.error : "?");
	else if (r < 0)
		fprintf(stderr, "grade: %s\n", sbx_error_message(&err));
	r = r < 0 || !g.graded ? -1 : 0;
	sbx_run_grade_clear(&g);
	return r;
}

static double report(const char *label, double *v, int n)
{
	double p50 = bench_median(v, n); /* sorts v */

	printf("  %-16s p50 %8.2f ms  p90 %8.2f ms  min %8.2f ms  (%d grades)\n", label, p50,
	       v[(n * 9) / 10], v[0], n);
	return p50;
}

int main(int argc, char **argv)
{
	sbx_task *task = NULL;
	sbx_error err = SBX_ERROR_INIT;
	int n = argc > 3 ? atoi(argv[3]) : 0, k = argc - 4;
	double *t, p_in;

	if (argc < 5 || n < 1 || n > 10000) {
		fprintf(stderr, "Usage: %s TASK.yaml OUTPUTS_DIR N PROGRAM...\n", argv[0]);
		return 2;
	}
	if (sbx_task_load(argv[1], &task, &err) < 0) {
		fprintf(stderr, "%s\n", sbx_error_message(&err));
		return 1;
	}
	/* t[0..n): in process; t[(j+1)*n ..): child j. Interleaved, round by round. */
	t = calloc((size_t)n * (size_t)(k + 1), sizeof(*t));
	if (!t)
		return 1;
	for (int i = 0; i < n; i++)
		for (int j = -1; j < k; j++)
			if (grade_once(j < 0 ? NULL : argv[4 + j], task, argv[2],
				       &t[(size_t)(j + 1) * (size_t)n + (size_t)i]) < 0)
				return 1;
	p_in = report("in process", t, n);
	for (int j = 0; j < k; j++) {
		const char *base = strrchr(argv[4 + j], '/');
		double p =
			report(base ? base + 1 : argv[4 + j], t + (size_t)(j + 1) * (size_t)n, n);

		printf("  %-16s overhead %+.2f ms at p50 (%.2fx)\n", "", p - p_in, p / p_in);
	}
	free(t);
	sbx_task_free(task);
	return 0;
}

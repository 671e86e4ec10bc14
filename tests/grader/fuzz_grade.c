/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the grader: a grading.yaml, an output and an oracle
 * (CSV), separated by lines of "%%". Any input must give a result whose
 * figures add up, or a one-line error; never a crash, leak or hang.
 *   scripts/fuzz.sh 60 fuzz-grade    (seeds: tests/data/fuzz/fuzz-grade/)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/grade.h"
#include "sbx/sheet.h"
#include "sbx/task.h"

#include "fuzz_sheet.h"

/* Splits data at the first "\n%%\n" after *pos; returns the part's length. */
static size_t next_part(const uint8_t *data, size_t size, size_t *pos, const uint8_t **part)
{
	static const char sep[] = "\n%%\n";
	size_t start = *pos;

	*part = data + start;
	for (size_t i = start; i + 4 <= size; i++)
		if (memcmp(data + i, sep, 4) == 0) {
			*pos = i + 4;
			return i - start;
		}
	*pos = size;
	return size - start;
}

static sbx_book *open_csv(const uint8_t *data, size_t len)
{
	sbx_sheet_open_options o = fuzz_sheet_options(SBX_FORMAT_CSV, 20000, 1 << 12);
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b = NULL;

	(void)sbx_book_open_memory(data, len, "fuzz.csv", &o, &b, &err);
	return b;
}

static void check_case(const sbx_grade_case_result *r)
{
	if (r->matched > r->graded || r->score < 0 || r->score > 1 || r->score != r->score)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *yaml, *out_csv, *oracle_csv;
	size_t pos = 0, yaml_len, out_len, oracle_len;
	sbx_grading_spec spec = {0};
	sbx_error err = SBX_ERROR_INIT;
	sbx_grading_opts defaults;

	yaml_len = next_part(data, size, &pos, &yaml);
	out_len = next_part(data, size, &pos, &out_csv);
	oracle_len = next_part(data, size, &pos, &oracle_csv);

	sbx_book *output = open_csv(out_csv, out_len);
	sbx_book *oracle = open_csv(oracle_csv, oracle_len);
	if (!oracle)
		goto done;

	sbx_grading_opts_init(&defaults);
	const sbx_grading_opts *opts = &defaults;
	if (sbx_grading_spec_parse("fuzz.yaml", (const char *)yaml, yaml_len, &spec, &err) == 0)
		opts = &spec.cases[0].opts;
	sbx_error_clear(&err);

	sbx_grade_result res = {0};
	sbx_grade_case_result cr = {0};
	if (sbx_grade_books(opts, output, output ? NULL : "missing", oracle, &cr, &err) == 0) {
		check_case(&cr);
		/* The reports must render whatever was found. */
		res.cases = &cr;
		res.n_cases = 1;
		sbx_grade_result_summarise(&res);
		sbx_buf text = SBX_BUF_INIT(1 << 20);
		(void)sbx_grade_report_text(&res, 20, &text);
		sbx_buf_free(&text);
		free(sbx_grade_report_json(&res));
		sbx_grade_case_result_clear(&cr);
	} else if (!err.msg[0] || strchr(err.msg, '\n')) {
		__builtin_trap(); /* every failure says why, on one line */
	}
	sbx_grading_opts_clear(&defaults);
done:
	sbx_grading_spec_clear(&spec);
	sbx_book_free(output);
	sbx_book_free(oracle);
	return 0;
}

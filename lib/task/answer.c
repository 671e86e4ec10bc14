/* SPDX-License-Identifier: MIT */
/*
 * The cells an agent must produce, read off a starting file and its oracle:
 * what the oracle has beyond the starting file's used range, when every
 * given cell is the same in both. `tasks import --answer-ranges` grades
 * those and gates the rest as unchanged, as our own tasks do (the reference
 * grades whole sheets, so an untouched workspace already scores).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "sbx/cleanup.h"
#include "sbx/sheet.h"
#include "sbx/sheet_ref.h"

static int push(char ***v, size_t *n, char *s, sbx_error *err)
{
	char **grown;

	if (!s)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	grown = realloc(*v, (*n + 2) * sizeof(**v));
	if (!grown) {
		free(s);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	*v = grown;
	grown[(*n)++] = s;
	grown[*n] = NULL;
	return 0;
}

static int add_range(char ***v, size_t *n, const char *sheet, uint32_t r0, uint32_t c0, uint32_t r1,
		     uint32_t c1, sbx_error *err)
{
	sbx_ref a = {.row = r0, .col = c0}, b = {.row = r1, .col = c1};

	return push(v, n, sbx_range_format(sheet, &a, &b), err);
}

/* Same value and formula, as text: what a given cell must still hold. */
static bool same_cell(const sbx_cell *a, const sbx_cell *b, sbx_buf *ta, sbx_buf *tb)
{
	bool same;

	if (a->kind != b->kind)
		return false;
	sbx_buf_reset(ta);
	sbx_buf_reset(tb);
	if (sbx_cell_to_text(a, ta) < 0 || sbx_cell_to_text(b, tb) < 0)
		return false;
	same = strcmp(sbx_buf_str(ta), sbx_buf_str(tb)) == 0;
	return same && ((!a->formula && !b->formula) ||
			(a->formula && b->formula && strcmp(a->formula, b->formula) == 0));
}

static int one_sheet(const sbx_sheet *os, const sbx_sheet *ss, char ***answer, size_t *na,
		     char ***inputs, size_t *ni, sbx_error *err)
{
	_cleanup_(sbx_buf_free) sbx_buf ta = SBX_BUF_INIT(1u << 20);
	_cleanup_(sbx_buf_free) sbx_buf tb = SBX_BUF_INIT(1u << 20);
	const char *name = sbx_sheet_name(os);
	uint32_t ro, co, rs = 0, cs = 0;
	int r = 0;

	sbx_sheet_used_range(os, &ro, &co);
	if (ss)
		sbx_sheet_used_range(ss, &rs, &cs);
	for (uint32_t i = 0; i < rs; i++)
		for (uint32_t j = 0; j < cs; j++) {
			sbx_cell a = SBX_CELL_INIT, b = SBX_CELL_INIT;
			char at[16];

			sbx_sheet_get(os, i, j, &a);
			sbx_sheet_get(ss, i, j, &b);
			if (!same_cell(&a, &b, &ta, &tb))
				return sbx_error_set(
					err, -EINVAL,
					"'%s'!%s differs between the starting file "
					"and the oracle: the agent changes given "
					"cells, so no range holds only answers",
					name, sbx_ref_format(&(sbx_ref){.row = i, .col = j}, at));
		}
	/* New columns to the right over every row, then new rows below the given columns. */
	if (co > cs && ro > 0)
		r = add_range(answer, na, name, 0, cs, (ro > rs ? ro : rs) - 1, co - 1, err);
	if (r >= 0 && ro > rs && cs > 0)
		r = add_range(answer, na, name, rs, 0, ro - 1, (co < cs ? co : cs) - 1, err);
	if (r >= 0 && rs > 0 && cs > 0)
		r = add_range(inputs, ni, name, 0, 0, rs - 1, cs - 1, err);
	return r;
}

int sbx_task__answer_ranges(const char *start_path, const char *oracle_path, char **sheets,
			    char ***answer_out, char ***inputs_out, sbx_error *err)
{
	sbx_sheet_open_options opts = SBX_SHEET_OPEN_OPTIONS_INIT;
	sbx_book *start = NULL, *oracle = NULL;
	char **answer = NULL, **inputs = NULL;
	size_t na = 0, ni = 0;
	int r;

	r = sbx_book_open(start_path, &opts, &start, err);
	if (r >= 0)
		r = sbx_book_open(oracle_path, &opts, &oracle, err);
	for (size_t i = 0; r >= 0 && i < (oracle ? sbx_book_sheet_count(oracle) : 0); i++) {
		const sbx_sheet *os = sbx_book_sheet(oracle, i);
		bool graded = !sheets;

		for (char **s = sheets; s && *s && !graded; s++)
			graded = strcmp(*s, sbx_sheet_name(os)) == 0;
		if (graded)
			r = one_sheet(os, sbx_book_find(start, sbx_sheet_name(os)), &answer, &na,
				      &inputs, &ni, err);
	}
	if (r >= 0 && na == 0)
		r = sbx_error_set(err, -EINVAL,
				  "the oracle adds no cells to the starting file: nothing to "
				  "grade as the answer");
	sbx_book_free(start);
	sbx_book_free(oracle);
	if (r < 0) {
		sbx_strv_free_n(answer, na);
		sbx_strv_free_n(inputs, ni);
		return r;
	}
	*answer_out = answer;
	*inputs_out = inputs;
	return 0;
}

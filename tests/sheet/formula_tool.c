/* SPDX-License-Identifier: MIT */
/*
 * Helper for the differential test against LibreOffice
 * (test_formula_libreoffice.py):
 *   formula_tool build FORMULAS OUT.ods   the fixture book plus sheet F whose
 *                                         column A holds one formula per line
 *                                         of FORMULAS, without values
 *   formula_tool native FILE              recalculates natively and prints
 *                                         sheet F: row, kind, value (TSV)
 *   formula_tool dump FILE                prints sheet F's cached values
 * A kind of "unsupported" means the evaluator declined (value: the reason).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/formula.h"
#include "sbx/sheet.h"

static int fail(const sbx_error *err)
{
	fprintf(stderr, "formula_tool: %s\n", sbx_error_message(err));
	return 1;
}

#define CHECK(x)                                                                                   \
	do {                                                                                       \
		if ((x) < 0)                                                                       \
			return fail(&err);                                                         \
	} while (0)

/*
 * Data: A numbers, B text (some numeric text, some blank), C a mix of
 * numbers, text, booleans and blanks, D formulas (errors among them), E
 * ascending keys, F labels for them. 'Other Sheet'!A1:A5 numbers.
 */
static int fixture(sbx_book *b)
{
	static const double nums[] = {3,   -1.5, 0,    12.25, 7,    100, 2.675, -40, 0.1,   5,
				      1e6, 8,	 -0.5, 33,    1234, 9,	 0.3,	2,   -7.75, 11};
	static const char *const words[] = {"apple", "Banana", "cherry", "42",	   "  pad  ",
					    "",	     "date",   "APPLE",	 "x y z",  "3.5",
					    "kiwi",  "lime",   "",	 "mango",  "Nut",
					    "olive", "pear",   "7",	 "quince", "rose"};
	static const char *const dforms[] = {"=A1*2",	  "=A2+A3",	 "=1/0",	"=NA()",
					     "=B1&\"!\"", "=A4>A5",	 "=SUM(A1:A5)", "=C2",
					     "=\"\"",	  "=ROUND(A7,2)"};
	sbx_error err = SBX_ERROR_INIT;
	sbx_sheet *d, *o;

	CHECK(sbx_book_add_sheet(b, "Data", SIZE_MAX, &d, &err));
	CHECK(sbx_book_add_sheet(b, "Other Sheet", SIZE_MAX, &o, &err));
	for (uint32_t i = 0; i < 20; i++) {
		CHECK(sbx_sheet_set_number(d, i, 0, nums[i], &err));
		if (words[i][0])
			CHECK(sbx_sheet_set_string(d, i, 1, words[i], &err));
		switch (i % 5) {
		case 0:
			CHECK(sbx_sheet_set_number(d, i, 2, i * 1.5, &err));
			break;
		case 1:
			CHECK(sbx_sheet_set_string(
				d, i, 2, words[(i * 7) % 20][0] ? words[(i * 7) % 20] : "w", &err));
			break;
		case 2:
			CHECK(sbx_sheet_set_bool(d, i, 2, i % 2, &err));
			break;
		case 3:
			break; /* blank */
		default:
			CHECK(sbx_sheet_set_number(d, i, 2, -(double)i, &err));
			break;
		}
		if (i < SBX_ELEMENTSOF(dforms))
			CHECK(sbx_sheet_set_formula(d, i, 3, dforms[i], NULL, &err));
		CHECK(sbx_sheet_set_number(d, i, 4, i * 10.0 - 50, &err));
		char label[16];
		snprintf(label, sizeof(label), "k%02u", i);
		CHECK(sbx_sheet_set_string(d, i, 5, label, &err));
	}
	for (uint32_t i = 0; i < 5; i++)
		CHECK(sbx_sheet_set_number(o, i, 0, (i + 1) * 1.25, &err));
	return 0;
}

static int build(const char *list, const char *out)
{
	sbx_error err = SBX_ERROR_INIT;
	_cleanup_book_ sbx_book *b = NULL;
	sbx_sheet *f;
	FILE *in = fopen(list, "re");
	char *line = NULL;
	size_t cap = 0;
	uint32_t row = 0;
	ssize_t n;

	if (!in) {
		perror(list);
		return 1;
	}
	CHECK(sbx_book_new(SBX_FORMAT_ODS, &b, &err));
	if (fixture(b))
		return 1;
	CHECK(sbx_book_add_sheet(b, "F", SIZE_MAX, &f, &err));
	while ((n = getline(&line, &cap, in)) > 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n > 0)
			CHECK(sbx_sheet_set_formula(f, row, 0, line, NULL, &err));
		row++;
	}
	free(line);
	fclose(in);
	CHECK(sbx_book_save(b, out, SBX_FORMAT_ODS, &err));
	return 0;
}

static void put_value(sbx_cell_kind kind, double num, const char *text)
{
	printf("%s\t", sbx_cell_kind_name(kind));
	if (text) {
		for (const char *p = text; *p; p++)
			if (*p == '\n' || *p == '\t')
				fputs(*p == '\n' ? "\\n" : "\\t", stdout);
			else
				putchar(*p);
	} else {
		printf("%.17g", num);
	}
	putchar('\n');
}

static int native(const char *path)
{
	sbx_error err = SBX_ERROR_INIT;
	_cleanup_book_ sbx_book *b = NULL;
	sbx_recalc_stats st;
	sbx_sheet *f;
	sbx_cell c;

	CHECK(sbx_book_open(path, NULL, &b, &err));
	CHECK(sbx_book_recalc(b, NULL, &st, &err));
	f = sbx_book_find(b, "F");
	if (!f)
		return 1;
	uint32_t rows, cols;
	sbx_sheet_used_range(f, &rows, &cols);
	for (uint32_t r = 0; r < rows; r++) {
		sbx_formula_value v;
		sbx_error e2 = SBX_ERROR_INIT;

		sbx_sheet_get(f, r, 0, &c);
		if (!c.formula)
			continue;
		printf("%u\t", r + 1);
		int rc = sbx_formula_eval(f, r, 0, c.formula, &v, &e2);
		if (rc == -EOPNOTSUPP) {
			printf("unsupported\t%s\n", e2.msg);
			continue;
		}
		if (rc < 0)
			return fail(&e2);
		/* The book walk and the single evaluation must agree. */
		if (c.kind != v.kind ||
		    (v.text ? strcmp(v.text, c.text ? c.text : "") != 0 : c.number != v.number)) {
			fprintf(stderr, "row %u: recalc and eval differ for %s\n", r + 1,
				c.formula);
			return 1;
		}
		put_value(v.kind, v.number, v.text);
		sbx_formula_value_clear(&v);
	}
	fprintf(stderr, "formulas %llu computed %llu unsupported %llu cycles %llu steps %llu\n",
		(unsigned long long)st.formulas, (unsigned long long)st.computed,
		(unsigned long long)st.unsupported, (unsigned long long)st.cycles,
		(unsigned long long)st.steps);
	return 0;
}

static int dump(const char *path)
{
	sbx_error err = SBX_ERROR_INIT;
	_cleanup_book_ sbx_book *b = NULL;
	sbx_sheet *f;
	sbx_sheet_iter it = SBX_SHEET_ITER_INIT;
	uint32_t r, col;
	sbx_cell c;

	CHECK(sbx_book_open(path, NULL, &b, &err));
	f = sbx_book_find(b, "F");
	if (!f)
		return 1;
	while (sbx_sheet_next(f, &it, &r, &col, &c)) {
		if (col != 0)
			continue;
		printf("%u\t", r + 1);
		put_value(c.kind, c.number, c.text);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "build") == 0)
		return build(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "native") == 0)
		return native(argv[2]);
	if (argc == 3 && strcmp(argv[1], "dump") == 0)
		return dump(argv[2]);
	fprintf(stderr, "usage: formula_tool build FORMULAS OUT.ods | native FILE | dump FILE\n");
	return 2;
}

/* SPDX-License-Identifier: MIT */
/*
 * Native recalculation figures (bench/formula.sh runs it):
 *   formula_bench quarterly FILE.ods OUT.ods   the quarterly_totals answer as
 *                                              formulas (13 cells) into FILE's
 *                                              book, saved without values to OUT
 *   formula_bench gen N OUT.ods                a generated sheet of N formula
 *                                              cells (4 per row: arithmetic,
 *                                              a running total, IF/ROUND, a lookup)
 *   formula_bench recalc FILE [REPEAT [OUT]]   REPEAT times (default 5): opens
 *                                              FILE, recalculates natively and,
 *                                              with OUT, saves to OUT; prints
 *                                              the medians of recalculation and
 *                                              of load + recalc + save
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_median.h"
#include "sbx/clock.h"
#include "sbx/formula.h"
#include "sbx/sheet.h"

/* CPU time is the stable figure on a shared machine. */
static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int die(const sbx_error *err)
{
	fprintf(stderr, "formula_bench: %s\n", sbx_error_message(err));
	return 1;
}

static int quarterly(const char *in, const char *out)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b;
	sbx_sheet *s;
	char f[64];

	if (sbx_book_open(in, NULL, &b, &err) < 0)
		return die(&err);
	s = sbx_book_find(b, "Sales");
	if (!s)
		return 1;
	sbx_sheet_set_string(s, 0, 5, "Total", &err);
	for (uint32_t r = 1; r <= 8; r++) {
		snprintf(f, sizeof(f), "=SUM(B%u:E%u)", r + 1, r + 1);
		sbx_sheet_set_formula(s, r, 5, f, NULL, &err);
	}
	for (uint32_t c = 1; c <= 5; c++) {
		char col[4];
		sbx_ref_col_name(c, col);
		snprintf(f, sizeof(f), "=SUM(%s2:%s9)", col, col);
		sbx_sheet_set_formula(s, 9, c, f, NULL, &err);
	}
	if (sbx_book_save(b, out, SBX_FORMAT_ODS, &err) < 0)
		return die(&err);
	sbx_book_free(b);
	return 0;
}

static int gen(long n, const char *out)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b;
	sbx_sheet *s;
	char f[128];
	uint32_t rows = (uint32_t)((n + 3) / 4);

	if (sbx_book_new(SBX_FORMAT_ODS, &b, &err) < 0 ||
	    sbx_book_add_sheet(b, "Data", SIZE_MAX, &s, &err) < 0)
		return die(&err);
	for (uint32_t r = 0; r < rows; r++) {
		uint32_t row = r + 1;
		sbx_sheet_set_number(s, r, 0, (double)((r * 7919) % 1000) / 10.0, &err);
		snprintf(f, sizeof(f), "=A%u*2+1", row);
		sbx_sheet_set_formula(s, r, 1, f, NULL, &err);
		if (r == 0)
			snprintf(f, sizeof(f), "=B1");
		else
			snprintf(f, sizeof(f), "=C%u+B%u", row - 1, row);
		sbx_sheet_set_formula(s, r, 2, f, NULL, &err);
		snprintf(f, sizeof(f), "=IF(B%u>100,ROUND(B%u/3,2),\"low\")", row, row);
		sbx_sheet_set_formula(s, r, 3, f, NULL, &err);
		snprintf(f, sizeof(f), "=VLOOKUP(MOD(%u,50)+1,$A$1:$B$50,2,FALSE)", r);
		sbx_sheet_set_formula(s, r, 4, f, NULL, &err);
	}
	if (sbx_book_save(b, out, SBX_FORMAT_ODS, &err) < 0)
		return die(&err);
	sbx_book_free(b);
	return 0;
}

/*
 * Each run opens FILE, recalculates and saves the book to OUT (what a
 * LibreOffice --convert-to round trip does: load, recalculate, save), timing
 * each step. Prints the medians of recalculation alone and of the whole
 * round trip, and a last "native-ms" line for bench/formula.sh.
 */
static int recalc(const char *path, int repeat, const char *out)
{
	sbx_error err = SBX_ERROR_INIT;
	double load[64], calc[64], save[64], all[64], calc_cpu[64], all_cpu[64];
	sbx_recalc_stats st = {0};

	if (repeat < 1 || repeat > 64)
		repeat = 5;
	for (int i = 0; i < repeat; i++) {
		sbx_book *b;
		double t0 = sbx_now_msf(), c0 = cpu_ms(), t1, c1, t2;

		if (sbx_book_open(path, NULL, &b, &err) < 0)
			return die(&err);
		t1 = sbx_now_msf();
		c1 = cpu_ms();
		if (sbx_book_recalc(b, NULL, &st, &err) < 0)
			return die(&err);
		t2 = sbx_now_msf();
		calc_cpu[i] = cpu_ms() - c1;
		if (out && sbx_book_save(b, out, SBX_FORMAT_ODS, &err) < 0)
			return die(&err);
		sbx_book_free(b);
		load[i] = t1 - t0;
		calc[i] = t2 - t1;
		save[i] = sbx_now_msf() - t2;
		all[i] = sbx_now_msf() - t0;
		all_cpu[i] = cpu_ms() - c0;
	}
	printf("native: %llu formula cells (%llu computed, %llu unsupported), median of %d runs\n",
	       (unsigned long long)st.formulas, (unsigned long long)st.computed,
	       (unsigned long long)st.unsupported, repeat);
	printf("  recalc only:                %9.3f ms wall, %9.3f ms CPU\n",
	       bench_median(calc, repeat), bench_median(calc_cpu, repeat));
	if (!out)
		return 0;
	printf("  load (%8.3f) + recalc + save (%8.3f) = %9.3f ms wall, %9.3f ms CPU\n",
	       bench_median(load, repeat), bench_median(save, repeat), bench_median(all, repeat),
	       bench_median(all_cpu, repeat));
	printf("native-ms %.3f %.3f\n", bench_median(all, repeat), bench_median(calc, repeat));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "quarterly") == 0)
		return quarterly(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "gen") == 0)
		return gen(atol(argv[2]), argv[3]);
	if (argc >= 3 && argc <= 5 && strcmp(argv[1], "recalc") == 0)
		return recalc(argv[2], argc >= 4 ? atoi(argv[3]) : 5, argc == 5 ? argv[4] : NULL);
	fprintf(stderr, "usage: formula_bench quarterly IN OUT | gen N OUT | recalc FILE [REPEAT "
			"[OUT.ods]]\n");
	return 2;
}

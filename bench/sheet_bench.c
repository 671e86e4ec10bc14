/* SPDX-License-Identifier: MIT */
/*
 * Reader benchmark for lib/sheet (not a test): prints figures.
 *
 *   sheet_bench gen FILE.ods [ROWS] [COLS]   write a ROWS x COLS sheet (default 100000 x 10:
 *                                            numbers, strings, dates, a formula column)
 *   sheet_bench read FILE                    read it, print time, cells and peak RSS
 *
 * bench/sheet_1m.sh runs both and compares with odfpy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_book.h"
#include "sbx/sheet.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int gen(const char *path, uint32_t rows, uint32_t cols)
{
	sbx_error err = SBX_ERROR_INIT;
	_cleanup_book_ sbx_book *b = NULL;
	sbx_sheet *s;
	char text[64], f[64];
	uint64_t x = 42;

	if (bench_header_book(cols, &b, &s, &err) < 0)
		goto fail;
	for (uint32_t r = 1; r < rows; r++) {
		for (uint32_t c = 0; c < cols; c++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			double v = (double)(x >> 11) / (double)(1ULL << 53) * 100000.0;
			int rc;
			if (c == 1) {
				snprintf(text, sizeof(text), "Item %llu",
					 (unsigned long long)(x >> 50));
				rc = sbx_sheet_set_string(s, r, c, text, &err);
			} else if (c == 2) {
				sbx_cell d = {SBX_CELL_DATE, 40000 + (double)(r % 3000), NULL,
					      NULL};
				rc = sbx_sheet_set(s, r, c, &d, &err);
			} else if (c == cols - 1 && cols > 3) {
				sbx_cell cached = {SBX_CELL_NUMBER, 0, NULL, NULL};
				sbx_sheet_get(s, r, 0, &cached);
				cached.number *= 2;
				cached.formula = NULL;
				snprintf(f, sizeof(f), "=A%u*2", r + 1);
				rc = sbx_sheet_set_formula(s, r, c, f, &cached, &err);
			} else {
				rc = sbx_sheet_set_number(s, r, c,
							  (double)(long long)(v * 100) / 100, &err);
			}
			if (rc < 0)
				goto fail;
		}
	}
	if (sbx_book_save(b, path, SBX_FORMAT_AUTO, &err) < 0)
		goto fail;
	printf("wrote %s: %u x %u = %llu cells\n", path, rows, cols,
	       (unsigned long long)rows * cols);
	return 0;
fail:
	fprintf(stderr, "sheet_bench: %s\n", sbx_error_message(&err));
	return 1;
}

static int bench_read(const char *path)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b = NULL;
	struct rusage ru;
	uint64_t cells = 0;
	double t0 = now(), t1;

	if (sbx_book_open(path, NULL, &b, &err) < 0) {
		fprintf(stderr, "sheet_bench: %s\n", sbx_error_message(&err));
		return 1;
	}
	t1 = now();
	for (size_t i = 0; i < sbx_book_sheet_count(b); i++)
		cells += sbx_sheet_cell_count(sbx_book_sheet(b, i));
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	printf("read %s: %llu cells in %.3f s wall, %.3f s CPU, peak RSS %.1f MiB\n", path,
	       (unsigned long long)cells, t1 - t0, cpu, (double)ru.ru_maxrss / 1024.0);
	sbx_book_free(b);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "gen") == 0)
		return gen(argv[2], argc > 3 ? (uint32_t)atoi(argv[3]) : 100000,
			   argc > 4 ? (uint32_t)atoi(argv[4]) : 10);
	if (argc == 3 && strcmp(argv[1], "read") == 0)
		return bench_read(argv[2]);
	fprintf(stderr, "usage: sheet_bench gen FILE [ROWS [COLS]] | read FILE\n");
	return 2;
}

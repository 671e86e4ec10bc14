/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen.h"

uint64_t gen_next(gen_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int64_t gen_int(gen_rng *r, int64_t lo, int64_t hi)
{
	uint64_t span = (uint64_t)(hi - lo) + 1;

	return lo + (int64_t)(gen_next(r) % span);
}

double gen_decimal(gen_rng *r, double lo, double hi, int decimals)
{
	double scale = pow(10, decimals);
	int64_t a = (int64_t)llround(lo * scale), b = (int64_t)llround(hi * scale);

	return (double)gen_int(r, a, b) / scale;
}

double gen_round(double v, int decimals)
{
	double scale = pow(10, decimals);

	return round(v * scale) / scale;
}

void gen_check(int r, const sbx_error *err, const char *what)
{
	if (r >= 0)
		return;
	fprintf(stderr, "generator: %s: %s\n", what, err ? sbx_error_message(err) : strerror(-r));
	exit(1);
}

sbx_book *gen_book(const char *name, sbx_sheet **sheet)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b = NULL;

	gen_check(sbx_book_new(SBX_FORMAT_ODS, &b, &err), &err, "new book");
	gen_check(sbx_book_add_sheet(b, name, SIZE_MAX, sheet, &err), &err, "add sheet");
	return b;
}

void gen_save(sbx_book *b, const char *dir, const char *rel)
{
	sbx_error err = SBX_ERROR_INIT;
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	gen_check(sbx_book_save(b, path, SBX_FORMAT_ODS, &err), &err, path);
	sbx_book_free(b);
}

int main(int argc, char **argv)
{
	char path[4096];

	if (argc != 2) {
		fprintf(stderr, "Usage: %s DIR\nWrites DIR/files/* and DIR/oracle/*.\n", argv[0]);
		return 2;
	}
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", argv[1], i ? "oracle" : "files");
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "generator: '%s': %s\n", path, strerror(errno));
			return 1;
		}
	}
	gen_task(argv[1]);
	return 0;
}

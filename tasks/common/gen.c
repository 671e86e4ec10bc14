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

void gen_shuffle(gen_rng *r, uint32_t *v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		v[i] = i;
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = (uint32_t)gen_int(r, 0, i - 1), t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

void gen_check(gen_ctx *g, int r, const sbx_error *err, const char *what)
{
	if (r >= 0)
		return;
	sbx_error_set(&g->err, r, "generator: %s: %s", what,
		      err && err->msg[0] ? sbx_error_message(err) : strerror(-r));
	g->r = r;
	longjmp(g->fail, 1);
}

static void track(gen_ctx *g, sbx_book *b)
{
	for (size_t i = 0; i < GEN_MAX_BOOKS; i++)
		if (!g->books[i]) {
			g->books[i] = b;
			return;
		}
	sbx_book_free(b);
	gen_check(g, -ENOSPC, NULL, "too many open books");
}

sbx_book *gen_book(gen_ctx *g, const char *name, sbx_sheet **sheet)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b = NULL;

	gen_check(g, sbx_book_new(SBX_FORMAT_ODS, &b, &err), &err, "new book");
	track(g, b);
	gen_check(g, sbx_book_add_sheet(b, name, SIZE_MAX, sheet, &err), &err, "add sheet");
	return b;
}

sbx_sheet *gen_sheet(gen_ctx *g, sbx_book *b, const char *name)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_sheet *s = NULL;

	gen_check(g, sbx_book_add_sheet(b, name, SIZE_MAX, &s, &err), &err, "add sheet");
	return s;
}

void gen_str(gen_ctx *g, sbx_sheet *s, uint32_t row, uint32_t col, const char *v)
{
	sbx_error err = SBX_ERROR_INIT;

	gen_check(g, sbx_sheet_set_string(s, row, col, v, &err), &err, v);
}

void gen_headers(gen_ctx *g, sbx_sheet *start, sbx_sheet *oracle, const char *const *headers,
		 uint32_t n_start, uint32_t n)
{
	for (uint32_t c = 0; c < n; c++) {
		if (c < n_start)
			gen_str(g, start, 0, c, headers[c]);
		gen_str(g, oracle, 0, c, headers[c]);
	}
}

void gen_num(gen_ctx *g, sbx_sheet *s, uint32_t row, uint32_t col, double v)
{
	sbx_error err = SBX_ERROR_INIT;

	gen_check(g, sbx_sheet_set_number(s, row, col, v, &err), &err, "number");
}

void gen_formula(gen_ctx *g, sbx_sheet *s, uint32_t row, uint32_t col, const char *f, double v)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_cell cached = {.kind = SBX_CELL_NUMBER, .number = v};

	gen_check(g, sbx_sheet_set_formula(s, row, col, f, &cached, &err), &err, f);
}

void gen_str2(gen_ctx *g, sbx_sheet *a, sbx_sheet *b, uint32_t row, uint32_t col, const char *v)
{
	gen_str(g, a, row, col, v);
	gen_str(g, b, row, col, v);
}

void gen_num2(gen_ctx *g, sbx_sheet *a, sbx_sheet *b, uint32_t row, uint32_t col, double v)
{
	gen_num(g, a, row, col, v);
	gen_num(g, b, row, col, v);
}

static sbx_sheet_format format_of(const char *rel)
{
	const char *dot = strrchr(rel, '.');

	if (dot && strcmp(dot, ".xlsx") == 0)
		return SBX_FORMAT_XLSX;
	if (dot && strcmp(dot, ".csv") == 0)
		return SBX_FORMAT_CSV;
	return SBX_FORMAT_ODS;
}

void gen_save(gen_ctx *g, sbx_book *b, const char *rel)
{
	sbx_error err = SBX_ERROR_INIT;
	char path[4096];
	int r;

	snprintf(path, sizeof(path), "%s/%s", g->dir, rel);
	for (size_t i = 0; i < GEN_MAX_BOOKS; i++)
		if (g->books[i] == b)
			g->books[i] = NULL;
	r = sbx_book_save(b, path, format_of(rel), &err);
	sbx_book_free(b);
	gen_check(g, r, &err, path);
}

/* splitmix64's finaliser: nearby seeds give unrelated streams. */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int gen_run(const gen_def *def, const uint64_t *seed, const char *dir, sbx_error *err)
{
	gen_ctx *g = calloc(1, sizeof(*g));
	char path[4096];
	volatile int r = 0;

	if (!g)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, i ? "oracle" : "files");
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			r = sbx_error_set(err, -errno, "generator: '%s': %s", path,
					  strerror(errno));
			free(g);
			return r;
		}
	}
	g->dir = dir;
	g->rng.state = seed ? def->seed ^ mix(*seed + 0x9e3779b97f4a7c15ull) : def->seed;
	if (setjmp(g->fail) == 0) {
		def->run(g);
	} else {
		r = g->r;
		sbx_error_set(err, r, "%s", g->err.msg);
	}
	for (size_t i = 0; i < GEN_MAX_BOOKS; i++)
		sbx_book_free(g->books[i]);
	free(g);
	return r;
}

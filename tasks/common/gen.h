/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Helpers for the task generators, which are compiled into sandboxctl (lib/task
 * runs them for `run --seed` and `tasks generate`). Each tasks/<id>/gen.c
 * defines GEN_TASK(id, SEED) { ... }: it draws from g->rng (splitmix64, so
 * every platform draws the same numbers) and writes the starting files and
 * the oracle beneath g->dir with the ODS/XLSX/CSV writers, which give the
 * same bytes every time. Without a seed, g->rng starts at SEED: the committed
 * files; with one, at a mix of both: a fresh instance.
 *
 * A failing call (out of memory, disk full) jumps back to the runner, which
 * frees the books still open: generators have no error paths of their own.
 */

#include <setjmp.h>
#include <stdint.h>

#include "sbx/sheet.h"

typedef struct gen_rng {
	uint64_t state;
} gen_rng;

#define GEN_MAX_BOOKS 8

typedef struct gen_ctx {
	gen_rng rng;
	const char *dir;
	jmp_buf fail;
	sbx_error err;
	int r;
	sbx_book *books[GEN_MAX_BOOKS]; /* open books, freed by the runner on failure */
} gen_ctx;

typedef struct gen_def {
	const char *id;
	uint64_t seed; /* the committed files' seed */
	void (*run)(gen_ctx *g);
} gen_def;

#define GEN_TASK(id, seed_)                                                                        \
	static void gen_run_##id(gen_ctx *g);                                                      \
	const gen_def gen_def_##id = {#id, seed_, gen_run_##id};                                   \
	static void gen_run_##id(gen_ctx *g)

uint64_t gen_next(gen_rng *r);

/* Uniform integer in [lo, hi]. */
int64_t gen_int(gen_rng *r, int64_t lo, int64_t hi);

/* Uniform in [lo, hi] on a grid of 10^-decimals (so values are exact decimals). */
double gen_decimal(gen_rng *r, double lo, double hi, int decimals);

/* Rounds half away from zero to decimals places, as the agent is told to. */
double gen_round(double v, int decimals);

/* Shuffles n indexes into v (Fisher-Yates). */
void gen_shuffle(gen_rng *r, uint32_t *v, uint32_t n);

/* Jumps back to the runner when r < 0 (err says why). */
void gen_check(gen_ctx *g, int r, const sbx_error *err, const char *what);

/* A new book with one sheet named name; *sheet receives it. */
sbx_book *gen_book(gen_ctx *g, const char *name, sbx_sheet **sheet);

/* Adds another sheet to b. */
sbx_sheet *gen_sheet(gen_ctx *g, sbx_book *b, const char *name);

/* Cell setters that jump back on failure. */
void gen_str(gen_ctx *g, sbx_sheet *s, uint32_t row, uint32_t col, const char *v);
void gen_num(gen_ctx *g, sbx_sheet *s, uint32_t row, uint32_t col, double v);
/* A formula (A1 style, "=SUM(B2:E2)") with its cached number. */
void gen_formula(gen_ctx *g, sbx_sheet *s, uint32_t row, uint32_t col, const char *f, double v);
/* Same text or number into both sheets (a starting file and its oracle). */
void gen_str2(gen_ctx *g, sbx_sheet *a, sbx_sheet *b, uint32_t row, uint32_t col, const char *v);
void gen_num2(gen_ctx *g, sbx_sheet *a, sbx_sheet *b, uint32_t row, uint32_t col, double v);

/* Row 1: the first n_start of the n headers into start, all n into oracle (the columns the
 * agent adds come last). */
void gen_headers(gen_ctx *g, sbx_sheet *start, sbx_sheet *oracle, const char *const *headers,
		 uint32_t n_start, uint32_t n);

/* Saves the book as g->dir/rel (format from the extension: .ods .xlsx .csv), then frees it. */
void gen_save(gen_ctx *g, sbx_book *b, const char *rel);

/*
 * Runs def into dir (dir/files and dir/oracle are made): seed NULL gives the
 * committed files. Returns 0 or the failing call's negative errno (err set).
 */
int gen_run(const gen_def *def, const uint64_t *seed, const char *dir, sbx_error *err);

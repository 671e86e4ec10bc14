/* SPDX-License-Identifier: MIT */
/*
 * The parser's state and the helpers its files share (formula_parse.c, the
 * expressions; formula_parse_ref.c, the references). Internal to
 * lib/formula's parser.
 */
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formula-internal.h"

typedef struct parser {
	const sbx_book *book;
	uint32_t self;
	const char *text, *p;
	fx_formula *f;
	fx_origin *origins; /* traced: one per node */
	bool traced;
	int depth; /* parentheses, calls, unary and postfix operators open around ps->p */
	bool oom;
	/* Arguments of the calls being parsed, innermost last (not on the C stack). */
	uint32_t *pending;
	uint32_t n_pending, pending_cap;
} parser;

static inline void unsupported(parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void unsupported(parser *ps, const char *fmt, ...)
{
	va_list ap;

	if (ps->f->unsupported)
		return;
	ps->f->unsupported = true;
	ps->f->why = malloc(FX_WHY_MAX);
	if (!ps->f->why) {
		ps->oom = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(ps->f->why, FX_WHY_MAX, fmt, ap);
	va_end(ap);
}

static inline bool grow_origins(parser *ps, uint32_t cap)
{
	fx_origin *o = realloc(ps->origins, cap * sizeof(*o));

	if (!o)
		return false;
	ps->origins = o;
	return true;
}

static inline uint32_t node_new(parser *ps, fx_op op)
{
	fx_formula *f = ps->f;

	if (f->n == f->cap) {
		uint32_t cap = f->cap ? f->cap * 2 : 8;
		fx_node *n = realloc(f->nodes, cap * sizeof(*n));
		if (n)
			f->nodes = n;
		if (!n || (ps->traced && !grow_origins(ps, cap))) {
			ps->oom = true;
			return 0;
		}
		f->cap = cap;
	}
	f->nodes[f->n] = (fx_node){.op = op, .fn = -1};
	if (ps->traced)
		ps->origins[f->n] = (fx_origin){.pos = {UINT32_MAX, UINT32_MAX}};
	return f->n++;
}

/* Records where node i's tokens were (traced parses only). */
static inline void origin_set(parser *ps, uint32_t i, const char *p0, const char *p1,
			      const uint32_t raw[4])
{
	fx_origin *o;

	if (!ps->traced || ps->oom)
		return;
	o = &ps->origins[i];
	o->pos[0] = (uint32_t)(p0 - ps->text);
	o->pos[1] = p1 ? (uint32_t)(p1 - ps->text) : UINT32_MAX;
	if (raw)
		memcpy(o->raw, raw, sizeof(o->raw));
}

static inline void skip_space(parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

/* The length of the word at p (a name, a reference's part). */
static inline size_t word_len(const char *p)
{
	size_t n = 0;

	while (sbx_ref_word_char(p[n]))
		n++;
	return n;
}

/*
 * A reference at ps->p (a cell, a range, whole columns or rows, with a
 * sheet prefix) as a node: its index, or UINT32_MAX with nothing consumed
 * when the text is not a reference (formula_parse_ref.c).
 */
uint32_t sbx_fx__parse_ref(parser *ps);

/* SPDX-License-Identifier: MIT */
/*
 * Formula text -> node array, by recursive descent with LibreOffice's
 * precedence. Sheet names are resolved against the book here, so evaluation
 * never looks a name up. Anything outside the subset (named ranges, inline
 * arrays, 3-D references, unknown functions) marks the formula unsupported
 * rather than failing: the caller decides whether LibreOffice computes it.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "formula-internal.h"
#include "sbx/cleanup.h"

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

static void unsupported(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void unsupported(parser *ps, const char *fmt, ...)
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

static bool grow_origins(parser *ps, uint32_t cap)
{
	fx_origin *o = realloc(ps->origins, cap * sizeof(*o));

	if (!o)
		return false;
	ps->origins = o;
	return true;
}

static uint32_t node_new(parser *ps, fx_op op)
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
static void origin_set(parser *ps, uint32_t i, const char *p0, const char *p1,
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

static void skip_space(parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

/*
 * An optional sheet prefix at ps->p ("Name!" or "'It''s'!"). Returns 1 with
 * the unquoted name in buf, 0 when there is none (nothing consumed).
 */
static int sheet_prefix(parser *ps, char *buf, size_t cap)
{
	const char *q = ps->p;
	size_t n = 0;

	if (*q == '\'') {
		q++;
		for (;;) {
			if (!*q)
				return 0;
			if (*q == '\'') {
				if (q[1] != '\'')
					break;
				q++;
			}
			if (n + 1 >= cap)
				return 0;
			buf[n++] = *q++;
		}
		if (q[1] != '!')
			return 0;
		buf[n] = '\0';
		ps->p = q + 2;
		return 1;
	}
	while (sbx_ref_word_char(*q) && *q != '$')
		q++;
	if (q == ps->p || *q != '!' || (size_t)(q - ps->p) >= cap)
		return 0;
	n = (size_t)(q - ps->p);
	memcpy(buf, ps->p, n);
	buf[n] = '\0';
	ps->p = q + 1;
	return 1;
}

enum { END_CELL, END_COL, END_ROW };

/* One end of a reference: a word that is a cell, a column or a row. */
static bool ref_end(const char *w, size_t len, int *kind, uint32_t *row, uint32_t *col)
{
	if (sbx_ref_parse_cell_word(w, len, row, col)) {
		*kind = END_CELL;
		return true;
	}
	if (sbx_ref_parse_col_row_word(w, len, true, col)) {
		*kind = END_COL;
		return true;
	}
	if (sbx_ref_parse_col_row_word(w, len, false, row)) {
		*kind = END_ROW;
		return true;
	}
	return false;
}

static size_t word_len(const char *p)
{
	size_t n = 0;

	while (sbx_ref_word_char(p[n]))
		n++;
	return n;
}

static int find_sheet(parser *ps, const char *name, bool *bad)
{
	sbx_sheet *s = sbx_book_find(ps->book, name);

	*bad = !s;
	return s ? (int)sbx_sheet_index(s) : 0;
}

/*
 * Tries a reference at ps->p: [sheet!]end[:[sheet!]end]. Returns the node,
 * or UINT32_MAX with nothing consumed when the text is not a reference.
 */
static uint32_t try_ref(parser *ps)
{
	const char *start = ps->p;
	char sheet[SBX_SHEET_NAME_MAX + 1], sheet2[SBX_SHEET_NAME_MAX + 1];
	bool has_sheet, bad = false;
	uint32_t r0 = 0, c0 = 0, r1 = 0, c1 = 0, idx = ps->self, i;
	const char *w0, *w1 = NULL;
	int k0, k1;
	size_t len;

	has_sheet = sheet_prefix(ps, sheet, sizeof(sheet)) == 1;
	w0 = ps->p;
	len = word_len(ps->p);
	if (len == 0 || ps->p[len] == '(' || !ref_end(ps->p, len, &k0, &r0, &c0))
		goto not_ref;
	ps->p += len;
	if (*ps->p == ':') {
		const char *save = ps->p;
		bool has2;

		ps->p++;
		has2 = sheet_prefix(ps, sheet2, sizeof(sheet2)) == 1;
		len = word_len(ps->p);
		if (len && ps->p[len] != '(' && ref_end(ps->p, len, &k1, &r1, &c1) && k1 == k0) {
			w1 = ps->p;
			ps->p += len;
			if (has2 && (!has_sheet || strcasecmp(sheet, sheet2) != 0))
				unsupported(ps, "unsupported 3-D reference");
		} else {
			ps->p = save;
			k1 = -1;
		}
	} else {
		k1 = -1;
	}
	if (k1 < 0) {
		if (k0 != END_CELL)
			goto not_ref;
		r1 = r0;
		c1 = c0;
	}
	if (k0 == END_COL) {
		r0 = 0;
		r1 = SBX_SHEET_MAX_ROWS - 1;
	} else if (k0 == END_ROW) {
		c0 = 0;
		c1 = SBX_SHEET_MAX_COLS - 1;
	}
	if (has_sheet)
		idx = (uint32_t)find_sheet(ps, sheet, &bad);
	i = node_new(ps, N_REF);
	if (ps->oom)
		return 0;
	origin_set(ps, i, w0, w1, (const uint32_t[4]){r0, c0, r1, c1});
	ps->f->nodes[i].ref = (fx_rect){idx, r0 < r1 ? r0 : r1, c0 < c1 ? c0 : c1,
					r0 < r1 ? r1 : r0, c0 < c1 ? c1 : c0};
	ps->f->nodes[i].ref_bad = bad;
	return i;
not_ref:
	ps->p = start;
	return UINT32_MAX;
}

static uint32_t parse_expr(parser *ps);

/*
 * One more level of nesting: a parenthesis, a call, a unary or postfix
 * operator. Each makes the evaluator recurse once more (binary chains do
 * not: formula_eval.c loops over them), so this bounds its stack too.
 */
static bool nest(parser *ps)
{
	if (++ps->depth > FX_MAX_DEPTH) {
		unsupported(ps, "formula nested more than %d levels deep (limit)", FX_MAX_DEPTH);
		return false;
	}
	return true;
}

/* Appends v to a growable array (first: its first size); false, ps->oom set, when out of memory. */
static bool u32_push(parser *ps, uint32_t **a, uint32_t *n, uint32_t *cap, uint32_t first,
		     uint32_t v)
{
	if (*n == *cap) {
		uint32_t c = *cap ? *cap * 2 : first;
		uint32_t *grown = realloc(*a, c * sizeof(*grown));

		if (!grown) {
			ps->oom = true;
			return false;
		}
		*a = grown;
		*cap = c;
	}
	(*a)[(*n)++] = v;
	return true;
}

static bool pending_push(parser *ps, uint32_t node)
{
	return u32_push(ps, &ps->pending, &ps->n_pending, &ps->pending_cap, 16, node);
}

static int arg_push(parser *ps, uint32_t node)
{
	fx_formula *f = ps->f;

	return u32_push(ps, &f->args, &f->nargs, &f->args_cap, 4, node) ? 0 : -ENOMEM;
}

static uint32_t parse_call(parser *ps, const char *name, size_t len)
{
	uint32_t base = ps->n_pending, n, i;
	int fn = sbx_fx__func_find(name, len);

	ps->p++; /* '(' */
	skip_space(ps);
	if (*ps->p == ')') {
		ps->p++;
	} else {
		for (;;) {
			skip_space(ps);
			if (*ps->p == ',' || *ps->p == ')')
				i = node_new(ps, N_MISSING);
			else
				i = parse_expr(ps);
			if (ps->oom || ps->f->unsupported)
				return 0;
			if (ps->n_pending - base == FX_MAX_ARGS) {
				unsupported(ps, "more than %d arguments (limit)", FX_MAX_ARGS);
				return 0;
			}
			if (!pending_push(ps, i))
				return 0;
			skip_space(ps);
			if (*ps->p == ',') {
				ps->p++;
				continue;
			}
			if (*ps->p == ')') {
				ps->p++;
				break;
			}
			unsupported(ps, "cannot parse the formula");
			return 0;
		}
	}
	n = ps->n_pending - base;
	ps->n_pending = base;
	if (fn < 0) {
		unsupported(ps, "unsupported function %.*s", (int)(len > 64 ? 64 : len), name);
		return 0;
	}
	const fx_func *def = sbx_fx__func(fn);
	if (n < def->min || (def->max != 255 && n > def->max)) {
		/* LibreOffice refuses the formula (Err:504); leave that to it. */
		unsupported(ps, "%s with %u arguments", def->name, n);
		return 0;
	}
	i = node_new(ps, N_CALL);
	if (ps->oom)
		return 0;
	ps->f->nodes[i].fn = (int16_t)fn;
	ps->f->nodes[i].nargs = (uint16_t)n;
	ps->f->nodes[i].a = ps->f->nargs;
	for (uint32_t k = 0; k < n; k++)
		if (arg_push(ps, ps->pending[base + k]) < 0)
			return 0;
	return i;
}

static uint32_t parse_string(parser *ps)
{
	fx_formula *f = ps->f;
	const char *q = ps->p + 1;
	size_t start = f->strings_len;
	uint32_t i;

	for (;;) {
		char ch;
		if (!*q) {
			unsupported(ps, "cannot parse the formula (unterminated string)");
			return 0;
		}
		if (*q == '"') {
			if (q[1] != '"')
				break;
			q++;
		}
		ch = *q++;
		if (f->strings_len + 2 > f->strings_cap) {
			size_t cap = f->strings_cap ? f->strings_cap * 2 : 64;
			char *s = realloc(f->strings, cap);
			if (!s) {
				ps->oom = true;
				return 0;
			}
			f->strings = s;
			f->strings_cap = cap;
		}
		f->strings[f->strings_len++] = ch;
	}
	ps->p = q + 1;
	if (f->strings_len + 1 > f->strings_cap) {
		char *s = realloc(f->strings, f->strings_cap + 16);
		if (!s) {
			ps->oom = true;
			return 0;
		}
		f->strings = s;
		f->strings_cap += 16;
	}
	f->strings[f->strings_len++] = '\0';
	i = node_new(ps, N_STR);
	if (ps->oom)
		return 0;
	/* An offset for now: strings may move while they grow (fixed up at the end). */
	f->nodes[i].str = (const char *)(uintptr_t)start;
	f->nodes[i].len = (uint32_t)(f->strings_len - 1 - start);
	return i;
}

static const struct {
	const char *text;
	fx_err err;
} error_literals[] = {
	{"#NULL!", FX_E_NULL}, {"#DIV/0!", FX_E_DIV0}, {"#VALUE!", FX_E_VALUE}, {"#REF!", FX_E_REF},
	{"#NAME?", FX_E_NAME}, {"#NUM!", FX_E_NUM},    {"#N/A", FX_E_NA},
};

/*
 * Digits alone, at most 15 of them: the value without strtod (most numbers
 * in formulas are row offsets and small constants). False for anything
 * strtod must read: a point, an exponent, hex, more digits.
 */
static bool small_integer(const char *p, double *v, char **end)
{
	const char *q = p;
	uint64_t n = 0;

	while (*q >= '0' && *q <= '9' && q - p < 15)
		n = n * 10 + (uint64_t)(*q++ - '0');
	if (q == p || (*q >= '0' && *q <= '9') || *q == '.' || isalpha((unsigned char)*q))
		return false;
	*v = (double)n;
	*end = (char *)(uintptr_t)q;
	return true;
}

static uint32_t parse_primary(parser *ps)
{
	uint32_t i;
	size_t len;

	skip_space(ps);
	if (*ps->p == '(') {
		if (!nest(ps))
			return 0;
		ps->p++;
		i = parse_expr(ps);
		skip_space(ps);
		if (*ps->p != ')')
			unsupported(ps, "cannot parse the formula (missing ')')");
		else
			ps->p++;
		ps->depth--;
		return i;
	}
	if (*ps->p == '"') {
		return parse_string(ps);
	}
	if (*ps->p == '#') {
		for (size_t k = 0; k < SBX_ELEMENTSOF(error_literals); k++) {
			size_t n = strlen(error_literals[k].text);
			if (strncasecmp(ps->p, error_literals[k].text, n) == 0) {
				ps->p += n;
				i = node_new(ps, N_ERR);
				if (!ps->oom)
					ps->f->nodes[i].err = error_literals[k].err;
				return i;
			}
		}
		unsupported(ps, "cannot parse the formula");
		return 0;
	}
	if (*ps->p == '{') {
		unsupported(ps, "unsupported inline array");
		return 0;
	}
	i = try_ref(ps);
	if (i != UINT32_MAX) {
		return i;
	}
	if (isdigit((unsigned char)*ps->p) || (*ps->p == '.' && isdigit((unsigned char)ps->p[1]))) {
		char *end;
		double v;

		if (!small_integer(ps->p, &v, &end))
			v = strtod(ps->p, &end);

		if (end == ps->p || !isfinite(v) || (*end && (isalpha((unsigned char)*end)))) {
			unsupported(ps, "cannot parse the formula (number)");
			return 0;
		}
		i = node_new(ps, N_NUM);
		origin_set(ps, i, ps->p, NULL, NULL);
		ps->p = end;
		if (!ps->oom)
			ps->f->nodes[i].num = v;
		return i;
	}
	len = word_len(ps->p);
	if (len == 0) {
		unsupported(ps, "cannot parse the formula");
		return 0;
	}
	const char *name = ps->p;
	ps->p += len;
	skip_space(ps);
	if (*ps->p == '(') {
		if (!nest(ps))
			return 0;
		i = parse_call(ps, name, len);
		ps->depth--;
		return i;
	}
	if ((len == 4 && strncasecmp(name, "TRUE", 4) == 0) ||
	    (len == 5 && strncasecmp(name, "FALSE", 5) == 0)) {
		i = node_new(ps, N_BOOL);
		if (!ps->oom)
			ps->f->nodes[i].num = len == 4;
		return i;
	}
	unsupported(ps, "unsupported name %.*s", (int)(len > 64 ? 64 : len), name);
	return 0;
}

static uint32_t unary_node(parser *ps, fx_op op, uint32_t a)
{
	uint32_t i = node_new(ps, op);

	if (!ps->oom)
		ps->f->nodes[i].a = a;
	return i;
}

static uint32_t binary_node(parser *ps, fx_op op, uint32_t a, uint32_t b)
{
	uint32_t i = node_new(ps, op);

	if (!ps->oom) {
		ps->f->nodes[i].a = a;
		ps->f->nodes[i].b = b;
	}
	return i;
}

#define FAILED(ps) ((ps)->oom || (ps)->f->unsupported)

/* primary [":" primary]* ["%"]*: each operator nests the ones before it. */
static uint32_t parse_postfix(parser *ps)
{
	uint32_t a = parse_primary(ps);
	int depth = ps->depth;

	for (;;) {
		if (FAILED(ps))
			break;
		skip_space(ps);
		if (*ps->p == ':') {
			ps->p++;
			if (!nest(ps))
				break;
			a = binary_node(ps, N_RANGE, a, parse_primary(ps));
		} else if (*ps->p == '%') {
			ps->p++;
			if (!nest(ps))
				break;
			a = unary_node(ps, N_PCT, a);
		} else {
			ps->depth = depth;
			return a;
		}
	}
	ps->depth = depth;
	return 0;
}

/* Unary minus binds tighter than "^" in LibreOffice and Excel: -2^2 is 4. */
static uint32_t parse_unary(parser *ps)
{
	skip_space(ps);
	if (*ps->p == '-' || *ps->p == '+') {
		fx_op op = *ps->p == '-' ? N_NEG : N_PLUS;
		uint32_t a;

		ps->p++;
		if (!nest(ps))
			return 0;
		a = parse_unary(ps);
		ps->depth--;
		if (FAILED(ps))
			return 0;
		return unary_node(ps, op, a);
	}
	return parse_postfix(ps);
}

/* Binary operators by precedence, loosest first; each level is left-associative (2^3^2 is 64). */
enum { L_CMP, L_CAT, L_ADD, L_MUL, L_POW, L_UNARY };

/* The length of the level's operator at p (0: none there), its node in *op. */
static int binary_op(const char *p, int level, fx_op *op)
{
	switch (level) {
	case L_CMP:
		if ((p[0] == '<' || p[0] == '>') && p[1] == '=') {
			*op = p[0] == '<' ? N_LE : N_GE;
			return 2;
		}
		if (p[0] == '<' && p[1] == '>') {
			*op = N_NE;
			return 2;
		}
		*op = p[0] == '<' ? N_LT : p[0] == '>' ? N_GT : N_EQ;
		return p[0] == '<' || p[0] == '>' || p[0] == '=';
	case L_CAT:
		*op = N_CAT;
		return p[0] == '&';
	case L_ADD:
		*op = p[0] == '+' ? N_ADD : N_SUB;
		return p[0] == '+' || p[0] == '-';
	case L_MUL:
		*op = p[0] == '*' ? N_MUL : N_DIV;
		return p[0] == '*' || p[0] == '/';
	default:
		*op = N_POW;
		return p[0] == '^';
	}
}

static uint32_t parse_level(parser *ps, int level)
{
	uint32_t a;

	if (level == L_UNARY)
		return parse_unary(ps);
	a = parse_level(ps, level + 1);
	for (;;) {
		fx_op op;
		int n;

		if (FAILED(ps))
			return 0;
		skip_space(ps);
		n = binary_op(ps->p, level, &op);
		if (!n)
			return a;
		ps->p += n;
		a = binary_node(ps, op, a, parse_level(ps, level + 1));
	}
}

static uint32_t parse_expr(parser *ps)
{
	return parse_level(ps, L_CMP);
}

static int parse(parser *ps)
{
	fx_formula *f = ps->f;

	*f = (fx_formula){0};
	if (strnlen(ps->text, FX_MAX_TEXT + 1) > FX_MAX_TEXT) {
		unsupported(ps, "formula longer than %d characters (limit)", FX_MAX_TEXT);
		return ps->oom ? -ENOMEM : 0;
	}
	skip_space(ps);
	if (*ps->p == '=')
		ps->p++;
	skip_space(ps);
	if (!*ps->p) {
		unsupported(ps, "empty formula");
		return ps->oom ? -ENOMEM : 0;
	}
	f->root = parse_expr(ps);
	if (ps->oom)
		return -ENOMEM;
	skip_space(ps);
	if (!f->unsupported && *ps->p)
		unsupported(ps, "cannot parse the formula near '%.16s'", ps->p);
	if (ps->oom)
		return -ENOMEM;
	for (uint32_t i = 0; i < f->n; i++)
		if (f->nodes[i].op == N_STR)
			f->nodes[i].str = f->strings + (uintptr_t)f->nodes[i].str;
	/* A book holds one parsed formula per cell: keep only what is used. */
	if (f->n && f->n < f->cap) {
		fx_node *n = realloc(f->nodes, f->n * sizeof(*n));
		if (n) {
			f->nodes = n;
			f->cap = f->n;
		}
	}
	return 0;
}

int sbx_fx__parse(const sbx_book *b, uint32_t self, const char *text, fx_formula *f)
{
	parser ps = {.book = b, .self = self, .text = text, .p = text, .f = f};
	int r = parse(&ps);

	free(ps.pending);
	return r;
}

int sbx_fx__parse_traced(const sbx_book *b, uint32_t self, const char *text, fx_formula *f,
			 fx_origin **origins)
{
	parser ps = {.book = b, .self = self, .text = text, .p = text, .f = f, .traced = true};
	int r = parse(&ps);

	free(ps.pending);
	if (r < 0) {
		free(ps.origins);
		ps.origins = NULL;
	}
	*origins = ps.origins;
	return r;
}

void sbx_fx__formula_free(fx_formula *f)
{
	free(f->nodes);
	if (f->borrowed) {
		*f = (fx_formula){0};
		return;
	}
	sbx_free_all(f->args, f->strings, f->why);
	*f = (fx_formula){0};
}

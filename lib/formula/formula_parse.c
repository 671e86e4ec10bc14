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

#include "formula-parse.h"
#include "sbx/cleanup.h"

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
	i = sbx_fx__parse_ref(ps);
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

/* SPDX-License-Identifier: MIT */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "grader-internal.h"

static bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* A string seen through the normalisation options, one byte at a time. */
typedef struct norm {
	const char *p, *end;
	bool collapse, fold;
} norm;

static void norm_init(norm *n, const sbx_grading_opts *o, const char *s)
{
	n->p = s;
	n->end = s + strlen(s);
	if (o->trim || o->collapse_whitespace) {
		while (n->p < n->end && is_space((unsigned char)*n->p))
			n->p++;
		while (n->end > n->p && is_space((unsigned char)n->end[-1]))
			n->end--;
	}
	n->collapse = o->collapse_whitespace;
	n->fold = o->ignore_case;
}

/* Next byte, or -1 at the end. */
static int norm_next(norm *n)
{
	unsigned char c;

	if (n->p >= n->end)
		return -1;
	c = (unsigned char)*n->p++;
	if (n->collapse && is_space(c)) {
		while (n->p < n->end && is_space((unsigned char)*n->p))
			n->p++;
		return ' ';
	}
	if (n->fold && c >= 'A' && c <= 'Z')
		return c + ('a' - 'A');
	return c;
}

static bool text_equal(const sbx_grading_opts *o, const char *a, const char *b)
{
	norm x, y;
	int cx, cy;

	norm_init(&x, o, a);
	norm_init(&y, o, b);
	do {
		cx = norm_next(&x);
		cy = norm_next(&y);
		if (cx != cy)
			return false;
	} while (cx >= 0);
	return true;
}

static bool text_blank(const sbx_grading_opts *o, const char *s)
{
	norm n;

	norm_init(&n, o, s);
	return n.p == n.end;
}

#define REWRITE_MAX (4u << 20)

static bool rewrites(const sbx_grading_opts *o)
{
	return o->n_replace || o->strip_chars;
}

/*
 * Applies the replacement pairs in order, then removes strip_chars. Returns s
 * when there is nothing to do, else text in one of bufs (valid until they are
 * reset or freed); NULL when the result would pass REWRITE_MAX.
 */
static const char *rewrite(const sbx_grading_opts *o, const char *s, sbx_buf bufs[2])
{
	const char *cur = s;
	int i = 0, r = 0;

	for (size_t k = 0; k < o->n_replace && r >= 0; k++, i ^= 1) {
		const char *from = o->replace[2 * k], *to = o->replace[2 * k + 1], *p = cur, *q;
		size_t flen = strlen(from);

		sbx_buf_reset(&bufs[i]);
		while (r >= 0 && (q = strstr(p, from))) {
			r = sbx_buf_append(&bufs[i], p, (size_t)(q - p));
			if (r >= 0)
				r = sbx_buf_puts(&bufs[i], to);
			p = q + flen;
		}
		if (r >= 0)
			r = sbx_buf_puts(&bufs[i], p);
		cur = sbx_buf_str(&bufs[i]);
	}
	if (r >= 0 && o->strip_chars) {
		sbx_buf_reset(&bufs[i]);
		for (const char *p = cur; *p && r >= 0; p++)
			if (!strchr(o->strip_chars, *p))
				r = sbx_buf_putc(&bufs[i], *p);
		cur = sbx_buf_str(&bufs[i]);
	}
	return r < 0 ? NULL : cur;
}

bool sbx_grader__is_empty(const sbx_grading_opts *o, const sbx_cell *c)
{
	/* A formula without a cached value has no value to grade unless formulas are. */
	if (c->formula)
		return c->kind == SBX_CELL_EMPTY && o->formulas == SBX_FORMULA_IGNORE;
	if (c->kind == SBX_CELL_EMPTY)
		return true;
	if (c->kind != SBX_CELL_STRING)
		return false;
	if (rewrites(o)) {
		sbx_buf bufs[2] = {SBX_BUF_INIT(REWRITE_MAX), SBX_BUF_INIT(REWRITE_MAX)};
		const char *t = rewrite(o, c->text ? c->text : "", bufs);
		bool blank = t && text_blank(o, t);

		sbx_buf_free(&bufs[0]);
		sbx_buf_free(&bufs[1]);
		return blank;
	}
	return text_blank(o, c->text ? c->text : "");
}

/* A plain decimal number in text ("  42", "-1.5e3"); no hex, inf or nan. */
static bool parse_number(const char *s, double *out)
{
	char buf[64], *end;
	size_t len;
	double v;

	while (is_space((unsigned char)*s))
		s++;
	len = strlen(s);
	while (len && is_space((unsigned char)s[len - 1]))
		len--;
	if (len == 0 || len >= sizeof(buf) || strspn(s, "0123456789+-.eE") < len)
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	v = strtod(buf, &end);
	if (*end || !isfinite(v))
		return false;
	*out = v;
	return true;
}

double sbx_grader__round(double v, int digits)
{
	double p = pow(10, digits), x = v * p, r = round(x);

	/* 2.675 is stored as 2.67499999...; a half in decimal terms still rounds away. */
	if (fabs(fabs(x - trunc(x)) - 0.5) <= 64 * DBL_EPSILON * fmax(1, fabs(x)))
		r = trunc(x) + copysign(1, x);
	return r / p;
}

static void compare_numbers(const sbx_grading_opts *o, double e, double a, sbx_cmp *out)
{
	double diff, tol;

	if (o->round_digits >= 0) {
		e = sbx_grader__round(e, o->round_digits);
		a = sbx_grader__round(a, o->round_digits);
	}
	diff = fabs(a - e);
	tol = fmax(o->abs_tol, o->rel_tol * fabs(e));
	out->diff = diff;
	out->tolerance = tol;
	/* |a-e| <= tol, forgiving the binary representation error of the subtraction. */
	out->match = diff - tol <= 4 * DBL_EPSILON * fmax(fabs(a), fabs(e));
	out->reason = SBX_MISMATCH_NUMBER;
}

/* The value as a number, when it has one (a numeric string only if allowed). */
static bool as_number(const sbx_grading_opts *o, const sbx_cell *c, double *out)
{
	if (sbx_cell_kind_is_numeric(c->kind)) {
		*out = c->number;
		return true;
	}
	if (c->kind != SBX_CELL_STRING || !o->numeric_strings || !c->text)
		return false;
	if (parse_number(c->text, out))
		return true;
	if (strcasecmp(c->text, "true") == 0 || strcasecmp(c->text, "false") == 0) {
		*out = strcasecmp(c->text, "true") == 0;
		return true;
	}
	return sbx_sheet_parse_date(c->text, out) == 0;
}

static void compare_values(const sbx_grading_opts *o, const sbx_cell *e, const sbx_cell *a,
			   sbx_cmp *out)
{
	bool e_empty = sbx_grader__is_empty(o, e) || e->kind == SBX_CELL_EMPTY;
	bool a_empty = sbx_grader__is_empty(o, a) || a->kind == SBX_CELL_EMPTY;
	double ev, av;

	out->match = false;
	if (e->kind == SBX_CELL_EMPTY && e->formula) {
		/* The oracle's formula has no cached value: only the formula is graded. */
		out->match = true;
		return;
	}
	if (e_empty || a_empty) {
		out->match = e_empty && a_empty;
		out->reason = e_empty ? SBX_MISMATCH_EXTRA : SBX_MISMATCH_MISSING;
		return;
	}
	if (sbx_cell_kind_is_numeric(e->kind)) {
		if (as_number(o, a, &av)) {
			compare_numbers(o, e->number, av, out);
			return;
		}
		out->reason = SBX_MISMATCH_TYPE;
		return;
	}
	if (e->kind == SBX_CELL_STRING) {
		if (a->kind == SBX_CELL_STRING) {
			out->match = text_equal(o, e->text, a->text);
			out->reason = SBX_MISMATCH_TEXT;
			return;
		}
		/* A number where the oracle holds numeric text ("42"). */
		if (sbx_cell_kind_is_numeric(a->kind) && as_number(o, e, &ev)) {
			compare_numbers(o, ev, a->number, out);
			return;
		}
		out->reason = SBX_MISMATCH_TYPE;
		return;
	}
	/* ERROR cells: the same error text. */
	out->match =
		a->kind == e->kind && text_equal(o, e->text ? e->text : "", a->text ? a->text : "");
	out->reason = a->kind == e->kind ? SBX_MISMATCH_TEXT : SBX_MISMATCH_TYPE;
}

static bool formulas_equal(const char *e, const char *a)
{
	char *ne = NULL, *na = NULL;
	bool eq = false;

	if (sbx_formula_normalize(e, 1 << 20, &ne, NULL) >= 0 &&
	    sbx_formula_normalize(a, 1 << 20, &na, NULL) >= 0)
		eq = strcmp(ne, na) == 0;
	else
		eq = strcmp(e, a) == 0;
	free(ne);
	free(na);
	return eq;
}

void sbx_grader__compare(const sbx_grading_opts *o, const sbx_cell *e, const sbx_cell *a,
			 sbx_cmp *out)
{
	*out = (sbx_cmp){0};
	if (rewrites(o) && (e->kind == SBX_CELL_STRING || a->kind == SBX_CELL_STRING)) {
		sbx_buf be[2] = {SBX_BUF_INIT(REWRITE_MAX), SBX_BUF_INIT(REWRITE_MAX)};
		sbx_buf ba[2] = {SBX_BUF_INIT(REWRITE_MAX), SBX_BUF_INIT(REWRITE_MAX)};
		sbx_cell e2 = *e, a2 = *a;

		if (e2.kind == SBX_CELL_STRING)
			e2.text = rewrite(o, e->text ? e->text : "", be);
		if (a2.kind == SBX_CELL_STRING)
			a2.text = rewrite(o, a->text ? a->text : "", ba);
		if ((e2.kind == SBX_CELL_STRING && !e2.text) ||
		    (a2.kind == SBX_CELL_STRING && !a2.text))
			out->reason = SBX_MISMATCH_TEXT; /* rewritten past the cap */
		else
			compare_values(o, &e2, &a2, out);
		for (int i = 0; i < 2; i++) {
			sbx_buf_free(&be[i]);
			sbx_buf_free(&ba[i]);
		}
	} else {
		compare_values(o, e, a, out);
	}
	if (!out->match || o->formulas == SBX_FORMULA_IGNORE || !e->formula)
		return;
	if (!a->formula) {
		out->match = false;
		out->reason = SBX_MISMATCH_FORMULA_MISSING;
	} else if (o->formulas == SBX_FORMULA_MATCH && !formulas_equal(e->formula, a->formula)) {
		out->match = false;
		out->reason = SBX_MISMATCH_FORMULA_DIFFERS;
	}
}

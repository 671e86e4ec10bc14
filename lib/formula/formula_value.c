/* SPDX-License-Identifier: MIT */
/*
 * The evaluator's values: error codes and their texts, the arena strings
 * live in, setting results, coercions as LibreOffice does them (text
 * converts to a number only when unambiguous; booleans are numbers), the
 * arithmetic that snaps cancellation noise, comparisons.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "formula-internal.h"
#include "sbx/cleanup.h"

static const char *const err_texts[] = {
	[FX_E_NONE] = "",	  [FX_E_NULL] = "#NULL!",  [FX_E_DIV0] = "#DIV/0!",
	[FX_E_VALUE] = "#VALUE!", [FX_E_REF] = "#REF!",	   [FX_E_NAME] = "#NAME?",
	[FX_E_NUM] = "#NUM!",	  [FX_E_NA] = "#N/A",	   [FX_E_ARG] = "Err:502",
	[FX_E_CYCLE] = "Err:522", [FX_E_UNSUP] = "#NAME?",
};

const char *sbx_fx__err_text(fx_err e)
{
	return (unsigned)e < SBX_ELEMENTSOF(err_texts) ? err_texts[e] : "#VALUE!";
}

fx_err sbx_fx__err_parse(const char *text)
{
	for (unsigned e = FX_E_NULL; e <= FX_E_CYCLE; e++)
		if (text && strcasecmp(text, err_texts[e]) == 0)
			return (fx_err)e;
	/* "Err:5xx" codes LibreOffice writes for other failures, and anything else. */
	return FX_E_VALUE;
}

/* ---- arena ---- */

#define ARENA_CHUNK (64u << 10)
#define ARENA_MAX   ((uint64_t)256 << 20)

char *sbx_fx__arena_alloc(fx_arena *a, size_t n)
{
	if (a->bytes + n > ARENA_MAX)
		return NULL;
	if (a->n == 0 || a->used + n > a->size) {
		size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		if (!sbx_sheet__chunk_push(&a->chunks, &a->n, &a->cap, size))
			return NULL;
		a->used = 0;
		a->size = size;
	}
	char *p = a->chunks[a->n - 1] + a->used;
	a->used += (n + 7) & ~(size_t)7;
	if (a->used > a->size)
		a->used = a->size;
	a->bytes += n;
	return p;
}

void sbx_fx__arena_reset(fx_arena *a)
{
	/* Keep the first chunk: most cells need no more. */
	for (size_t i = 1; i < a->n; i++)
		free(a->chunks[i]);
	a->n = a->n ? 1 : 0;
	a->used = 0;
	a->size = a->n ? ARENA_CHUNK : 0;
	a->bytes = 0;
}

void sbx_fx__arena_free(fx_arena *a)
{
	sbx_strv_free_n(a->chunks, a->n);
	*a = (fx_arena){0};
}

/* ---- results ---- */

void sbx_fx__set_num(fx_val *v, double n)
{
	if (!isfinite(n)) {
		sbx_fx__set_err(v, FX_E_NUM);
		return;
	}
	*v = (fx_val){.type = FX_NUM, .num = n == 0 ? 0.0 : n};
}

void sbx_fx__set_bool(fx_val *v, bool b)
{
	*v = (fx_val){.type = FX_BOOL, .num = b};
}

void sbx_fx__set_err(fx_val *v, fx_err e)
{
	*v = (fx_val){.type = FX_ERR, .err = e};
}

char *sbx_fx__str_alloc(fx_ctx *c, size_t len, fx_val *v)
{
	char *p = sbx_fx__arena_alloc(&c->arena, len + 1);

	if (!p) {
		c->oom = true;
		sbx_fx__set_err(v, FX_E_VALUE);
	}
	return p;
}

void sbx_fx__set_str(fx_ctx *c, fx_val *v, const char *s, size_t len)
{
	char *p;

	if (len > FX_MAX_STRING) {
		sbx_fx__set_err(v, FX_E_VALUE);
		return;
	}
	p = sbx_fx__str_alloc(c, len, v);
	if (!p)
		return;
	memcpy(p, s, len);
	p[len] = '\0';
	*v = (fx_val){.type = FX_STR, .str = p, .len = (uint32_t)len};
}

void sbx_fx__unsupported(fx_ctx *c, fx_val *v, const char *fmt, ...)
{
	if (!c->unsupported) {
		va_list ap;

		c->unsupported = true;
		va_start(ap, fmt);
		vsnprintf(c->why, sizeof(c->why), fmt, ap);
		va_end(ap);
	}
	sbx_fx__set_err(v, FX_E_UNSUP);
}

/* ---- coercions ---- */

bool sbx_fx__parse_number(const char *s, uint32_t len, double *out)
{
	char buf[64], *end;
	double v;

	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (strspn(buf, "0123456789+-.eE") == len) {
		/* strtod would take hex, inf and nan: the set above rules them out. */
		v = strtod(buf, &end);
		if (*end || end == buf || !isfinite(v))
			return false;
		*out = v;
		return true;
	}
	/* An ISO 8601 date is unambiguous too. */
	if (len == 10 && buf[4] == '-' && buf[7] == '-' && sbx_sheet_parse_date(buf, &v) == 0) {
		*out = v;
		return true;
	}
	return false;
}

/* A reference's value where one is wanted (sbx_fx__deref); one still a reference is #VALUE!. */
static bool deref_cell(fx_ctx *c, const fx_val *v, fx_val *out, fx_err *err)
{
	sbx_fx__deref(c, v, out);
	if (out->type != FX_REF)
		return true;
	*err = FX_E_VALUE;
	return false;
}

bool sbx_fx__to_num(fx_ctx *c, const fx_val *v, double *out, fx_err *err)
{
	fx_val tmp;

	switch (v->type) {
	case FX_NUM:
	case FX_BOOL:
		*out = v->num;
		return true;
	case FX_EMPTY:
		*out = 0;
		return true;
	case FX_STR:
		if (sbx_fx__parse_number(v->str, v->len, out))
			return true;
		*err = FX_E_VALUE;
		return false;
	case FX_ERR:
		*err = v->err;
		return false;
	case FX_REF:
		return deref_cell(c, v, &tmp, err) && sbx_fx__to_num(c, &tmp, out, err);
	}
	*err = FX_E_VALUE;
	return false;
}

bool sbx_fx__to_bool(fx_ctx *c, const fx_val *v, bool *out, fx_err *err)
{
	double d;

	if (v->type == FX_STR) {
		if (v->len == 4 && strcasecmp(v->str, "TRUE") == 0) {
			*out = true;
			return true;
		}
		if (v->len == 5 && strcasecmp(v->str, "FALSE") == 0) {
			*out = false;
			return true;
		}
		*err = FX_E_VALUE;
		return false;
	}
	if (!sbx_fx__to_num(c, v, &d, err))
		return false;
	*out = d != 0;
	return true;
}

bool sbx_fx__to_str(fx_ctx *c, const fx_val *v, const char **out, uint32_t *len, fx_err *err)
{
	char tmp[40];
	fx_val d, s;

	switch (v->type) {
	case FX_STR:
		*out = v->str;
		*len = v->len;
		return true;
	case FX_EMPTY:
		*out = "";
		*len = 0;
		return true;
	case FX_BOOL:
		/* LibreOffice's booleans are numbers: TRUE&"" is "1". */
		*out = v->num ? "1" : "0";
		*len = 1;
		return true;
	case FX_NUM:
		sbx_fx__format_general(v->num, tmp);
		sbx_fx__set_str(c, &s, tmp, strlen(tmp));
		if (s.type != FX_STR) {
			*err = s.err;
			return false;
		}
		*out = s.str;
		*len = s.len;
		return true;
	case FX_ERR:
		*err = v->err;
		return false;
	case FX_REF:
		return deref_cell(c, v, &d, err) && sbx_fx__to_str(c, &d, out, len, err);
	}
	*err = FX_E_VALUE;
	return false;
}

double sbx_fx__pow(double x, double y, fx_err *err)
{
	double r;

	/* LibreOffice: 0^0 is 1, a pole or a complex result is #NUM!. */
	r = pow(x, y);
	if (!isfinite(r))
		*err = FX_E_NUM;
	return r;
}

/* rtl::math::approxEqual: equal up to the last 4-5 bits. */
bool sbx_fx__approx_equal(double a, double b)
{
	const double e48 = 1.0 / (16777216.0 * 16777216.0);
	double d;

	if (a == b)
		return true;
	if (a == 0 || b == 0)
		return false;
	d = fabs(a - b);
	return isfinite(d) && d < fabs(a) * e48 && d < fabs(b) * e48;
}

/* LibreOffice's + and -: a sum that cancels to rounding noise is 0 (0.1+0.2-0.3). */
double sbx_fx__approx_add(double a, double b)
{
	if (((a < 0 && b > 0) || (b < 0 && a > 0)) && sbx_fx__approx_equal(a, -b))
		return 0.0;
	return a + b;
}

/* ---- comparison ---- */

int sbx_fx__compare(const fx_val *a, const fx_val *b)
{
	bool an = a->type == FX_NUM || a->type == FX_BOOL,
	     bn = b->type == FX_NUM || b->type == FX_BOOL;

	/* An empty cell is 0 against a number and "" against text. */
	if (a->type == FX_EMPTY && b->type == FX_EMPTY)
		return 0;
	if (a->type == FX_EMPTY)
		return bn ? (0 < b->num ? -1 : 0 > b->num) : (b->len ? -1 : 0);
	if (b->type == FX_EMPTY)
		return an ? (a->num < 0 ? -1 : a->num > 0) : (a->len ? 1 : 0);
	if (an && bn)
		return a->num < b->num ? -1 : a->num > b->num;
	if (an)
		return -1; /* numbers sort before text */
	if (bn)
		return 1;
	int r = strcasecmp(a->str, b->str);
	return r < 0 ? -1 : r > 0;
}

int sbx_fx__compare_case(const fx_val *a, const fx_val *b)
{
	int r = sbx_fx__compare(a, b);

	/*
	 * Equal but for case: the collator's tertiary order puts lower case
	 * first ("abc" < "ABC").
	 */
	if (r == 0 && a->type == FX_STR && b->type == FX_STR) {
		int s = strcmp(a->str, b->str);
		r = s > 0 ? -1 : s < 0;
	}
	return r;
}

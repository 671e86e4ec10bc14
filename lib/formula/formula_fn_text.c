/* SPDX-License-Identifier: MIT */
/*
 * Text and date functions. Lengths and positions count characters (UTF-8
 * sequences), as LibreOffice counts them for text in the Basic Multilingual
 * Plane. Case mapping is ASCII only: other letters are left unchanged.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "formula-internal.h"

#define UNUSED __attribute__((unused))

static bool arg_str(fx_ctx *c, uint32_t node, const char **s, uint32_t *len, fx_val *res)
{
	fx_val v;
	fx_err e = FX_E_NONE;

	sbx_fx__eval_scalar(c, node, &v);
	if (sbx_fx__to_str(c, &v, s, len, &e))
		return true;
	sbx_fx__set_err(res, e);
	return false;
}

/* A text argument and a result buffer of its length (TRIM, UPPER: the result is no longer). */
static char *arg_str_and_buf(fx_ctx *c, uint32_t node, const char **s, uint32_t *len, fx_val *res)
{
	if (!arg_str(c, node, s, len, res))
		return NULL;
	return sbx_fx__str_alloc(c, *len, res);
}

/* Byte offset of character n (0-based) in s, or len when past the end. */
static uint32_t char_offset(const char *s, uint32_t len, double n)
{
	uint32_t i = 0;

	for (double k = 0; i < len && k < n; k++) {
		i++;
		while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
			i++;
	}
	return i;
}

static uint32_t char_count(const char *s, uint32_t len)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xC0) != 0x80;
	return n;
}

static void fn_len(fx_ctx *c, const fx_node *call UNUSED, const uint32_t *args, fx_val *out)
{
	const char *s;
	uint32_t len;

	if (arg_str(c, args[0], &s, &len, out))
		sbx_fx__set_num(out, char_count(s, len));
}

static void left_right(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	bool left = sbx_fx__variant(call);
	const char *s;
	uint32_t len, chars, off;
	double n = 1;

	if (!arg_str(c, args[0], &s, &len, out))
		return;
	if (sbx_fx__given(c, call, args, 1) && !sbx_fx__arg_num(c, args[1], &n, out))
		return;
	n = trunc(n);
	if (n < 0) {
		sbx_fx__set_err(out, FX_E_ARG);
		return;
	}
	chars = char_count(s, len);
	if (left) {
		off = char_offset(s, len, n);
		sbx_fx__set_str(c, out, s, off);
	} else {
		off = n >= chars ? 0 : char_offset(s, len, chars - n);
		sbx_fx__set_str(c, out, s + off, len - off);
	}
}

static void fn_mid(fx_ctx *c, const fx_node *call UNUSED, const uint32_t *args, fx_val *out)
{
	const char *s;
	uint32_t len, a, b;
	double start, n;

	if (!arg_str(c, args[0], &s, &len, out) || !sbx_fx__arg_num(c, args[1], &start, out) ||
	    !sbx_fx__arg_num(c, args[2], &n, out))
		return;
	start = trunc(start);
	n = trunc(n);
	if (start < 1 || n < 0) {
		sbx_fx__set_err(out, FX_E_ARG);
		return;
	}
	a = char_offset(s, len, start - 1);
	b = a + char_offset(s + a, len - a, n);
	sbx_fx__set_str(c, out, s + a, b - a);
}

static void fn_trim(fx_ctx *c, const fx_node *call UNUSED, const uint32_t *args, fx_val *out)
{
	const char *s;
	uint32_t len, n = 0;
	char *p;

	p = arg_str_and_buf(c, args[0], &s, &len, out);
	if (!p)
		return;
	/* Leading and trailing spaces go, inner runs become one space. */
	for (uint32_t i = 0; i < len; i++) {
		if (s[i] == ' ' && (n == 0 || p[n - 1] == ' '))
			continue;
		p[n++] = s[i];
	}
	while (n > 0 && p[n - 1] == ' ')
		n--;
	p[n] = '\0';
	*out = (fx_val){.type = FX_STR, .str = p, .len = n};
}

static void map_case(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	int mode = sbx_fx__variant(call);
	const char *s;
	uint32_t len;
	char *p;
	bool word = false;

	p = arg_str_and_buf(c, args[0], &s, &len, out);
	if (!p)
		return;
	for (uint32_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (mode == 2) {
			p[i] = (char)(word ? tolower(ch) : toupper(ch));
			word = isalpha(ch) || (ch & 0x80);
		} else {
			p[i] = (char)(ch & 0x80 ? ch : mode ? toupper(ch) : tolower(ch));
		}
	}
	p[len] = '\0';
	*out = (fx_val){.type = FX_STR, .str = p, .len = len};
}

/* Joins the text of every argument; ranges only in CONCAT/TEXTJOIN. */
typedef struct joiner {
	sbx_buf b;
	const char *sep;
	uint32_t sep_len;
	bool skip_empty, any;
	fx_err err;
} joiner;

static void join_one(fx_ctx *c, joiner *j, const fx_val *v)
{
	const char *s;
	uint32_t len;
	fx_err e = FX_E_NONE;

	if (j->err)
		return;
	if (!sbx_fx__to_str(c, v, &s, &len, &e)) {
		j->err = e;
		return;
	}
	if (j->skip_empty && len == 0)
		return;
	if ((j->any && j->sep_len && sbx_buf_append(&j->b, j->sep, j->sep_len) < 0) ||
	    sbx_buf_append(&j->b, s, len) < 0)
		j->err = FX_E_VALUE;
	j->any = true;
}

static bool join_cell(fx_ctx *c, uint32_t row UNUSED, uint32_t col UNUSED, const fx_val *v,
		      void *ud)
{
	joiner *j = ud;

	join_one(c, j, v);
	return !j->err;
}

static void join(fx_ctx *c, const fx_node *call, const uint32_t *args, uint32_t first, joiner *j,
		 bool ranges, fx_val *out)
{
	for (uint32_t i = first; i < call->nargs && !j->err; i++) {
		fx_val v;

		sbx_fx__eval(c, args[i], &v);
		if (v.type == FX_REF && ranges) {
			sbx_fx__each(c, &v.ref, join_cell, j);
			continue;
		}
		if (v.type == FX_REF) {
			fx_val d;
			sbx_fx__deref(c, &v, &d);
			v = d;
		}
		join_one(c, j, &v);
	}
	if (j->err)
		sbx_fx__set_err(out, j->err);
	else
		sbx_fx__set_str(c, out, sbx_buf_str(&j->b), j->b.len);
	sbx_buf_free(&j->b);
}

static void fn_concatenate(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	joiner j = {.b = SBX_BUF_INIT(FX_MAX_STRING)};

	join(c, call, args, 0, &j, false, out);
}

static void fn_concat(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	joiner j = {.b = SBX_BUF_INIT(FX_MAX_STRING)};

	join(c, call, args, 0, &j, true, out);
}

static void fn_textjoin(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	joiner j = {.b = SBX_BUF_INIT(FX_MAX_STRING)};
	bool skip;

	if (!arg_str(c, args[0], &j.sep, &j.sep_len, out))
		return;
	if (!sbx_fx__arg_bool(c, args[1], &skip, out))
		return;
	j.skip_empty = skip;
	join(c, call, args, 2, &j, true, out);
}

static void fn_rept(fx_ctx *c, const fx_node *call UNUSED, const uint32_t *args, fx_val *out)
{
	const char *s;
	uint32_t len;
	double n;
	sbx_buf b = SBX_BUF_INIT(FX_MAX_STRING);

	if (!arg_str(c, args[0], &s, &len, out) || !sbx_fx__arg_num(c, args[1], &n, out))
		return;
	if (n < 0) {
		sbx_fx__set_err(out, FX_E_ARG);
		return;
	}
	if (len == 0 || n < 1) {
		sbx_fx__set_str(c, out, "", 0);
		return;
	}
	for (double k = 0; k < trunc(n); k++)
		if (sbx_buf_append(&b, s, len) < 0) {
			sbx_fx__set_err(out, FX_E_VALUE);
			return;
		}
	sbx_fx__set_str(c, out, sbx_buf_str(&b), b.len);
	sbx_buf_free(&b);
}

static void fn_exact(fx_ctx *c, const fx_node *call UNUSED, const uint32_t *args, fx_val *out)
{
	const char *a, *b;
	uint32_t la, lb;

	if (arg_str(c, args[0], &a, &la, out) && arg_str(c, args[1], &b, &lb, out))
		sbx_fx__set_bool(out, la == lb && memcmp(a, b, la) == 0);
}

static void fn_substitute(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	const char *s, *from, *to;
	uint32_t ls, lf, lt;
	double which = 0;
	sbx_buf b = SBX_BUF_INIT(FX_MAX_STRING);
	int r = 0;

	if (!arg_str(c, args[0], &s, &ls, out) || !arg_str(c, args[1], &from, &lf, out) ||
	    !arg_str(c, args[2], &to, &lt, out))
		return;
	if (sbx_fx__given(c, call, args, 3) && (!sbx_fx__arg_num(c, args[3], &which, out)))
		return;
	if (lf == 0) {
		sbx_fx__set_str(c, out, s, ls);
		return;
	}
	double seen = 0;
	for (uint32_t i = 0; i < ls && r == 0;) {
		if (i + lf <= ls && memcmp(s + i, from, lf) == 0 &&
		    (which < 1 || ++seen == trunc(which))) {
			r = sbx_buf_append(&b, to, lt);
			i += lf;
		} else {
			if (i + lf <= ls && memcmp(s + i, from, lf) == 0) {
				r = sbx_buf_append(&b, s + i, lf);
				i += lf;
				continue;
			}
			r = sbx_buf_putc(&b, s[i++]);
		}
	}
	if (r < 0)
		sbx_fx__set_err(out, FX_E_VALUE);
	else
		sbx_fx__set_str(c, out, sbx_buf_str(&b), b.len);
	sbx_buf_free(&b);
}

/* FIND (case-sensitive) and SEARCH (case-insensitive, no wildcards: unsupported if any). */
static void find_fn(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	bool fold = sbx_fx__variant(call);
	const char *needle, *hay;
	uint32_t ln, lh, from;
	double start = 1;

	if (!arg_str(c, args[0], &needle, &ln, out) || !arg_str(c, args[1], &hay, &lh, out))
		return;
	if (sbx_fx__given(c, call, args, 2) && !sbx_fx__arg_num(c, args[2], &start, out))
		return;
	if (fold &&
	    (memchr(needle, '*', ln) || memchr(needle, '?', ln) || memchr(needle, '~', ln))) {
		sbx_fx__unsupported(c, out, "SEARCH with wildcards");
		return;
	}
	start = trunc(start);
	if (start < 1 || start > char_count(hay, lh) + (ln == 0)) {
		sbx_fx__set_err(out, FX_E_VALUE);
		return;
	}
	from = char_offset(hay, lh, start - 1);
	for (uint32_t i = from; i + ln <= lh; i++)
		if (fold ? strncasecmp(hay + i, needle, ln) == 0
			 : memcmp(hay + i, needle, ln) == 0) {
			sbx_fx__set_num(out, char_count(hay, i) + 1);
			return;
		}
	sbx_fx__set_err(out, FX_E_VALUE);
}

static void fn_value(fx_ctx *c, const fx_node *call UNUSED, const uint32_t *args, fx_val *out)
{
	fx_val v;
	double d;

	sbx_fx__eval_scalar(c, args[0], &v);
	if (v.type == FX_ERR) {
		*out = v;
		return;
	}
	if (v.type == FX_NUM || v.type == FX_BOOL || v.type == FX_EMPTY) {
		sbx_fx__set_num(out, v.num);
		return;
	}
	/* Leading/trailing spaces and a trailing percent sign are fine for VALUE. */
	const char *s = v.str;
	uint32_t len = v.len;
	while (len && *s == ' ') {
		s++;
		len--;
	}
	while (len && s[len - 1] == ' ')
		len--;
	if (sbx_fx__parse_number(s, len, &d))
		sbx_fx__set_num(out, d);
	else if (len > 1 && s[len - 1] == '%' && sbx_fx__parse_number(s, len - 1, &d))
		sbx_fx__set_num(out, d / 100);
	else
		sbx_fx__set_err(out, FX_E_ARG);
}

/* ---- TEXT: the common number formats ---- */

static bool has_date_codes(const char *f)
{
	bool quoted = false;

	for (; *f; f++) {
		if (*f == '"')
			quoted = !quoted;
		else if (!quoted && strchr("yYdDhHsS", *f))
			return true;
	}
	return false;
}

/* "0", "0.00", "#,##0.00", "0%", "$#,##0", "0.0 kg": digits, grouping, percent, literals. */
static bool format_number(double v, const char *f, sbx_buf *b)
{
	const char *p = f, *body_start, *body_end;
	int decimals = 0, min_int = 0, r = 0;
	bool group = false, pct = false, in_frac = false;
	char num[400];

	if (strchr(f, ';') || strchr(f, 'E') || strchr(f, 'e') || strchr(f, '?') ||
	    strchr(f, '/') || strchr(f, '['))
		return false;
	/* Prefix literals, then the number body, then suffix literals. */
	while (*p && !strchr("0#.,", *p))
		p++;
	body_start = p;
	while (*p && strchr("0#.,", *p)) {
		if (*p == '.')
			in_frac = true;
		else if (*p == ',')
			group = !in_frac;
		else if (in_frac)
			decimals++;
		else if (*p == '0')
			min_int++;
		p++;
	}
	body_end = p;
	if (body_start == body_end || decimals > 15 || min_int > 30 || !(fabs(v) < 1e300))
		return false;
	for (const char *q = f; *q; q++)
		pct |= *q == '%';
	if (pct)
		v *= 100;
	/* TEXT(1.005,"0.00") is "1.01", TEXT(1.005,"0%") "100%" (100.49999999999999). */
	if (sbx_fx__format_fixed(fabs(v), decimals, num, sizeof(num)) < 0)
		return false;
	bool zero = strspn(num, "0.") == strlen(num);
	char *dot = strchr(num, '.');
	size_t int_len = dot ? (size_t)(dot - num) : strlen(num);
	const char *ip = num;
	if (int_len == 1 && num[0] == '0' && min_int == 0) {
		ip++;
		int_len = 0;
	}
	bool neg = v < 0 && !zero;
	/* The sign goes before any literal prefix: -$78.01. */
	if (neg)
		r = sbx_buf_putc(b, '-');
	for (const char *q = f; q < body_start && r == 0; q++)
		if (*q != '"' && *q != '\\')
			r = sbx_buf_putc(b, *q);
	for (int k = (int)int_len; k < min_int && r == 0; k++)
		r = sbx_buf_putc(b, '0');
	for (size_t i = 0; i < int_len && r == 0; i++) {
		r = sbx_buf_putc(b, ip[i]);
		if (group && r == 0 && (int_len - 1 - i) % 3 == 0 && i + 1 < int_len)
			r = sbx_buf_putc(b, ',');
	}
	if (decimals && r == 0)
		r = sbx_buf_puts(b, dot);
	for (const char *q = body_end; *q && r == 0; q++)
		if (*q != '"' && *q != '\\')
			r = sbx_buf_putc(b, *q);
	return r == 0;
}

static bool format_date(double v, const char *f, sbx_buf *b)
{
	int64_t y;
	unsigned m, d;
	int r = 0;

	if (!(v >= 0 && v <= 2958465)) /* 9999-12-31 */
		return false;
	sbx_sheet__civil_from_days((int64_t)floor(v) - 25569, &y, &m, &d);
	for (const char *p = f; *p && r == 0;) {
		size_t n = 1;
		char ch = (char)tolower((unsigned char)*p);

		while (p[n] && tolower((unsigned char)p[n]) == ch && strchr("ymd", ch))
			n++;
		if (ch == 'y')
			r = n <= 2 ? sbx_buf_printf(b, "%02d", (int)(y % 100))
				   : sbx_buf_printf(b, "%04lld", (long long)y);
		else if (ch == 'm' && n <= 2)
			r = sbx_buf_printf(b, n == 1 ? "%u" : "%02u", m);
		else if (ch == 'd' && n <= 2)
			r = sbx_buf_printf(b, n == 1 ? "%u" : "%02u", d);
		else if (strchr("mdhs", ch))
			return false; /* month/day names, times: not native */
		else if (*p != '"' && *p != '\\')
			r = sbx_buf_append(b, p, n);
		p += n;
	}
	return r == 0;
}

static void fn_text(fx_ctx *c, const fx_node *call UNUSED, const uint32_t *args, fx_val *out)
{
	fx_val v;
	const char *f;
	uint32_t flen;
	double d;
	fx_err e = FX_E_NONE;
	sbx_buf b = SBX_BUF_INIT(FX_MAX_STRING);
	bool ok;

	sbx_fx__eval_scalar(c, args[0], &v);
	if (!arg_str(c, args[1], &f, &flen, out))
		return;
	if (v.type == FX_STR) {
		if (!sbx_fx__parse_number(v.str, v.len, &d)) {
			*out = v; /* text passes through a number format */
			return;
		}
	} else if (!sbx_fx__to_num(c, &v, &d, &e)) {
		sbx_fx__set_err(out, e);
		return;
	}
	if (strcasecmp(f, "General") == 0 || flen == 0) {
		char tmp[40];
		sbx_fx__format_text_general(d, tmp);
		ok = flen != 0 && sbx_buf_puts(&b, tmp) == 0;
		if (flen == 0)
			ok = true;
	} else {
		ok = has_date_codes(f) ? format_date(d, f, &b) : format_number(d, f, &b);
	}
	if (!ok) {
		sbx_buf_free(&b);
		sbx_fx__unsupported(c, out, "unsupported TEXT format \"%.40s\"", f);
		return;
	}
	sbx_fx__set_str(c, out, sbx_buf_str(&b), b.len);
	sbx_buf_free(&b);
}

/* ---- dates ---- */

#define EPOCH (-25569) /* 1899-12-30 in days from 1970-01-01 */

static void fn_date(fx_ctx *c, const fx_node *call UNUSED, const uint32_t *args, fx_val *out)
{
	double y, m, d;

	if (!sbx_fx__arg_num(c, args[0], &y, out) || !sbx_fx__arg_num(c, args[1], &m, out) ||
	    !sbx_fx__arg_num(c, args[2], &d, out))
		return;
	y = trunc(y);
	m = trunc(m);
	d = trunc(d);
	if (y < 0 || y > 9999 || fabs(m) > 1e6 || fabs(d) > 1e8) {
		sbx_fx__set_err(out, FX_E_ARG);
		return;
	}
	if (y < 100) {
		/* Two-digit years follow the 1930-2029 window: not native. */
		sbx_fx__unsupported(c, out, "DATE with a two-digit year");
		return;
	}
	/* Months and days past their ends carry over, as in LibreOffice. */
	double months = y * 12 + (m - 1);
	int64_t yy = (int64_t)floor(months / 12);
	unsigned mm = (unsigned)(months - (double)yy * 12) + 1;
	int64_t days = sbx_sheet__days_from_civil(yy, mm, 1) - EPOCH + (int64_t)d - 1;
	sbx_fx__set_num(out, (double)days);
}

static void date_part(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	int part = sbx_fx__variant(call);
	double v;
	int64_t y;
	unsigned m, d;

	if (!sbx_fx__arg_num(c, args[0], &v, out))
		return;
	if (v < 0 || v > 2958465) {
		sbx_fx__set_err(out, FX_E_ARG);
		return;
	}
	sbx_sheet__civil_from_days((int64_t)floor(v) + EPOCH, &y, &m, &d);
	sbx_fx__set_num(out, part == 0 ? (double)y : part == 1 ? m : d);
}

const fx_func sbx_fx__text_funcs[] = {
	{"LEN", 1, 1, fn_len, 0},
	{"LEFT", 1, 2, left_right, 1},
	{"RIGHT", 1, 2, left_right, 0},
	{"MID", 3, 3, fn_mid, 0},
	{"TRIM", 1, 1, fn_trim, 0},
	{"UPPER", 1, 1, map_case, 1},
	{"LOWER", 1, 1, map_case, 0},
	{"PROPER", 1, 1, map_case, 2},
	{"CONCATENATE", 1, 255, fn_concatenate, 0},
	{"CONCAT", 1, 255, fn_concat, 0},
	{"TEXTJOIN", 3, 255, fn_textjoin, 0},
	{"REPT", 2, 2, fn_rept, 0},
	{"EXACT", 2, 2, fn_exact, 0},
	{"SUBSTITUTE", 3, 4, fn_substitute, 0},
	{"FIND", 2, 3, find_fn, 0},
	{"SEARCH", 2, 3, find_fn, 1},
	{"VALUE", 1, 1, fn_value, 0},
	{"TEXT", 2, 2, fn_text, 0},
	{"DATE", 3, 3, fn_date, 0},
	{"YEAR", 1, 1, date_part, 0},
	{"MONTH", 1, 1, date_part, 1},
	{"DAY", 1, 1, date_part, 2},
	{NULL, 0, 0, NULL, 0},
};

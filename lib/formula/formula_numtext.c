/* SPDX-License-Identifier: MIT */
/*
 * Numbers as text the way LibreOffice 7.4 writes them. Both entry points
 * come down to its rtl::math::doubleToUString: take the shortest digits that
 * read back to the value, round them half up to at most 15 significant
 * digits (and to the decimals asked for, never more than 20), print them in
 * fixed or scientific notation, drop trailing decimal zeros. Integers below
 * 2^53 are written whole.
 *
 * - A number in a formula's text (=1/3&"", CONCATENATE, LEFT of a number)
 *   goes through ScInterpreter::GetStringFromDouble, the "input line" string
 *   of the standard format: doubleToUString with StringFormat_Automatic and
 *   DecimalPlaces_Max. ODS export writes office:value with the same call,
 *   which is why LibreOffice's files hold at most 20 decimals.
 * - TEXT(x,"General") is SvNumberformat::ImpGetOutputStandard: past 1e15 in
 *   scientific notation with 14 decimals kept and a two-digit exponent,
 *   otherwise fixed notation to 20 decimals (tiny values become "0" or "-0").
 * - A number format's digits (TEXT(x,"0.00")) are doubleToUString's fixed
 *   notation with that many decimals: the shortest digits rounded once, at
 *   that decimal or the 15th significant digit, whichever comes first.
 * Probed against soffice 7.4.7; tests/data/formula/corpus.txt holds the
 * cases.
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formula-internal.h"

/* Decimal digits d[0..n) with d[0] worth 10^exp: the shortest that read back. */
typedef struct {
	char d[24];
	int n;
	int exp;
} digits;

static void shortest(double a, digits *out)
{
	char tmp[48];
	const char *p;

	/* 15 digits always read back to the nearest 15-digit decimal, if any. */
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, a);
		if (strtod(tmp, NULL) == a)
			break;
	}
	out->n = 0;
	for (p = tmp; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			out->d[out->n++] = *p;
	out->exp = atoi(p + 1);
	while (out->n > 1 && out->d[out->n - 1] == '0')
		out->n--;
}

/* Keeps the first `keep` digits, rounding half up; 9.99 to 2 digits is 10. */
static void round_to(digits *g, int keep)
{
	bool up;

	if (keep < 0 || g->n <= keep)
		return;
	up = g->d[keep] >= '5';
	g->n = keep;
	for (int i = keep - 1; up && i >= 0; i--) {
		if (g->d[i] == '9') {
			g->d[i] = '0';
		} else {
			g->d[i]++;
			up = false;
		}
	}
	if (up) {
		g->d[0] = '1';
		g->n = 1;
		g->exp++;
	}
}

static char digit_at(const digits *g, int i)
{
	return i < g->n ? g->d[i] : '0';
}

/*
 * Writes g with `decimals` places: fixed, or scientific with an exponent of
 * at least `exp_width` digits. Trailing decimal zeros go if `trim`.
 */
static void put(char *p, bool neg, const digits *g, bool sci, int decimals, bool trim,
		int exp_width)
{
	int count = decimals + 1 + (sci ? 0 : g->exp); /* digits printed */
	char *dot = NULL;

	if (neg)
		*p++ = '-';
	if (sci || g->exp >= 0) {
		int point = sci ? 1 : g->exp + 1;
		for (int i = 0; i < count; i++) {
			if (i == point) {
				dot = p;
				*p++ = '.';
			}
			*p++ = digit_at(g, i);
		}
	} else {
		*p++ = '0';
		if (decimals > 0) {
			dot = p;
			*p++ = '.';
		}
		for (int i = count <= 0 ? decimals : -g->exp - 1; i > 0; i--)
			*p++ = '0';
		for (int i = 0; i < count; i++)
			*p++ = digit_at(g, i);
	}
	if (trim && dot) {
		while (p[-1] == '0')
			p--;
		if (p - 1 == dot)
			p--;
	}
	if (sci) {
		int e = abs(g->exp);
		*p++ = 'E';
		*p++ = g->exp < 0 ? '-' : '+';
		if (exp_width >= 3 || e >= 100)
			*p++ = (char)('0' + e / 100);
		*p++ = (char)('0' + e / 10 % 10);
		*p++ = (char)('0' + e % 10);
	}
	*p = '\0';
}

/* Integers below 2^53 are printed whole, whatever the format. */
static bool put_integer(double v, char buf[static 40])
{
	if (fabs(v) >= 0x1p53 || v != floor(v))
		return false;
	snprintf(buf, 40, "%.0f", v);
	return true;
}

/* The four largest doubles, which LibreOffice writes with 17 digits. */
static double near_max(void)
{
	double b = DBL_MAX;

	for (int i = 0; i < 4; i++)
		b = nextafter(b, 0);
	return b;
}

void sbx_fx__format_general(double v, char buf[static 40])
{
	double a = fabs(v);
	digits g;
	bool sci;
	int decimals, sig = 15;

	if (v == 0 || !isfinite(v)) {
		strcpy(buf, "0");
		return;
	}
	if (put_integer(v, buf))
		return;
	shortest(a, &g);
	sci = g.exp <= -15 || g.exp >= 15;
	if (a >= near_max()) {
		sig = 17; /* 15 digits would round past DBL_MAX */
		decimals = 16;
		sci = true;
	} else if (sci) {
		decimals = 14;
	} else {
		decimals = g.exp < 14 ? 14 - g.exp : 15;
		if (decimals > 20)
			decimals = 20;
		if (decimals + 1 + g.exp < sig)
			sig = decimals + 1 + g.exp;
	}
	round_to(&g, sig);
	put(buf, v < 0, &g, sci, decimals, true, 3);
}

void sbx_fx__format_text_general(double v, char buf[static 40])
{
	double a = fabs(v);
	digits g;

	if (v == 0 || !isfinite(v)) {
		strcpy(buf, "0");
		return;
	}
	shortest(a, &g);
	if (a > 1e15) {
		round_to(&g, 15);
		put(buf, v < 0, &g, true, 14, false, 2);
		return;
	}
	if (put_integer(v, buf))
		return;
	/* 20 decimals: a value below 5e-21 keeps no digit at all. */
	if (21 + g.exp < 0) {
		strcpy(buf, v < 0 ? "-0" : "0");
		return;
	}
	round_to(&g, 21 + g.exp < 15 ? 21 + g.exp : 15);
	if (g.n == 0) {
		strcpy(buf, v < 0 ? "-0" : "0");
		return;
	}
	put(buf, v < 0, &g, false, 20, true, 0);
}

int sbx_fx__format_fixed(double a, int decimals, char *out, size_t cap)
{
	digits g;

	assert(a >= 0 && decimals >= 0 && decimals <= 15);
	if (!isfinite(a) || a >= 1e300 || cap < 330)
		return -1;
	if (a < 0x1p53 && a == floor(a))
		return snprintf(out, cap, "%.0f%s%.*d", a, decimals ? "." : "", decimals, 0);
	shortest(a, &g);
	if (decimals + 1 + g.exp < 0)
		g.n = 0; /* nothing reaches the last decimal */
	else
		round_to(&g, decimals + 1 + g.exp < 15 ? decimals + 1 + g.exp : 15);
	if (g.n == 0)
		g.exp = 0;
	put(out, false, &g, false, decimals, false, 0);
	return (int)strlen(out);
}

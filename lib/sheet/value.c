/* SPDX-License-Identifier: MIT */
/* Cell values as text: numbers, dates, times, kinds. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sheet-internal.h"

const char *sbx_cell_kind_name(sbx_cell_kind k)
{
	static const char *const names[] = {"empty", "number",	   "string",   "boolean", "date",
					    "time",  "percentage", "currency", "error"};
	return (unsigned)k < SBX_ELEMENTSOF(names) ? names[k] : "unknown";
}

bool sbx_cell_kind_is_numeric(sbx_cell_kind k)
{
	return k == SBX_CELL_NUMBER || k == SBX_CELL_BOOL || k == SBX_CELL_DATE ||
	       k == SBX_CELL_TIME || k == SBX_CELL_PERCENT || k == SBX_CELL_CURRENCY;
}

bool sbx_cell_is_empty(const sbx_cell *c)
{
	return c->kind == SBX_CELL_EMPTY && !c->formula;
}

/*
 * The common case without snprintf and strtod: v is m / 10^k exactly as the
 * nearest double, for an integer m of at most 15 digits and k <= 6, and %g
 * would print it in fixed notation (1e-4 <= |v| < 1e15). Such a v rounds to
 * m / 10^k at 15 significant digits, so the text is the one the %.15g
 * branch below prints, byte for byte. False when v is not of that kind.
 */
static bool format_short_decimal(double v, char buf[static 32])
{
	static const double p10[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
	double a = fabs(v);
	char digits[24];
	size_t n = 0, nd = 0;
	int k;
	long long m = 0;

	if (!(a >= 1e-4 && a < 1e15))
		return false;
	for (k = 0; k <= 6; k++) {
		double scaled = a * p10[k];
		if (scaled >= 1e15)
			return false;
		m = (long long)scaled;
		if ((double)m == scaled && (double)m / p10[k] == a)
			break;
		m = llround(scaled);
		if ((double)m / p10[k] == a && (double)m < 1e15)
			break;
	}
	if (k > 6 || (k > 0 && m % 10 == 0)) /* a trailing zero: %g would drop it */
		return false;
	do {
		digits[nd++] = (char)('0' + m % 10);
		m /= 10;
	} while (m > 0);
	while (nd <= (size_t)k) /* a leading zero before the point */
		digits[nd++] = '0';
	if (v < 0)
		buf[n++] = '-';
	while (nd > 0) {
		if (nd == (size_t)k)
			buf[n++] = '.';
		buf[n++] = digits[--nd];
	}
	buf[n] = '\0';
	return true;
}

char *sbx_sheet_format_number(double v, char buf[static 32])
{
	if (!isfinite(v)) {
		strcpy(buf, isnan(v) ? "NaN" : (v > 0 ? "Infinity" : "-Infinity"));
		return buf;
	}
	if (v == 0.0) {
		strcpy(buf, "0");
		return buf;
	}
	if (format_short_decimal(v, buf))
		return buf;
	/* %.15g is exact for almost every value people type; widen only when needed. */
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, 32, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant). */
int64_t sbx_sheet__days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	const int64_t era = (y >= 0 ? y : y - 399) / 400;
	const unsigned yoe = (unsigned)(y - era * 400);
	const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

void sbx_sheet__civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	const unsigned doe = (unsigned)(z - era * 146097);
	const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	const unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

/* 1899-12-30, day 0 of the serial numbers. */
#define EPOCH_OFFSET (-25569)

static int parse_uint(const char **p, int digits, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < digits; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)((*p)[i] - '0');
	}
	*p += digits;
	*out = v;
	return 0;
}

int sbx_sheet_parse_date(const char *iso, double *serial)
{
	const char *p = iso;
	unsigned y, mo, d, h = 0, mi = 0, s = 0;
	double frac = 0.0;
	bool neg = false;

	if (*p == '-') {
		neg = true;
		p++;
	}
	if (parse_uint(&p, 4, &y) < 0 || *p++ != '-' || parse_uint(&p, 2, &mo) < 0 || *p++ != '-' ||
	    parse_uint(&p, 2, &d) < 0)
		return -EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > 31)
		return -EINVAL;
	if (*p == 'T' || *p == ' ') {
		p++;
		if (parse_uint(&p, 2, &h) < 0 || *p++ != ':' || parse_uint(&p, 2, &mi) < 0)
			return -EINVAL;
		if (*p == ':') {
			p++;
			if (parse_uint(&p, 2, &s) < 0)
				return -EINVAL;
			if (*p == '.' || *p == ',') {
				double scale = 0.1;
				p++;
				if (*p < '0' || *p > '9')
					return -EINVAL;
				while (*p >= '0' && *p <= '9') {
					frac += (*p - '0') * scale;
					scale /= 10;
					p++;
				}
			}
		}
		if (h > 24 || mi > 59 || s > 60)
			return -EINVAL;
	}
	if (*p == 'Z')
		p++;
	else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':')
		p += 6; /* a zone offset: wall-clock time is kept */
	if (*p)
		return -EINVAL;
	int64_t days =
		sbx_sheet__days_from_civil(neg ? -(int64_t)y : (int64_t)y, mo, d) - EPOCH_OFFSET;
	*serial = (double)days + (h * 3600.0 + mi * 60.0 + s + frac) / 86400.0;
	return 0;
}

int sbx_sheet_parse_time(const char *iso, double *days)
{
	const char *p = iso;
	double total = 0.0;
	bool neg = false, any = false, in_time = false;

	if (*p == '-') {
		neg = true;
		p++;
	}
	if (*p++ != 'P')
		return -EINVAL;
	while (*p) {
		char *end;
		double v;
		if (*p == 'T') {
			if (in_time)
				return -EINVAL;
			in_time = true;
			p++;
			continue;
		}
		if ((*p < '0' || *p > '9') && *p != '.')
			return -EINVAL;
		errno = 0;
		v = strtod(p, &end);
		if (end == p || errno || v < 0 || !isfinite(v))
			return -EINVAL;
		p = end;
		switch (*p) {
		case 'D':
			if (in_time)
				return -EINVAL;
			total += v;
			break;
		case 'H':
			total += v / 24.0;
			break;
		case 'M':
			if (!in_time)
				return -EINVAL;
			total += v / 1440.0;
			break;
		case 'S':
			total += v / 86400.0;
			break;
		default:
			return -EINVAL;
		}
		if (*p != 'D' && !in_time)
			return -EINVAL;
		p++;
		any = true;
	}
	if (!any)
		return -EINVAL;
	*days = neg ? -total : total;
	return 0;
}

char *sbx_sheet_format_date(double serial, char buf[static 40])
{
	if (!isfinite(serial) || fabs(serial) > 1e9) {
		sbx_sheet_format_number(serial, buf);
		return buf;
	}
	double day = floor(serial);
	long long secs = llround((serial - day) * 86400.0);
	if (secs >= 86400) {
		day += 1;
		secs -= 86400;
	}
	int64_t y;
	unsigned m, d;
	char tmp[128];
	sbx_sheet__civil_from_days((int64_t)day + EPOCH_OFFSET, &y, &m, &d);
	if (secs == 0)
		snprintf(tmp, sizeof(tmp), "%04lld-%02u-%02u", (long long)y, m, d);
	else
		snprintf(tmp, sizeof(tmp), "%04lld-%02u-%02uT%02lld:%02lld:%02lld", (long long)y, m,
			 d, secs / 3600, secs / 60 % 60, secs % 60);
	memcpy(buf, tmp, 39);
	buf[39] = '\0';
	return buf;
}

char *sbx_sheet_format_time(double days, char buf[static 40])
{
	if (!isfinite(days) || fabs(days) > 1e9) {
		sbx_sheet_format_number(days, buf);
		return buf;
	}
	char tmp[128];
	long long secs = llround(fabs(days) * 86400.0);
	snprintf(tmp, sizeof(tmp), "%s%02lld:%02lld:%02lld", days < 0 ? "-" : "", secs / 3600,
		 secs / 60 % 60, secs % 60);
	memcpy(buf, tmp, 39);
	buf[39] = '\0';
	return buf;
}

int sbx_cell_to_text(const sbx_cell *c, sbx_buf *out)
{
	char tmp[40];

	switch (c->kind) {
	case SBX_CELL_EMPTY:
		return 0;
	case SBX_CELL_STRING:
	case SBX_CELL_ERROR:
		return sbx_buf_puts(out, c->text ? c->text : "");
	case SBX_CELL_BOOL:
		return sbx_buf_puts(out, c->number != 0.0 ? "TRUE" : "FALSE");
	case SBX_CELL_DATE:
		return sbx_buf_puts(out, sbx_sheet_format_date(c->number, tmp));
	case SBX_CELL_TIME:
		return sbx_buf_puts(out, sbx_sheet_format_time(c->number, tmp));
	default:
		return sbx_buf_puts(out, sbx_sheet_format_number(c->number, tmp));
	}
}

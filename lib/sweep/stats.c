/* SPDX-License-Identifier: MIT */
/* The numbers a summary and a comparison quote, each with its interval. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/sweep.h"

void sbx_sweep_wilson(unsigned k, unsigned n, double z, double *lo, double *hi)
{
	double p, z2n, centre, half;

	if (n == 0) {
		*lo = 0;
		*hi = 1;
		return;
	}
	p = (double)k / n;
	z2n = z * z / n;
	centre = (p + z2n / 2) / (1 + z2n);
	half = z * sqrt(p * (1 - p) / n + z2n / (4.0 * n)) / (1 + z2n);
	*lo = fmax(0, centre - half);
	*hi = fmin(1, centre + half);
}

double sbx_sweep_pass_at_k(unsigned n, unsigned c, unsigned k)
{
	double q = 1;

	if (k == 0 || k > n || c > n)
		return NAN;
	if (n - c < k)
		return 1; /* every k-subset holds a pass */
	/* C(n-c, k) / C(n, k) as a product, so no factorial overflows. */
	for (unsigned i = n - c + 1; i <= n; i++)
		q *= 1.0 - (double)k / i;
	return 1 - q;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Moves the k-th smallest of v[0..n) to v[k], smaller ones before it and
 * larger ones after (Hoare's selection, median-of-three pivots): linear on
 * average, where sorting a million-episode cell for two quantiles was most of
 * a big summary's time.
 */
static void select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
		double a = v[lo], b = v[mid], c = v[hi], pivot, t;

		pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				t = v[i], v[i] = v[j], v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return; /* between the two halves: equal to the pivot */
	}
}

double sbx_sweep_quantile(double *v, size_t n, double q)
{
	double pos, frac, next;
	bool sorted = n <= 64;
	size_t i;

	if (n == 0)
		return NAN;
	for (size_t j = 0; j < n && !sorted; j++)
		sorted = isnan(v[j]); /* NaN has no place in an order: sort as always */
	if (sorted)
		qsort(v, n, sizeof(*v), cmp_double);
	pos = q * (double)(n - 1);
	i = (size_t)pos;
	frac = pos - (double)i;
	if (!sorted)
		select_kth(v, n, i);
	if (i + 1 >= n)
		return v[i];
	next = v[i + 1];
	if (!sorted) /* the next order statistic: the least of what lies above v[i] */
		for (size_t j = i + 2; j < n; j++)
			next = v[j] < next ? v[j] : next;
	return v[i] + frac * (next - v[i]);
}

/* splitmix64: a small, good PRNG, so intervals are the same from run to run. */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * Above this many values the percentile bootstrap of a mean is replaced by
 * its normal limit (the mean ± z·sd/√n, clamped to the values' range): the
 * bootstrap costs iters × n draws (2,000 × 10,000 per cell of a million-
 * episode sweep, seconds in all), and at this size its own Monte Carlo error
 * (about 0.06 sd at 2,000 resamples) is as large as the normal limit's
 * (skewness / (6·√n) · (z² − 1): 0.04 sd for a 10% pass rate at n = 1,000).
 */
#define BOOTSTRAP_NORMAL_ABOVE 1000
#define Z95		       1.959963984540054

static void normal_limit(const double *v, size_t n, double *lo, double *hi)
{
	double sum = 0, sq = 0, mean, half, min = v[0], max = v[0];

	for (size_t i = 0; i < n; i++) {
		sum += v[i];
		min = fmin(min, v[i]);
		max = fmax(max, v[i]);
	}
	mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (v[i] - mean) * (v[i] - mean);
	half = Z95 * sqrt(sq / (double)n) / sqrt((double)n); /* the bootstrap's sd: /n */
	*lo = fmax(min, mean - half);
	*hi = fmin(max, mean + half);
}

void sbx_sweep_bootstrap_mean(const double *v, size_t n, unsigned iters, uint64_t seed, double *lo,
			      double *hi)
{
	double *means;

	if (n == 0) {
		*lo = *hi = NAN;
		return;
	}
	if (n > BOOTSTRAP_NORMAL_ABOVE) {
		normal_limit(v, n, lo, hi);
		return;
	}
	means = iters ? malloc(iters * sizeof(*means)) : NULL;
	if (!means) {
		*lo = *hi = NAN;
		return;
	}
	for (unsigned it = 0; it < iters; it++) {
		double sum = 0;

		for (size_t i = 0; i < n; i++)
			sum += v[next_rand(&seed) % n];
		means[it] = sum / (double)n;
	}
	*lo = sbx_sweep_quantile(means, iters, 0.025);
	*hi = sbx_sweep_quantile(means, iters, 0.975);
	free(means);
}

double sbx_sweep_sign_test(unsigned b, unsigned c)
{
	unsigned n = b + c, m = b < c ? b : c;
	double tail = 0, logp;

	if (n == 0)
		return 1;
	/* P(X <= m) for X ~ Bin(n, 1/2), summed in log space for large n. */
	for (unsigned i = 0; i <= m; i++) {
		logp = lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) - n * log(2.0);
		tail += exp(logp);
	}
	return fmin(1, 2 * tail);
}

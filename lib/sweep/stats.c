/* SPDX-License-Identifier: MIT */
/* The numbers a summary and a comparison quote, each with its interval. */
#include <math.h>
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

double sbx_sweep_quantile(double *v, size_t n, double q)
{
	double pos, frac;
	size_t i;

	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	pos = q * (double)(n - 1);
	i = (size_t)pos;
	frac = pos - (double)i;
	return i + 1 < n ? v[i] + frac * (v[i + 1] - v[i]) : v[n - 1];
}

/* splitmix64: a small, good PRNG, so intervals are the same from run to run. */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void sbx_sweep_bootstrap_mean(const double *v, size_t n, unsigned iters, uint64_t seed, double *lo,
			      double *hi)
{
	double *means;

	if (n == 0) {
		*lo = *hi = NAN;
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

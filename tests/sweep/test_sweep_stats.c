/* SPDX-License-Identifier: MIT */
/* The statistics against hand-computed values: Wilson, pass@k, the sign test, quantiles, the
 * bootstrap. */
#include "test_sweep.h"

/* ---- statistics ---- */

START_TEST(wilson_hand_computed)
{
	double lo, hi;

	/* 8/10 at 95%: centre (0.8 + z²/20)/(1 + z²/10), the textbook [0.4902, 0.9433]. */
	sbx_sweep_wilson(8, 10, 1.959963984540054, &lo, &hi);
	ck_assert_double_eq_tol(lo, 0.49016247153664183, 1e-12);
	ck_assert_double_eq_tol(hi, 0.9433178485456247, 1e-12);
	sbx_sweep_wilson(2, 5, 1.959963984540054, &lo, &hi);
	ck_assert_double_eq_tol(lo, 0.11762077423264783, 1e-12);
	ck_assert_double_eq_tol(hi, 0.769275718723987, 1e-12);
	/* The edges: never outside [0, 1], and 0/n still has a non-zero upper bound. */
	sbx_sweep_wilson(0, 4, 1.959963984540054, &lo, &hi);
	ck_assert_double_eq_tol(lo, 0, EPS);
	ck_assert_double_eq_tol(hi, 0.4898908364545973, 1e-12);
	sbx_sweep_wilson(12, 12, 1.959963984540054, &lo, &hi);
	ck_assert_double_eq_tol(lo, 0.7575059933447592, 1e-12);
	ck_assert_double_eq_tol(hi, 1, EPS);
	sbx_sweep_wilson(0, 0, 1.96, &lo, &hi);
	ck_assert(lo == 0 && hi == 1);
}
END_TEST

START_TEST(pass_at_k_unbiased)
{
	/* n = 5, c = 2: pass@1 = 2/5; pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10;
	 * pass@3 = 1 - C(3,3)/C(5,3) = 1 - 1/10; pass@4: every 4-subset holds a pass. */
	ck_assert_double_eq_tol(sbx_sweep_pass_at_k(5, 2, 1), 0.4, EPS);
	ck_assert_double_eq_tol(sbx_sweep_pass_at_k(5, 2, 2), 0.7, EPS);
	ck_assert_double_eq_tol(sbx_sweep_pass_at_k(5, 2, 3), 0.9, EPS);
	ck_assert_double_eq_tol(sbx_sweep_pass_at_k(5, 2, 4), 1, EPS);
	/* n = 10, c = 3, k = 5: 1 - C(7,5)/C(10,5) = 1 - 21/252. */
	ck_assert_double_eq_tol(sbx_sweep_pass_at_k(10, 3, 5), 1 - 21.0 / 252, EPS);
	ck_assert_double_eq_tol(sbx_sweep_pass_at_k(10, 0, 5), 0, EPS);
	ck_assert_double_eq_tol(sbx_sweep_pass_at_k(10, 10, 1), 1, EPS);
	ck_assert(isnan(sbx_sweep_pass_at_k(3, 1, 4)));
	ck_assert(isnan(sbx_sweep_pass_at_k(3, 1, 0)));
	/* Large n does not overflow: pass@1 is still c/n. */
	ck_assert_double_eq_tol(sbx_sweep_pass_at_k(100000, 25000, 1), 0.25, 1e-9);
}
END_TEST

START_TEST(sign_test_exact)
{
	/* 0 vs 6 discordant: 2 × (1/2)^6. */
	ck_assert_double_eq_tol(sbx_sweep_sign_test(0, 6), 0.03125, 1e-12);
	/* 1 vs 9: 2 × (1 + 10) / 1024. */
	ck_assert_double_eq_tol(sbx_sweep_sign_test(1, 9), 22.0 / 1024, 1e-12);
	ck_assert_double_eq_tol(sbx_sweep_sign_test(9, 1), 22.0 / 1024, 1e-12);
	ck_assert_double_eq_tol(sbx_sweep_sign_test(5, 5), 1, EPS);
	ck_assert_double_eq_tol(sbx_sweep_sign_test(0, 0), 1, EPS);
	/* 40 vs 60: the normal approximation says ~0.057; the exact value is 0.0569. */
	ck_assert_double_eq_tol(sbx_sweep_sign_test(40, 60), 0.056887933640, 1e-9);
}
END_TEST

static int cmp_double_asc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

START_TEST(quantiles_and_bootstrap)
{
	double v[] = {4, 1, 3, 2}, lo, hi, lo2, hi2;
	double c[] = {0.5, 0.5, 0.5};
	double m[] = {0, 1, 0, 1, 1, 0, 1, 1, 0, 1};

	ck_assert_double_eq_tol(sbx_sweep_quantile(v, 4, 0.5), 2.5, EPS);
	ck_assert_double_eq_tol(sbx_sweep_quantile(v, 4, 1), 4, EPS);
	ck_assert_double_eq_tol(sbx_sweep_quantile(v, 4, 0), 1, EPS);
	ck_assert(isnan(sbx_sweep_quantile(v, 0, 0.5)));
	sbx_sweep_bootstrap_mean(c, 3, 500, 1, &lo, &hi);
	ck_assert_double_eq_tol(lo, 0.5, EPS);
	ck_assert_double_eq_tol(hi, 0.5, EPS);
	/* Same data, same seed: the same interval; it holds the mean (0.6). */
	sbx_sweep_bootstrap_mean(m, 10, 2000, 7, &lo, &hi);
	sbx_sweep_bootstrap_mean(m, 10, 2000, 7, &lo2, &hi2);
	ck_assert(lo == lo2 && hi == hi2);
	ck_assert(lo < 0.6 && hi > 0.6 && lo >= 0 && hi <= 1);
	ck_assert(lo > 0.1 && hi < 1.0);
}
END_TEST

/* Selection, not sorting, for big inputs: the same quantiles as a sort gives. */
START_TEST(quantiles_by_selection_match_sorting)
{
	static double v[5000], w[5000];
	static const double qs[] = {0, 0.01, 0.25, 0.5, 0.95, 0.999, 1};
	uint64_t x = 99;

	for (size_t n = 65; n <= 5000; n = n * 3 + 1)
		for (int dup = 0; dup < 2; dup++)
			for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
				double pos = qs[k] * (double)(n - 1), want, got;
				size_t i = (size_t)pos;

				for (size_t j = 0; j < n; j++) {
					x = x * 6364136223846793005ULL + 1442695040888963407ULL;
					v[j] = dup ? (double)((x >> 33) % 7) : (double)(x >> 11);
					w[j] = v[j];
				}
				qsort(w, n, sizeof(*w), cmp_double_asc);
				want = i + 1 < n ? w[i] + (pos - (double)i) * (w[i + 1] - w[i])
						 : w[i];
				got = sbx_sweep_quantile(v, n, qs[k]);
				ck_assert_msg(got == want, "n %zu dup %d q %g: %g, sorted gives %g",
					      n, dup, qs[k], got, want);
			}
}
END_TEST

/*
 * Above 1,000 values the interval is the bootstrap's normal limit: it must
 * agree with the bootstrap itself at the size where one hands over to the
 * other, for a skewed pass rate (10%) and for spread-out fractional scores.
 */
START_TEST(bootstrap_hands_over_to_its_normal_limit)
{
	static double v[1001];
	uint64_t x = 12345;

	for (int shape = 0; shape < 2; shape++) {
		double blo, bhi, nlo, nhi, sd = 0, mean = 0;

		for (size_t i = 0; i < 1001; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			v[i] = shape == 0 ? (double)((x >> 33) % 10 == 0)
					  : (double)(x >> 40) / 16777216.0;
		}
		sbx_sweep_bootstrap_mean(v, 1000, 2000, 7, &blo, &bhi); /* the bootstrap */
		sbx_sweep_bootstrap_mean(v, 1001, 2000, 7, &nlo, &nhi); /* its normal limit */
		for (size_t i = 0; i < 1000; i++)
			mean += v[i] / 1000;
		for (size_t i = 0; i < 1000; i++)
			sd += (v[i] - mean) * (v[i] - mean) / 1000;
		sd = sqrt(sd / 1000); /* the sd of the mean */
		ck_assert_msg(fabs(blo - nlo) < 0.2 * sd && fabs(bhi - nhi) < 0.2 * sd,
			      "shape %d: bootstrap [%g, %g], normal limit [%g, %g], sd %g", shape,
			      blo, bhi, nlo, nhi, sd);
	}
	/* All equal: an interval of width 0, as the bootstrap gives. */
	for (size_t i = 0; i < 1001; i++)
		v[i] = 1;
	{
		double lo, hi;

		sbx_sweep_bootstrap_mean(v, 1001, 2000, 7, &lo, &hi);
		ck_assert(lo == 1 && hi == 1);
	}
}
END_TEST

void sweep_stats_cases(Suite *s)
{
	SBX_TEST_CASE(s, "stats", NULL, NULL, 0, wilson_hand_computed, pass_at_k_unbiased,
		      sign_test_exact, quantiles_and_bootstrap,
		      quantiles_by_selection_match_sorting,
		      bootstrap_hands_over_to_its_normal_limit);
}

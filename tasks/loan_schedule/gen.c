/* SPDX-License-Identifier: MIT */
/*
 * loan_schedule (hard): an annuity loan; the agent computes the monthly
 * payment, then month by month the interest, the principal repaid and the
 * balance (rounded to cents as it goes, the last payment clearing the
 * balance), and the total interest.
 */
#include <math.h>

#include "../common/gen.h"

GEN_TASK(loan_schedule, 0x6c6f616e7363ull /* "loansc" */)
{
	static const char *const headers[] = {"Month", "Payment", "Interest", "Principal_Paid",
					      "Balance"};
	sbx_sheet *s, *o, *ss, *so;
	sbx_book *bs = gen_book(g, "Loan", &s), *bo = gen_book(g, "Loan", &o);
	double principal = (double)gen_int(&g->rng, 50, 500) * 100;
	double annual = gen_decimal(&g->rng, 0.03, 0.12, 4);
	int months = (int)gen_int(&g->rng, 12, 36);
	double r = annual / 12, balance = principal, total_interest = 0;
	double payment = gen_round(principal * r / (1 - pow(1 + r, -months)), 2);

	ss = gen_sheet(g, bs, "Schedule");
	so = gen_sheet(g, bo, "Schedule");
	gen_str2(g, s, o, 0, 0, "Principal");
	gen_num2(g, s, o, 0, 1, principal);
	gen_str2(g, s, o, 1, 0, "Annual_Rate");
	gen_num2(g, s, o, 1, 1, annual);
	gen_str2(g, s, o, 2, 0, "Months");
	gen_num2(g, s, o, 2, 1, months);
	gen_str2(g, s, o, 4, 0, "Monthly_Payment");
	gen_str2(g, s, o, 5, 0, "Total_Interest");
	gen_headers(g, ss, so, headers, 5, 5);
	for (int m = 1; m <= months; m++) {
		double interest = gen_round(balance * r, 2);
		double pay = m == months ? gen_round(balance + interest, 2) : payment;
		double paid = gen_round(pay - interest, 2);

		balance = gen_round(balance - paid, 2);
		total_interest += interest;
		gen_num(g, so, (uint32_t)m, 0, m);
		gen_num(g, so, (uint32_t)m, 1, pay);
		gen_num(g, so, (uint32_t)m, 2, interest);
		gen_num(g, so, (uint32_t)m, 3, paid);
		gen_num(g, so, (uint32_t)m, 4, balance);
	}
	gen_num(g, o, 4, 1, payment);
	gen_num(g, o, 5, 1, gen_round(total_interest, 2));
	gen_save(g, bs, "files/loan.ods");
	gen_save(g, bo, "oracle/expected_loan.ods");
}

/* SPDX-License-Identifier: MIT */
/*
 * gui_sort_table (medium, GUI): a leaderboard to sort in Calc (Data > Sort):
 * by Points, highest first. Points and names are unique and no row starts
 * where it belongs, so the unsorted file scores 0.
 */
#include <stdio.h>

#include "../common/gen.h"

#define ROWS 30

GEN_TASK(gui_sort_table, 0x736f72747462ull /* "sorttb" */)
{
	static const char *const names[] = {"Ava", "Leo", "Mia", "Noah", "Zoe", "Ivan"};
	sbx_sheet *s, *o;
	sbx_book *bs = gen_book(g, "Scores", &s), *bo = gen_book(g, "Scores", &o);
	uint32_t perm[ROWS];
	double points[ROWS];
	char player[ROWS][32], club[ROWS][32];

	gen_str2(g, s, o, 0, 0, "Player");
	gen_str2(g, s, o, 0, 1, "Club");
	gen_str2(g, s, o, 0, 2, "Points");
	/* Sorted order first: unique, strictly falling points. */
	points[0] = (double)gen_int(&g->rng, 900, 999);
	for (uint32_t i = 0; i < ROWS; i++) {
		if (i)
			points[i] = points[i - 1] - (double)gen_int(&g->rng, 1, 25);
		snprintf(player[i], sizeof(player[i]), "%s_%02u", names[gen_int(&g->rng, 0, 5)],
			 (unsigned)gen_int(&g->rng, 10, 99) + 100 * i);
		snprintf(club[i], sizeof(club[i]), "Club %c%u", (char)('A' + i % 26), i);
	}
	/* The starting order: a shuffle with no fixed point. */
	gen_shuffle(&g->rng, perm, ROWS);
	for (uint32_t i = 0; i < ROWS; i++)
		if (perm[i] == i) {
			uint32_t j = (i + 1) % ROWS, t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
	for (uint32_t i = 0; i < ROWS; i++) {
		gen_str(g, s, i + 1, 0, player[perm[i]]);
		gen_str(g, s, i + 1, 1, club[perm[i]]);
		gen_num(g, s, i + 1, 2, points[perm[i]]);
		gen_str(g, o, i + 1, 0, player[i]);
		gen_str(g, o, i + 1, 1, club[i]);
		gen_num(g, o, i + 1, 2, points[i]);
	}
	gen_save(g, bs, "files/leaderboard.ods");
	gen_save(g, bo, "oracle/expected_leaderboard.ods");
}

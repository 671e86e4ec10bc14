/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "sbx/suggest.h"

/* Words longer than this are never typos of a command, option or task name. */
#define SUGGEST_MAX_LEN 64

unsigned sbx_edit_distance(const char *a, const char *b)
{
	/* Optimal string alignment over three rows: the swap needs the row before last. */
	unsigned rows[3][SUGGEST_MAX_LEN + 1];
	size_t la = strlen(a), lb = strlen(b);

	if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
		return 255;
	for (size_t j = 0; j <= lb; j++)
		rows[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned *cur = rows[i % 3], *prev = rows[(i - 1) % 3], *prev2 = rows[(i + 1) % 3];

		cur[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned cost = a[i - 1] != b[j - 1];
			unsigned d = prev[j - 1] + cost;

			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			cur[j] = d;
		}
	}
	return rows[la % 3][lb];
}

const char *sbx_suggest(const char *word, const char *const *cands, size_t n)
{
	size_t len = strlen(word);
	unsigned limit = len <= 4 ? 1 : (unsigned)(len / 3), best_d = limit + 1;
	const char *best = NULL;

	if (len == 0)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned d;

		if (!cands[i])
			continue;
		d = sbx_edit_distance(word, cands[i]);
		if (d < best_d) {
			best_d = d;
			best = cands[i];
		}
	}
	return best;
}

/* SPDX-License-Identifier: MIT */
#pragma once

/* "Did you mean": the likely intended word for a mistyped command, option or task. */

#include <stddef.h>

/*
 * The candidate closest to word by edit distance (insert, delete, substitute,
 * or swap two neighbours: each counts one), or NULL when none is close enough
 * to be a typo: at most 1 edit for words up to 4 characters, else at most a
 * third of the word's length. Ties go to the first candidate. NULL entries in
 * cands are skipped.
 */
const char *sbx_suggest(const char *word, const char *const *cands, size_t n);

/* The edit distance above between a and b, capped at 255 (long inputs). */
unsigned sbx_edit_distance(const char *a, const char *b);

/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/cleanup.h"
#include "sbx/sheet_ref.h"
#include "sbx/task.h"
#include "task_schema.h"

/* The keys every grading level (top and each case) accepts. */
#define OPTION_KEYS                                                                                \
	"tolerance", "relative_tolerance", "round", "trim", "ignore_case", "collapse_whitespace",  \
		"numeric_strings", "skip_empty", "strict", "formulas", "missing_sheet",            \
		"pass_threshold", "fail_threshold", "sheets", "ranges", "replace", "strip_chars"

void sbx_grading_opts_init(sbx_grading_opts *opts)
{
	*opts = (sbx_grading_opts){
		.abs_tol = 0.01,
		.rel_tol = 0,
		.round_digits = -1,
		.trim = true,
		.numeric_strings = true,
		.skip_empty = true,
		.formulas = SBX_FORMULA_IGNORE,
		.missing_sheet = SBX_MISSING_SHEET_MISMATCH,
		.pass_threshold = 1.0,
		.fail_threshold = 0,
	};
}

static void sheets_free(sbx_grading_sheet *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

static void ranges_free(sbx_grading_range *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].sheet);
	free(v);
}

/* The replace list: n_pairs (from, to) pairs, flat. */
static void replace_free(char **v, size_t n_pairs)
{
	sbx_strv_free_n(v, 2 * n_pairs);
}

void sbx_grading_opts_clear(sbx_grading_opts *opts)
{
	sheets_free(opts->sheets, opts->n_sheets);
	ranges_free(opts->ranges, opts->n_ranges);
	replace_free(opts->replace, opts->n_replace);
	free(opts->strip_chars);
	sbx_grading_opts_init(opts);
}

void sbx_grading_spec_clear(sbx_grading_spec *spec)
{
	if (!spec)
		return;
	for (size_t i = 0; i < spec->n_cases; i++) {
		free(spec->cases[i].name);
		free(spec->cases[i].output);
		free(spec->cases[i].oracle);
		sbx_grading_opts_clear(&spec->cases[i].opts);
	}
	free(spec->cases);
	spec->cases = NULL;
	spec->n_cases = 0;
}

/*
 * A copy of the n items of size bytes at v with each item's string (the
 * char * at str_off, NULL allowed) duplicated too; NULL for none, or when out
 * of memory (then nothing is left allocated).
 */
static void *items_dup(const void *v, size_t n, size_t size, size_t str_off)
{
	char *out = n ? malloc(n * size) : NULL;

	if (!out)
		return NULL;
	memcpy(out, v, n * size);
	for (size_t i = 0; i < n; i++) {
		char **str = (char **)(out + i * size + str_off);

		if (*str && !(*str = strdup(*str))) {
			while (i-- > 0)
				free(*(char **)(out + i * size + str_off));
			free(out);
			return NULL;
		}
	}
	return out;
}

/* Deep copy, so each case owns its selectors. */
static int opts_copy(const sbx_grading_opts *src, sbx_grading_opts *dst)
{
	*dst = *src;
	dst->strip_chars = src->strip_chars ? strdup(src->strip_chars) : NULL;
	dst->replace = items_dup(src->replace, 2 * src->n_replace, sizeof(*src->replace), 0);
	dst->sheets = items_dup(src->sheets, src->n_sheets, sizeof(*src->sheets),
				offsetof(sbx_grading_sheet, name));
	dst->ranges = items_dup(src->ranges, src->n_ranges, sizeof(*src->ranges),
				offsetof(sbx_grading_range, sheet));
	/* A list that failed is empty, so sbx_grading_opts_clear frees the rest. */
	dst->n_replace = dst->replace ? src->n_replace : 0;
	dst->n_sheets = dst->sheets ? src->n_sheets : 0;
	dst->n_ranges = dst->ranges ? src->n_ranges : 0;
	if ((src->strip_chars && !dst->strip_chars) || dst->n_replace != src->n_replace ||
	    dst->n_sheets != src->n_sheets || dst->n_ranges != src->n_ranges)
		return -ENOMEM;
	return 0;
}

/*
 * The items of a list key, 1 to max of what ("ranges"): node->n zeroed items
 * of size bytes (free()), or NULL with *r the schema error. The caller hands
 * them to opts at once, in place of the old list: filled or not, opts' clear
 * frees them, and on an error opts is only cleared.
 */
static void *list_new(const sbx_schema *s, const sbx_ynode *node, const char *key, const char *what,
		      size_t max, size_t size, int *r)
{
	void *v;

	if (node->kind != SBX_YNODE_SEQ || node->n == 0)
		*r = sbx_schema__fail(s, node, "%s must be a non-empty list of %s", key, what);
	else if (node->n > max)
		*r = sbx_schema__fail(s, node, "%s has too many entries (at most %zu)", key, max);
	else if (!(v = calloc(node->n, size)))
		*r = sbx_error_set(s->err, -ENOMEM, "out of memory");
	else
		return v;
	return NULL;
}

static int parse_sheets(const sbx_schema *s, const sbx_ynode *node, const char *key,
			sbx_grading_opts *opts)
{
	sbx_grading_sheet *v;
	int r = 0;

	v = list_new(s, node, key, "sheet names or indexes", SBX_GRADING_MAX_SHEETS, sizeof(*v),
		     &r);
	if (!v)
		return r;
	sheets_free(opts->sheets, opts->n_sheets);
	opts->sheets = v;
	opts->n_sheets = node->n;
	for (size_t i = 0; i < node->n && r >= 0; i++) {
		const sbx_ynode *item = node->items[i];
		int64_t index;

		v[i].index = -1;
		if (item->kind == SBX_YNODE_SCALAR && item->plain && item->len &&
		    strspn(item->value, "0123456789-+") == item->len) {
			r = sbx_schema__int(s, item, key, 0, SBX_GRADING_MAX_SHEETS * 16, &index);
			v[i].index = (int)index;
		} else {
			r = sbx_schema__string(s, item, key, SBX_SHEET_NAME_MAX, &v[i].name);
		}
	}
	return r;
}

static int parse_ranges(const sbx_schema *s, const sbx_ynode *node, const char *key,
			sbx_grading_opts *opts)
{
	sbx_grading_range *v;
	int r = 0;

	v = list_new(s, node, key, "ranges", SBX_GRADING_MAX_RANGES, sizeof(*v), &r);
	if (!v)
		return r;
	ranges_free(opts->ranges, opts->n_ranges);
	opts->ranges = v;
	opts->n_ranges = node->n;
	for (size_t i = 0; i < node->n && r >= 0; i++) {
		const sbx_ynode *item = node->items[i];
		sbx_error rerr = SBX_ERROR_INIT;
		sbx_range range;

		if (item->kind != SBX_YNODE_SCALAR || item->len == 0) {
			r = sbx_schema__fail(s, item,
					     "%s: each range must be a string like "
					     "'Sheet1'!A1:D101",
					     key);
			break;
		}
		if (sbx_range_parse(item->value, &range, &rerr) < 0) {
			r = sbx_schema__fail(s, item, "%s: %s", key, rerr.msg);
			break;
		}
		v[i].first_row = range.first.row;
		v[i].first_col = range.first.col;
		v[i].last_row = range.last.row;
		v[i].last_col = range.last.col;
		if (range.sheet[0] && !(v[i].sheet = strdup(range.sheet)))
			r = sbx_error_set(s->err, -ENOMEM, "out of memory");
	}
	return r;
}

/* replace: [[from, to], ...]: from non-empty, to may be "". */
static int parse_replace(const sbx_schema *s, const sbx_ynode *node, const char *key,
			 sbx_grading_opts *opts)
{
	char **v;
	int r = 0;

	v = list_new(s, node, key, "[from, to] pairs", SBX_GRADING_MAX_REPLACE, 2 * sizeof(*v), &r);
	if (!v)
		return r;
	replace_free(opts->replace, opts->n_replace);
	opts->replace = v;
	opts->n_replace = node->n;
	for (size_t i = 0; i < node->n && r >= 0; i++) {
		const sbx_ynode *pair = node->items[i];

		if (pair->kind != SBX_YNODE_SEQ || pair->n != 2 ||
		    pair->items[0]->kind != SBX_YNODE_SCALAR ||
		    pair->items[1]->kind != SBX_YNODE_SCALAR || pair->items[0]->len == 0 ||
		    pair->items[0]->len > 256 || pair->items[1]->len > 256) {
			r = sbx_schema__fail(
				s, pair,
				"%s: each entry must be [from, to] with from a non-empty "
				"string (at most 256 bytes each)",
				key);
			break;
		}
		v[2 * i] = strdup(pair->items[0]->value);
		v[2 * i + 1] =
			strdup(sbx_ytree__is_null(pair->items[1]) ? "" : pair->items[1]->value);
		if (!v[2 * i] || !v[2 * i + 1])
			r = sbx_error_set(s->err, -ENOMEM, "out of memory");
	}
	return r;
}

/* Applies one option key; 0 when handled, 1 when key is not an option. */
static int parse_option(const sbx_schema *s, const char *k, const sbx_ynode *val,
			const char *prefix, sbx_grading_opts *o)
{
	static const char *const formulas[] = {"ignore", "require", "match", NULL};
	static const char *const missing[] = {"mismatch", "fail", NULL};
	char key[256];
	int64_t i64;
	int e, r;

	snprintf(key, sizeof(key), "%s%s%s", prefix, prefix[0] ? "." : "", k);
	if (strcmp(k, "tolerance") == 0)
		return sbx_schema__number(s, val, key, 0, INFINITY, &o->abs_tol);
	if (strcmp(k, "relative_tolerance") == 0)
		return sbx_schema__number(s, val, key, 0, INFINITY, &o->rel_tol);
	if (strcmp(k, "round") == 0) {
		if (sbx_ytree__is_null(val)) {
			o->round_digits = -1;
			return 0;
		}
		r = sbx_schema__int(s, val, key, 0, SBX_GRADING_MAX_DIGITS, &i64);
		if (r >= 0)
			o->round_digits = (int)i64;
		return r;
	}
	if (strcmp(k, "trim") == 0)
		return sbx_schema__bool(s, val, key, &o->trim);
	if (strcmp(k, "ignore_case") == 0)
		return sbx_schema__bool(s, val, key, &o->ignore_case);
	if (strcmp(k, "collapse_whitespace") == 0)
		return sbx_schema__bool(s, val, key, &o->collapse_whitespace);
	if (strcmp(k, "numeric_strings") == 0)
		return sbx_schema__bool(s, val, key, &o->numeric_strings);
	if (strcmp(k, "skip_empty") == 0)
		return sbx_schema__bool(s, val, key, &o->skip_empty);
	if (strcmp(k, "strict") == 0)
		return sbx_schema__bool(s, val, key, &o->strict);
	if (strcmp(k, "formulas") == 0) {
		r = sbx_schema__enum(s, val, key, formulas, &e);
		if (r >= 0)
			o->formulas = (sbx_formula_mode)e;
		return r;
	}
	if (strcmp(k, "missing_sheet") == 0) {
		r = sbx_schema__enum(s, val, key, missing, &e);
		if (r >= 0)
			o->missing_sheet = (sbx_missing_sheet)e;
		return r;
	}
	if (strcmp(k, "pass_threshold") == 0)
		return sbx_schema__number(s, val, key, 0, 1, &o->pass_threshold);
	if (strcmp(k, "fail_threshold") == 0)
		return sbx_schema__number(s, val, key, 0, 1, &o->fail_threshold);
	if (strcmp(k, "sheets") == 0)
		return parse_sheets(s, val, key, o);
	if (strcmp(k, "ranges") == 0)
		return parse_ranges(s, val, key, o);
	if (strcmp(k, "replace") == 0)
		return parse_replace(s, val, key, o);
	if (strcmp(k, "strip_chars") == 0)
		return sbx_schema__string(s, val, key, 256, &o->strip_chars);
	return 1;
}

static int parse_options(const sbx_schema *s, const sbx_ynode *map, const char *prefix,
			 sbx_grading_opts *o)
{
	for (size_t i = 0; i < map->n; i++) {
		int r = parse_option(s, map->keys[i]->value, map->items[i], prefix, o);

		if (r < 0)
			return r;
	}
	if (o->fail_threshold > o->pass_threshold)
		return sbx_schema__fail(s, map,
					"%s%sfail_threshold (%g) must not exceed "
					"pass_threshold (%g)",
					prefix, prefix[0] ? "." : "", o->fail_threshold,
					o->pass_threshold);
	return 0;
}

/* A case's file key (output, oracle), when given: a path relative to the task. */
static int parse_case_path(const sbx_schema *s, const sbx_ynode *node, const char *prefix,
			   const char *name, char **out)
{
	const sbx_ynode *v = sbx_ytree__get(node, name);
	char key[256];
	int r;

	if (!v)
		return 0;
	snprintf(key, sizeof(key), "%s.%s", prefix, name);
	r = sbx_schema__string(s, v, key, 4096, out);
	return r < 0 ? r : sbx_schema__relpath(s, v, key, *out);
}

static int parse_case(const sbx_schema *s, const sbx_ynode *node, const char *prefix,
		      const sbx_grading_opts *base, sbx_grading_case *c)
{
	static const char *const keys[] = {"name", "output", "oracle", "gate", OPTION_KEYS, NULL};
	const sbx_ynode *v;
	char key[256];
	int r;

	r = sbx_schema__map(s, node, prefix, keys);
	if (r < 0)
		return r;
	if (opts_copy(base, &c->opts) < 0)
		return sbx_error_set(s->err, -ENOMEM, "out of memory");
	if ((v = sbx_ytree__get(node, "name"))) {
		snprintf(key, sizeof(key), "%s.name", prefix);
		r = sbx_schema__string(s, v, key, 128, &c->name);
		if (r < 0)
			return r;
	}
	r = parse_case_path(s, node, prefix, "output", &c->output);
	if (r >= 0)
		r = parse_case_path(s, node, prefix, "oracle", &c->oracle);
	if (r < 0)
		return r;
	if ((v = sbx_ytree__get(node, "gate"))) {
		snprintf(key, sizeof(key), "%s.gate", prefix);
		r = sbx_schema__bool(s, v, key, &c->gate);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < node->n; i++) {
		r = parse_option(s, node->keys[i]->value, node->items[i], prefix, &c->opts);
		if (r < 0)
			return r;
	}
	if (c->opts.fail_threshold > c->opts.pass_threshold)
		return sbx_schema__fail(s, node, "%s.fail_threshold must not exceed pass_threshold",
					prefix);
	return 0;
}

int sbx_grading__parse_node(const sbx_schema *s, const sbx_ynode *node, const char *key,
			    sbx_grading_spec *spec)
{
	static const char *const keys[] = {"cases", OPTION_KEYS, NULL};
	sbx_grading_opts base;
	sbx_grading_spec out = {0};
	const sbx_ynode *cases;
	int r;

	sbx_grading_opts_init(&base);
	/* A task's grading: section pasted whole into a grading.yaml: say what to do. */
	if (!key[0] && node->kind == SBX_YNODE_MAP && node->n == 1 &&
	    sbx_ytree__get(node, "grading"))
		return sbx_schema__fail(s, node->keys[0],
					"unknown key 'grading': a grading.yaml holds the keys of a "
					"task's grading: section at top level; remove the "
					"'grading:' line and unindent its keys");
	r = sbx_schema__map(s, node, key, keys);
	if (r < 0)
		return r;
	r = parse_options(s, node, key, &base);
	if (r < 0)
		goto fail;
	cases = sbx_ytree__get(node, "cases");
	if (cases && (cases->kind != SBX_YNODE_SEQ || cases->n == 0)) {
		r = sbx_schema__fail(s, cases, "%s%scases must be a non-empty list", key,
				     key[0] ? "." : "");
		goto fail;
	}
	if (cases && cases->n > SBX_GRADING_MAX_CASES) {
		r = sbx_schema__fail(s, cases, "%s%scases has too many entries (at most %d)", key,
				     key[0] ? "." : "", SBX_GRADING_MAX_CASES);
		goto fail;
	}
	out.n_cases = cases ? cases->n : 1;
	out.cases = calloc(out.n_cases, sizeof(*out.cases));
	if (!out.cases) {
		out.n_cases = 0;
		r = sbx_error_set(s->err, -ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < out.n_cases; i++)
		sbx_grading_opts_init(&out.cases[i].opts);
	for (size_t i = 0; i < out.n_cases; i++) {
		sbx_grading_case *c = &out.cases[i];
		char prefix[128];

		if (!cases) {
			if (opts_copy(&base, &c->opts) < 0) {
				r = sbx_error_set(s->err, -ENOMEM, "out of memory");
				goto fail;
			}
		} else {
			snprintf(prefix, sizeof(prefix), "%s%scases[%zu]", key, key[0] ? "." : "",
				 i);
			r = parse_case(s, cases->items[i], prefix, &base, c);
			if (r < 0)
				goto fail;
		}
		if (!c->name) {
			char name[32];

			snprintf(name, sizeof(name), cases ? "case%zu" : "default", i + 1);
			c->name = strdup(name);
			if (!c->name) {
				r = sbx_error_set(s->err, -ENOMEM, "out of memory");
				goto fail;
			}
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(out.cases[j].name, c->name) == 0) {
				r = sbx_schema__fail(s, cases->items[i],
						     "%s: duplicate case name '%s'", prefix,
						     c->name);
				goto fail;
			}
	}
	sbx_grading_opts_clear(&base);
	sbx_grading_spec_clear(spec);
	*spec = out;
	return 0;
fail:
	sbx_grading_opts_clear(&base);
	sbx_grading_spec_clear(&out);
	return r;
}

int sbx_grading_spec_parse(const char *name, const char *text, size_t len, sbx_grading_spec *out,
			   sbx_error *err)
{
	_cleanup_(sbx_ytree__freep) sbx_ynode *root = NULL;
	sbx_schema s = {.name = name, .err = err};
	int r;

	r = sbx_ytree__parse(name, text, len, &root, err);
	if (r < 0)
		return r;
	return sbx_grading__parse_node(&s, root, "", out);
}

int sbx_grading_spec_load(const char *path, sbx_grading_spec *out, sbx_error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r;

	r = sbx_task__read_file(path, &text, &len, err);
	if (r < 0)
		return r;
	return sbx_grading_spec_parse(path, text, len, out, err);
}

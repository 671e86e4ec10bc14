/* SPDX-License-Identifier: MIT */
/*
 * Whole-book recalculation: every formula cell is parsed when the walk
 * reaches it (formulas of one shape share a parse), ordered by a
 * depth-first walk over the cells its references cover (an explicit stack,
 * so a 100,000-long chain of =A1+1 does not recurse), and evaluated after
 * its precedents. A reference back into the walk's stack is a cycle: every
 * cell on it gets Err:522, as in LibreOffice. Values are written back only
 * when the whole book was computed within the work cap.
 *
 * A range that many formulas share (a VLOOKUP table, a running total's
 * column) is walked once: when a walk over it finds every formula cell
 * inside already done, the range is remembered as clean, and later walks
 * skip it. Clean stays clean: a done cell is never undone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formula-internal.h"

/* Contexts are made here (recalculation, sbx_formula_eval), so freed here too. */
void sbx_fx__ctx_free(fx_ctx *c)
{
	sbx_fx__arena_free(&c->arena);
	sbx_fx__indexes_free(c->indexes);
	c->indexes = NULL;
	free(c->used);
	c->used = NULL;
	c->n_used = 0;
}

enum { ST_NEW, ST_STACK, ST_DONE };

typedef struct fnode {
	uint32_t sheet, row, col;
	uint32_t formula; /* its text's pool id */
	fx_val val;
	uint8_t state;
	bool compute; /* false: keep the cached value (missing_only) */
	bool cyclic, unsupported, has_cache;
	uint32_t stack_pos;
} fnode;

typedef struct frame {
	uint32_t node;
	fx_formula f;  /* the node's, parsed while it is on the stack */
	uint32_t ref;  /* next node index of the formula to look at for N_REF */
	uint32_t row;  /* within the current reference */
	uint32_t cell; /* index in that row */
	bool in_ref;
	bool dirty; /* the current reference gave a dependency to walk first */
} frame;

/* Ranges this large or larger are worth remembering as clean. */
#define CLEAN_MIN_CELLS 16
#define CLEAN_MAX	(1u << 20)

typedef struct recalc {
	sbx_book *book;
	fnode *nodes;
	uint32_t n;
	uint32_t *table; /* node index + 1, 0 free */
	uint32_t mask;
	frame *stack;
	uint32_t depth;
	fx_rect *clean; /* open addressing; sheet == UINT32_MAX is free */
	uint32_t clean_n, clean_mask;
	fx_shapes *shapes; /* the parses formulas share */
	fx_ctx ctx;
	sbx_recalc_stats *st;
} recalc;

static uint64_t key_of(uint32_t sheet, uint32_t row, uint32_t col)
{
	return ((uint64_t)sheet << 34) | ((uint64_t)row << 14) | col;
}

static uint32_t hash_key(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (uint32_t)k;
}

static fnode *lookup(const recalc *rc, uint32_t sheet, uint32_t row, uint32_t col)
{
	uint64_t k = key_of(sheet, row, col);

	for (uint32_t h = hash_key(k) & rc->mask;; h = (h + 1) & rc->mask) {
		uint32_t v = rc->table[h];
		if (!v)
			return NULL;
		fnode *n = &rc->nodes[v - 1];
		if (n->sheet == sheet && n->row == row && n->col == col)
			return n;
	}
}

static bool worth_remembering(const fx_rect *x)
{
	return (uint64_t)(x->r1 - x->r0 + 1) * (x->c1 - x->c0 + 1) >= CLEAN_MIN_CELLS;
}

static uint32_t hash_rect(const fx_rect *x)
{
	return hash_key(key_of(x->sheet, x->r0, x->c0) ^ ((uint64_t)x->r1 << 20) ^
			((uint64_t)x->c1 << 44));
}

static bool same_rect(const fx_rect *a, const fx_rect *b)
{
	return a->sheet == b->sheet && a->r0 == b->r0 && a->c0 == b->c0 && a->r1 == b->r1 &&
	       a->c1 == b->c1;
}

static bool range_is_clean(const recalc *rc, const fx_rect *x)
{
	if (!rc->clean)
		return false;
	for (uint32_t h = hash_rect(x) & rc->clean_mask;; h = (h + 1) & rc->clean_mask) {
		if (rc->clean[h].sheet == UINT32_MAX)
			return false;
		if (same_rect(&rc->clean[h], x))
			return true;
	}
}

/* Remembers x as clean; out of memory or past CLEAN_MAX it is simply walked again. */
static void range_mark_clean(recalc *rc, const fx_rect *x)
{
	if ((rc->clean_n + 1) * 2 > rc->clean_mask + (rc->clean ? 1u : 0u)) {
		uint32_t cap = rc->clean ? (rc->clean_mask + 1) * 2 : 256;
		fx_rect *t;

		if (cap > CLEAN_MAX || !(t = malloc(sizeof(*t) * cap)))
			return;
		for (uint32_t i = 0; i < cap; i++)
			t[i].sheet = UINT32_MAX;
		for (uint32_t i = 0; rc->clean && i <= rc->clean_mask; i++) {
			if (rc->clean[i].sheet == UINT32_MAX)
				continue;
			uint32_t h = hash_rect(&rc->clean[i]) & (cap - 1);
			while (t[h].sheet != UINT32_MAX)
				h = (h + 1) & (cap - 1);
			t[h] = rc->clean[i];
		}
		free(rc->clean);
		rc->clean = t;
		rc->clean_mask = cap - 1;
	}
	uint32_t h = hash_rect(x) & rc->clean_mask;
	while (rc->clean[h].sheet != UINT32_MAX) {
		if (same_rect(&rc->clean[h], x))
			return;
		h = (h + 1) & rc->clean_mask;
	}
	rc->clean[h] = *x;
	rc->clean_n++;
}

static void insert(recalc *rc, uint32_t idx)
{
	fnode *n = &rc->nodes[idx];
	uint32_t h = hash_key(key_of(n->sheet, n->row, n->col)) & rc->mask;

	while (rc->table[h])
		h = (h + 1) & rc->mask;
	rc->table[h] = idx + 1;
}

static void cell_name(const recalc *rc, const fnode *n, char *buf, size_t cap)
{
	char col[4];

	snprintf(buf, cap, "%s!%s%u", rc->book->sheets[n->sheet]->name,
		 sbx_ref_col_name(n->col, col), n->row + 1);
}

static bool formula_cell(fx_ctx *c, uint32_t sheet, uint32_t row, uint32_t col, const scell *sc,
			 fx_val *out)
{
	recalc *rc = c->userdata;
	fnode *n = lookup(rc, sheet, row, col);
	char name[300];

	(void)sc;
	if (!n || !n->compute)
		return false;
	if (n->state != ST_DONE) {
		/* Outside the references seen when ordering (a computed range end). */
		sbx_fx__unsupported(c, out, "a reference computed at run time");
		return true;
	}
	if (n->cyclic) {
		sbx_fx__set_err(out, FX_E_CYCLE);
		return true;
	}
	if (n->unsupported) {
		if (n->has_cache)
			return false;
		cell_name(rc, n, name, sizeof(name));
		sbx_fx__unsupported(c, out, "depends on %s", name);
		return true;
	}
	*out = n->val;
	if (out->type == FX_BOOL)
		out->type = FX_NUM; /* a cell's boolean is a number in LibreOffice */
	return true;
}

static int collect(recalc *rc, const sbx_recalc_options *o)
{
	sbx_book *b = rc->book;
	uint64_t count = 0;
	uint32_t cap = 16;

	for (size_t i = 0; i < b->nsheets; i++) {
		const sbx_sheet *s = b->sheets[i];
		for (uint32_t r = 0; r < s->nrows; r++)
			for (uint32_t k = 0; k < s->rows[r].n; k++)
				count += s->rows[r].cells[k].formula != 0;
	}
	if (count > UINT32_MAX / 4)
		return -E2BIG;
	rc->nodes = calloc(count ? count : 1, sizeof(*rc->nodes));
	while (cap < 2 * count)
		cap *= 2;
	rc->table = calloc(cap, sizeof(*rc->table));
	rc->stack = calloc(count ? count : 1, sizeof(*rc->stack));
	rc->shapes = sbx_fx__shapes_new();
	if (!rc->nodes || !rc->table || !rc->stack || !rc->shapes)
		return -ENOMEM;
	rc->mask = cap - 1;
	for (size_t i = 0; i < b->nsheets; i++) {
		const sbx_sheet *s = b->sheets[i];
		for (uint32_t r = 0; r < s->nrows; r++)
			for (uint32_t k = 0; k < s->rows[r].n; k++) {
				const scell *sc = &s->rows[r].cells[k];
				fnode *n;

				if (!sc->formula)
					continue;
				n = &rc->nodes[rc->n];
				*n = (fnode){.sheet = (uint32_t)i, .row = r, .col = sc->col};
				n->has_cache = sc->kind != SBX_CELL_EMPTY;
				n->compute = !o->missing_only || !n->has_cache;
				n->formula = sc->formula;
				rc->st->formulas++;
				rc->st->missing += !n->has_cache;
				insert(rc, rc->n);
				rc->n++;
			}
	}
	return 0;
}

/* The next formula cell the frame's references cover, or NULL when done. */
static fnode *next_dep(recalc *rc, frame *fr)
{
	const fx_formula *f = &fr->f;

	while (fr->ref < f->n) {
		const fx_node *x = &f->nodes[fr->ref];
		const sbx_sheet *s;

		if (x->op != N_REF || x->ref_bad || x->ref.sheet >= rc->book->nsheets) {
			fr->ref++;
			continue;
		}
		s = rc->book->sheets[x->ref.sheet];
		if (!fr->in_ref) {
			if (worth_remembering(&x->ref) && range_is_clean(rc, &x->ref)) {
				fr->ref++;
				continue;
			}
			fr->in_ref = true;
			fr->dirty = false;
			fr->row = x->ref.r0;
			fr->cell = UINT32_MAX;
		}
		for (; fr->row <= x->ref.r1 && fr->row < s->nrows;
		     fr->row++, fr->cell = UINT32_MAX) {
			const srow *rw = &s->rows[fr->row];

			sbx_fx__step(&rc->ctx, 1);
			if (fr->cell == UINT32_MAX) {
				uint32_t lo = 0, hi = rw->n;
				while (lo < hi) {
					uint32_t mid = (lo + hi) / 2;
					if (rw->cells[mid].col < x->ref.c0)
						lo = mid + 1;
					else
						hi = mid;
				}
				fr->cell = lo;
			}
			while (fr->cell < rw->n && rw->cells[fr->cell].col <= x->ref.c1) {
				const scell *sc = &rw->cells[fr->cell++];
				fnode *d;

				rc->ctx.steps++;
				if (!sc->formula)
					continue;
				d = lookup(rc, x->ref.sheet, fr->row, sc->col);
				if (d && d->compute && d->state != ST_DONE) {
					fr->dirty = true;
					return d;
				}
			}
			if (rc->ctx.steps > rc->ctx.max_steps)
				return NULL;
		}
		fr->in_ref = false;
		if (!fr->dirty && worth_remembering(&x->ref))
			range_mark_clean(rc, &x->ref);
		fr->ref++;
	}
	return NULL;
}

static int evaluate(recalc *rc, fnode *n, const fx_formula *f)
{
	fx_ctx *c = &rc->ctx;
	fx_val v;
	char name[300];

	n->state = ST_DONE;
	if (n->cyclic) {
		rc->st->cycles++;
		sbx_fx__set_err(&n->val, FX_E_CYCLE);
		return 0;
	}
	if (f->unsupported) {
		n->unsupported = true;
		snprintf(c->why, sizeof(c->why), "%s", f->why);
	} else {
		c->sheet = n->sheet;
		c->row = n->row;
		c->col = n->col;
		c->f = f;
		c->unsupported = false;
		sbx_fx__arena_reset(&c->arena);
		sbx_fx__eval_scalar(c, f->root, &v);
		if (c->over)
			return -E2BIG;
		if (c->oom)
			return -ENOMEM;
		n->unsupported = c->unsupported;
	}
	if (n->unsupported) {
		rc->st->unsupported++;
		if (!rc->st->why[0]) {
			cell_name(rc, n, name, sizeof(name));
			snprintf(rc->st->why, sizeof(rc->st->why), "%.150s in %.100s", c->why,
				 name);
		}
		return 0;
	}
	if (v.type == FX_EMPTY)
		sbx_fx__set_num(&v, 0);
	if (v.type == FX_STR) {
		uint32_t id;
		int r = sbx_sheet__pool_intern(&rc->book->pool, v.str, v.len, &id);
		if (r < 0)
			return r;
		v.str = sbx_sheet__pool_str(&rc->book->pool, id);
	}
	n->val = v;
	rc->st->computed++;
	return 0;
}

/* Orders and evaluates everything reachable from root. */
/*
 * Puts node idx on the walk's stack, parsed. A formula is parsed only while
 * on the stack (freed once evaluated): the few alive stay in the cache.
 */
static int push(recalc *rc, uint32_t idx)
{
	fnode *n = &rc->nodes[idx];
	const sbx_book *b = rc->book;

	n->state = ST_STACK;
	n->stack_pos = rc->depth;
	rc->stack[rc->depth] = (frame){.node = idx};
	return sbx_fx__shapes_parse(rc->shapes, b, n->sheet,
				    sbx_sheet__pool_str(&b->pool, n->formula),
				    &rc->stack[rc->depth++].f);
}

static int walk(recalc *rc, uint32_t root)
{
	int r;

	rc->depth = 0;
	if ((r = push(rc, root)) < 0)
		return r;
	while (rc->depth) {
		frame *fr = &rc->stack[rc->depth - 1];
		fnode *d = next_dep(rc, fr);

		if (rc->ctx.steps > rc->ctx.max_steps)
			return -E2BIG;
		if (!d) {
			r = evaluate(rc, &rc->nodes[fr->node], &fr->f);
			if (r < 0)
				return r;
			sbx_fx__formula_free(&fr->f);
			rc->depth--;
			continue;
		}
		if (d->state == ST_STACK) {
			/* A cycle: every cell from d up to the top is on it. */
			for (uint32_t i = d->stack_pos; i < rc->depth; i++)
				rc->nodes[rc->stack[i].node].cyclic = true;
			continue;
		}
		if ((r = push(rc, (uint32_t)(d - rc->nodes))) < 0)
			return r;
	}
	return 0;
}

static scell *find_scell(sbx_sheet *s, uint32_t row, uint32_t col)
{
	srow *rw = &s->rows[row];

	for (uint32_t lo = 0, hi = rw->n; lo < hi;) {
		uint32_t mid = (lo + hi) / 2;
		if (rw->cells[mid].col < col)
			lo = mid + 1;
		else if (rw->cells[mid].col > col)
			hi = mid;
		else
			return &rw->cells[mid];
	}
	return NULL;
}

static int write_back(recalc *rc)
{
	uint32_t name_id = 0;
	int r;

	for (uint32_t i = 0; i < rc->n; i++) {
		fnode *n = &rc->nodes[i];
		scell *sc;
		const fx_val *v = &n->val;

		if (!n->compute || (n->unsupported && n->has_cache))
			continue;
		sc = find_scell(rc->book->sheets[n->sheet], n->row, n->col);
		if (!sc)
			continue;
		if (n->unsupported) {
			if (!name_id && (r = sbx_sheet__pool_intern(&rc->book->pool, "#NAME?", 6,
								    &name_id)) < 0)
				return r;
			sc->kind = SBX_CELL_ERROR;
			sc->v.str = name_id;
			continue;
		}
		switch (v->type) {
		case FX_STR: {
			uint32_t id;
			r = sbx_sheet__pool_intern(&rc->book->pool, v->str, v->len, &id);
			if (r < 0)
				return r;
			sc->kind = SBX_CELL_STRING;
			sc->v.str = id;
			break;
		}
		case FX_ERR: {
			uint32_t id;
			const char *t = sbx_fx__err_text(v->err);
			r = sbx_sheet__pool_intern(&rc->book->pool, t, strlen(t), &id);
			if (r < 0)
				return r;
			sc->kind = SBX_CELL_ERROR;
			sc->v.str = id;
			break;
		}
		case FX_BOOL:
			sc->kind = SBX_CELL_BOOL;
			sc->v.num = v->num;
			break;
		default:
			sc->kind = SBX_CELL_NUMBER;
			sc->v.num = v->num;
			break;
		}
	}
	return 0;
}

int sbx_book_recalc(sbx_book *b, const sbx_recalc_options *opts, sbx_recalc_stats *stats,
		    sbx_error *err)
{
	sbx_recalc_options def = SBX_RECALC_OPTIONS_INIT;
	sbx_recalc_stats local = {0};
	recalc rc = {.book = b, .st = stats ? stats : &local};
	int r;

	if (!opts)
		opts = &def;
	*rc.st = (sbx_recalc_stats){0};
	rc.ctx.book = b;
	rc.ctx.case_sensitive = sbx_book_format(b) == SBX_FORMAT_ODS;
	rc.ctx.max_steps = opts->max_steps ? opts->max_steps : SBX_RECALC_DEFAULT_MAX_STEPS;
	rc.ctx.formula_cell = formula_cell;
	rc.ctx.userdata = &rc;
	r = collect(&rc, opts);
	for (uint32_t i = 0; r == 0 && i < rc.n; i++)
		if (rc.nodes[i].compute && rc.nodes[i].state == ST_NEW)
			r = walk(&rc, i);
	rc.st->steps = rc.ctx.steps;
	if (r == 0)
		r = write_back(&rc);
	for (uint32_t i = 0; rc.stack && i < rc.depth; i++)
		sbx_fx__formula_free(&rc.stack[i].f); /* a walk that failed */
	sbx_fx__shapes_free(rc.shapes);
	free(rc.nodes);
	free(rc.table);
	free(rc.stack);
	free(rc.clean);
	sbx_fx__ctx_free(&rc.ctx);
	if (r == -E2BIG)
		return sbx_error_set(err, r,
				     "recalculation passed its work cap (%llu steps): formulas "
				     "left as they were",
				     (unsigned long long)rc.ctx.max_steps);
	if (r < 0)
		return sbx_error_set(err, r, "out of memory");
	return 0;
}

void sbx_book_count_formulas(const sbx_book *b, uint64_t *formulas, uint64_t *missing)
{
	*formulas = *missing = 0;
	for (size_t i = 0; i < b->nsheets; i++) {
		const sbx_sheet *s = b->sheets[i];
		for (uint32_t r = 0; r < s->nrows; r++)
			for (uint32_t k = 0; k < s->rows[r].n; k++)
				if (s->rows[r].cells[k].formula) {
					(*formulas)++;
					*missing += s->rows[r].cells[k].kind == SBX_CELL_EMPTY;
				}
	}
}

void sbx_formula_value_clear(sbx_formula_value *v)
{
	free(v->text);
	*v = (sbx_formula_value){0};
}

int sbx_formula_eval(const sbx_sheet *s, uint32_t row, uint32_t col, const char *formula,
		     sbx_formula_value *out, sbx_error *err)
{
	fx_formula f;
	fx_ctx c = {.book = s->book, .max_steps = SBX_RECALC_DEFAULT_MAX_STEPS};
	fx_val v;
	int r = 0;

	c.sheet = (uint32_t)s->index;
	c.case_sensitive = sbx_book_format(s->book) == SBX_FORMAT_ODS;
	c.row = row;
	c.col = col;
	if (sbx_fx__parse(s->book, c.sheet, formula, &f) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (f.unsupported) {
		r = sbx_error_set(err, -EOPNOTSUPP, "%s", f.why);
		goto done;
	}
	c.f = &f;
	sbx_fx__eval_scalar(&c, f.root, &v);
	if (c.over) {
		r = sbx_error_set(err, -E2BIG, "evaluation passed its work cap");
	} else if (c.oom) {
		r = sbx_error_set(err, -ENOMEM, "out of memory");
	} else if (c.unsupported) {
		r = sbx_error_set(err, -EOPNOTSUPP, "%s", c.why);
	} else {
		*out = (sbx_formula_value){.kind = SBX_CELL_NUMBER};
		switch (v.type) {
		case FX_STR:
			out->kind = SBX_CELL_STRING;
			out->text = strndup(v.str, v.len);
			break;
		case FX_ERR:
			out->kind = SBX_CELL_ERROR;
			out->text = strdup(sbx_fx__err_text(v.err));
			break;
		case FX_BOOL:
			out->kind = SBX_CELL_BOOL;
			out->number = v.num;
			break;
		default:
			out->number = v.type == FX_NUM ? v.num : 0;
			break;
		}
		if ((out->kind == SBX_CELL_STRING || out->kind == SBX_CELL_ERROR) && !out->text)
			r = sbx_error_set(err, -ENOMEM, "out of memory");
	}
done:
	sbx_fx__formula_free(&f);
	sbx_fx__ctx_free(&c);
	return r;
}

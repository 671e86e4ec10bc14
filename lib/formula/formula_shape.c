/* SPDX-License-Identifier: MIT */
/*
 * One parse per formula shape. A generated or filled-down sheet repeats
 * formulas that differ only in their cell references and small integers
 * (=A2*2+1, =A3*2+1, ...). The text with those words replaced by markers is
 * the shape's key; the first formula of a shape is parsed, with the text
 * offset of every reference end and number node, and each marked word must
 * be one of them (else the shape is "plain": every formula of it is parsed
 * alone). Later formulas copy the nodes and put their own words in.
 *
 * Why that is the parse of the later text: the texts agree outside the
 * marked words, a marked word is a whole word between the same neighbours,
 * and a reference word is a valid cell in both, a number word digits only,
 * so every decision the parser takes reads the same (a reference's ends are
 * re-ordered on copy, the one thing that depends on their values). A word
 * next to ':' that might end a row range, text with '#' (error literals
 * read into words) and formulas that did not parse are never shared.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formula-internal.h"
#include "sbx/cleanup.h"

#define MAX_PARAMS 64

enum { P_REF = 1, P_NUM = 2 }; /* also the markers in a key */

typedef struct param {
	uint32_t off; /* of the word in the text */
	uint8_t kind;
	uint32_t row, col; /* P_REF */
	double num;	   /* P_NUM */
} param;

/* Where a parameter goes: node's reference end 0 or 1, or its number (2). */
typedef struct patch {
	uint32_t node;
	uint8_t end;
} patch;

typedef struct shape {
	char *key;
	size_t key_len;
	uint64_t hash;
	uint32_t self;
	bool plain; /* parse each formula alone */
	fx_formula f;
	fx_origin *origins;
	patch *patches;
	uint32_t npatches;
} shape;

struct fx_shapes {
	shape **table; /* open addressing, NULL free */
	uint32_t mask, n;
	char *key; /* the current text's key */
	size_t key_cap;
	param params[MAX_PARAMS];
	uint32_t nparams;
};

fx_shapes *sbx_fx__shapes_new(void)
{
	return calloc(1, sizeof(fx_shapes));
}

static void shape_free(shape *sh)
{
	sbx_fx__formula_free(&sh->f);
	sbx_free_all(sh->origins, sh->patches, sh->key);
	free(sh);
}

void sbx_fx__shapes_free(fx_shapes *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; s->table && i <= s->mask; i++)
		if (s->table[i])
			shape_free(s->table[i]);
	free(s->table);
	free(s->key);
	free(s);
}

/* ---- the key ---- */

/* Byte classes for the key scan. */
enum { C_OTHER, C_WORD, C_PLAIN, C_QUOTE, C_STOP };

static const uint8_t *char_classes(void)
{
	static uint8_t cls[256];
	static bool ready; /* idempotent: a race writes the same bytes */

	if (!ready) {
		for (int c = 0; c < 256; c++)
			cls[c] = sbx_ref_word_char((char)c) ? C_WORD : C_OTHER;
		for (const char *p = " \t\r\n,+-*/^&=<>()%"; *p; p++)
			cls[(unsigned char)*p] = C_PLAIN;
		cls['"'] = cls['\''] = C_QUOTE;
		/* '#': error literals (#N/A) read into what looks like a word. */
		cls[0] = cls[P_REF] = cls[P_NUM] = cls['#'] = C_STOP;
		ready = true;
	}
	return cls;
}

static bool plain_neighbour(const uint8_t *cls, char c)
{
	return c == '\0' || cls[(unsigned char)c] == C_PLAIN;
}

/* What a word between before and after stands for: P_REF, P_NUM or 0 (itself). */
static uint8_t classify(const uint8_t *cls, const char *w, size_t len, char before, char after,
			param *p)
{
	uint64_t n = 0;
	size_t i;

	if (before != ':' && before != '!' && !plain_neighbour(cls, before))
		return 0;
	if (after == '(' || (after != ':' && !plain_neighbour(cls, after)))
		return 0;
	/* A cell starts with a letter or '$'; a number with a digit. */
	if (!(w[0] >= '0' && w[0] <= '9'))
		return sbx_ref_parse_cell_word(w, len, &p->row, &p->col) ? P_REF : 0;
	if (len > 15 || before == ':' || before == '!' || after == ':')
		return 0;
	for (i = 0; i < len && w[i] >= '0' && w[i] <= '9'; i++)
		n = n * 10 + (uint64_t)(w[i] - '0');
	if (i < len)
		return 0;
	p->num = (double)n;
	return P_NUM;
}

/* Past a quoted run starting at text[i] ("..." or '...', the quote doubled inside). */
static size_t quoted_end(const char *text, size_t i, size_t len)
{
	char q = text[i++];

	for (; i < len; i++)
		if (text[i] == q && text[++i] != q)
			return i;
	return len;
}

/* One word at text[w..]: a parameter's marker or the word itself into the key. */
static int key_word(fx_shapes *s, const uint8_t *cls, const char *text, size_t w, size_t *i,
		    size_t *n)
{
	param p = {.off = (uint32_t)w};

	while (cls[(unsigned char)text[*i]] == C_WORD)
		(*i)++;
	p.kind = classify(cls, text + w, *i - w, w ? text[w - 1] : '\0', text[*i], &p);
	if (!p.kind) {
		memcpy(s->key + *n, text + w, *i - w);
		*n += *i - w;
		return 0;
	}
	if (s->nparams == MAX_PARAMS)
		return 1;
	s->params[s->nparams++] = p;
	s->key[(*n)++] = (char)p.kind;
	return 0;
}

/* The key of text into s->key. Returns 0, 1 when the text is not shared, -ENOMEM. */
static int make_key(fx_shapes *s, const char *text, size_t len, size_t *key_len)
{
	const uint8_t *cls = char_classes();
	size_t n = 0, i = 0;

	if (len + 1 > s->key_cap) {
		char *k = realloc(s->key, len + 64);
		if (!k)
			return -ENOMEM;
		s->key = k;
		s->key_cap = len + 64;
	}
	s->nparams = 0;
	while (i < len) {
		size_t w = i;

		switch (cls[(unsigned char)text[i]]) {
		case C_STOP:
			return 1;
		case C_WORD:
			if (key_word(s, cls, text, w, &i, &n))
				return 1;
			continue;
		case C_QUOTE:
			i = quoted_end(text, i, len);
			memcpy(s->key + n, text + w, i - w);
			n += i - w;
			continue;
		default:
			s->key[n++] = text[i++];
		}
	}
	*key_len = n;
	return 0;
}

static uint64_t hash_key(const char *k, size_t n, uint32_t self)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ self, w;
	size_t i = 0;

	/* Eight bytes a step: keys are a formula's length. */
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, k + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	for (w = 0; i < n; i++)
		w = (w << 8) | (unsigned char)k[i];
	h = (h ^ w ^ n) * 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 32);
}

/* ---- the table ---- */

static shape **slot(fx_shapes *s, uint64_t h, uint32_t self, const char *k, size_t n)
{
	for (uint32_t i = (uint32_t)h & s->mask;; i = (i + 1) & s->mask) {
		shape *sh = s->table[i];
		if (!sh || (sh->hash == h && sh->self == self && sh->key_len == n &&
			    memcmp(sh->key, k, n) == 0))
			return &s->table[i];
	}
}

static int grow(fx_shapes *s)
{
	uint32_t cap = s->table ? (s->mask + 1) * 2 : 1024;
	shape **t = calloc(cap, sizeof(*t)), **old = s->table;
	uint32_t old_cap = s->table ? s->mask + 1 : 0;

	if (!t)
		return -ENOMEM;
	s->table = t;
	s->mask = cap - 1;
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i])
			*slot(s, old[i]->hash, old[i]->self, old[i]->key, old[i]->key_len) = old[i];
	free(old);
	return 0;
}

/* ---- a shape's first formula ---- */

/* The node end at text offset off, or false. */
static bool find_end(const shape *sh, uint32_t off, uint32_t *node, uint8_t *end)
{
	for (uint32_t i = 0; i < sh->f.n; i++)
		for (uint8_t e = 0; e < 2; e++)
			if (sh->origins[i].pos[e] == off) {
				*node = i;
				*end = e;
				return true;
			}
	return false;
}

/* Each parameter's node, or false when one is not where the parse put a node. */
static bool match_params(const fx_shapes *s, shape *sh)
{
	for (uint32_t k = 0; k < s->nparams; k++) {
		patch *pt = &sh->patches[k];
		fx_op op;

		if (!find_end(sh, s->params[k].off, &pt->node, &pt->end))
			return false;
		op = sh->f.nodes[pt->node].op;
		if (s->params[k].kind == P_NUM ? op != N_NUM || pt->end : op != N_REF)
			return false;
		if (op == N_NUM)
			pt->end = 2;
		/* Both ends of a reference come one after the other (instantiate). */
		for (uint32_t j = 0; j + 1 < k; j++)
			if (sh->patches[j].node == pt->node)
				return false;
	}
	sh->npatches = s->nparams;
	return true;
}

static int shape_build(fx_shapes *s, shape *sh, const sbx_book *b, const char *text)
{
	int r = sbx_fx__parse_traced(b, sh->self, text, &sh->f, &sh->origins);

	if (r < 0)
		return r;
	if (s->nparams && !(sh->patches = malloc(s->nparams * sizeof(*sh->patches))))
		return -ENOMEM;
	sh->plain = sh->f.unsupported || !match_params(s, sh);
	return 0;
}

static int shape_add(fx_shapes *s, shape **where, const sbx_book *b, uint32_t self,
		     const char *text, uint64_t h, size_t key_len)
{
	shape *sh = calloc(1, sizeof(*sh));
	int r;

	if (!sh || !(sh->key = malloc(key_len ? key_len : 1))) {
		free(sh);
		return -ENOMEM;
	}
	memcpy(sh->key, s->key, key_len);
	sh->key_len = key_len;
	sh->hash = h;
	sh->self = self;
	*where = sh;
	s->n++;
	r = shape_build(s, sh, b, text);
	if (r < 0)
		sh->plain = true; /* kept in the table: freed with it */
	return r;
}

/* ---- later formulas ---- */

static void put_ref(fx_node *x, const uint32_t raw[4])
{
	x->ref.r0 = raw[0] < raw[2] ? raw[0] : raw[2];
	x->ref.c0 = raw[1] < raw[3] ? raw[1] : raw[3];
	x->ref.r1 = raw[0] < raw[2] ? raw[2] : raw[0];
	x->ref.c1 = raw[1] < raw[3] ? raw[3] : raw[1];
}

/* The shape's formula with the current text's parameters. */
static int instantiate(fx_shapes *s, const shape *sh, fx_formula *f)
{
	fx_node *nodes = malloc(sh->f.n * sizeof(*nodes));

	if (!nodes)
		return -ENOMEM;
	memcpy(nodes, sh->f.nodes, sh->f.n * sizeof(*nodes));
	for (uint32_t k = 0; k < sh->npatches;) {
		const patch *pt = &sh->patches[k];
		uint32_t raw[4];

		if (pt->end == 2) {
			nodes[pt->node].num = s->params[k++].num;
			continue;
		}
		memcpy(raw, sh->origins[pt->node].raw, sizeof(raw));
		for (; k < sh->npatches && sh->patches[k].node == pt->node; k++) {
			raw[2 * sh->patches[k].end] = s->params[k].row;
			raw[2 * sh->patches[k].end + 1] = s->params[k].col;
		}
		if (sh->origins[pt->node].pos[1] == UINT32_MAX) {
			raw[2] = raw[0]; /* one cell: both ends are the word */
			raw[3] = raw[1];
		}
		put_ref(&nodes[pt->node], raw);
	}
	*f = sh->f;
	f->nodes = nodes;
	f->cap = f->n;
	f->borrowed = true;
	return 0;
}

int sbx_fx__shapes_parse(fx_shapes *s, const sbx_book *b, uint32_t self, const char *text,
			 fx_formula *f)
{
	size_t key_len, len = strlen(text);
	uint64_t h;
	shape **where;
	int r;

	/* Too long: the parser refuses it (a shorter one of its shape would pass it on). */
	if (len > FX_MAX_TEXT)
		return sbx_fx__parse(b, self, text, f);
	r = make_key(s, text, len, &key_len);
	if (r < 0)
		return r;
	if (r > 0)
		return sbx_fx__parse(b, self, text, f);
	if ((s->n + 1) * 2 > (s->table ? s->mask + 1 : 0) && (r = grow(s)) < 0)
		return r;
	h = hash_key(s->key, key_len, self);
	where = slot(s, h, self, s->key, key_len);
	if (!*where && (r = shape_add(s, where, b, self, text, h, key_len)) < 0)
		return r;
	if ((*where)->plain)
		return sbx_fx__parse(b, self, text, f);
	return instantiate(s, *where, f);
}

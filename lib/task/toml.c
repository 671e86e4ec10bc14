/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/utf8.h"
#include "toml.h"

/*
 * Table flags, kept in fields a MAP does not otherwise use: `plain` marks a
 * table defined by a header or inline (it cannot be defined again), `len` 1
 * an inline table (closed: nothing may be added). A SEQ with `len` 1 is an
 * array of tables ([[x]]), which headers may extend; a static array is not.
 */
#define SEALED(n)      (n)->plain
#define CLOSED(n)      ((n)->len == 1)
#define TABLE_ARRAY(n) ((n)->len == 1)

typedef struct parser {
	const char *name, *s;
	size_t len, pos, line_start, nodes;
	unsigned line;
	sbx_error *err;
} parser;

static int fail(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(parser *p, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return sbx_error_set(p->err, -EINVAL, "%s:%u:%zu: %s", p->name, p->line,
			     p->pos - p->line_start + 1, what);
}

static int peek(const parser *p)
{
	return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static bool at(const parser *p, const char *lit)
{
	size_t n = strlen(lit);

	return p->len - p->pos >= n && memcmp(p->s + p->pos, lit, n) == 0;
}

/* Consumes a newline ("\n" or "\r\n"); false when there is none. */
static bool newline(parser *p)
{
	if (at(p, "\r\n"))
		p->pos++;
	if (peek(p) != '\n')
		return false;
	p->pos++;
	p->line++;
	p->line_start = p->pos;
	return true;
}

static void skip_ws(parser *p)
{
	while (peek(p) == ' ' || peek(p) == '\t')
		p->pos++;
}

static void skip_comment(parser *p)
{
	if (peek(p) == '#')
		while (p->pos < p->len && p->s[p->pos] != '\n' && !at(p, "\r\n"))
			p->pos++;
}

/* Blank lines, comments and newlines (inside arrays). */
static void skip_space(parser *p)
{
	for (;;) {
		skip_ws(p);
		skip_comment(p);
		if (!newline(p))
			return;
	}
}

static sbx_ynode *node_new(parser *p, sbx_ynode_kind kind)
{
	sbx_ynode *n;

	if (++p->nodes > SBX_YTREE_MAX_NODES) {
		fail(p, "too many values");
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		sbx_error_set(p->err, -ENOMEM, "out of memory");
		return NULL;
	}
	n->kind = kind;
	n->line = p->line;
	n->col = (unsigned)(p->pos - p->line_start + 1);
	return n;
}

/* Where a key or header began: errors about it and its node point there. */
typedef struct pos {
	unsigned line, col;
} pos;

static pos here(const parser *p)
{
	return (pos){p->line, (unsigned)(p->pos - p->line_start + 1)};
}

static int fail_at(parser *p, pos at, const char *what, const char *key)
{
	return sbx_error_set(p->err, -EINVAL, "%s:%u:%u: %s '%s' is already defined", p->name,
			     at.line, at.col, what, key);
}

/* Appends item (and key at kp, for a MAP) to parent; takes both, also on failure. */
static int push(parser *p, sbx_ynode *parent, char *key, sbx_ynode *item, pos kp)
{
	sbx_ynode **items = realloc(parent->items, (parent->n + 1) * sizeof(*items));
	sbx_ynode *k = NULL;

	if (items)
		parent->items = items;
	if (parent->kind == SBX_YNODE_MAP && !key)
		items = NULL;
	if (items && parent->kind == SBX_YNODE_MAP) {
		sbx_ynode **keys = realloc(parent->keys, (parent->n + 1) * sizeof(*keys));

		if (keys)
			parent->keys = keys;
		k = keys ? calloc(1, sizeof(*k)) : NULL;
		if (k) {
			k->kind = SBX_YNODE_SCALAR;
			k->line = kp.line;
			k->col = kp.col;
			k->value = key;
			k->len = strlen(key);
			key = NULL;
			parent->keys[parent->n] = k;
		} else {
			items = NULL;
		}
	}
	free(key);
	if (!items) {
		sbx_ytree__free(item);
		return sbx_error_set(p->err, -ENOMEM, "out of memory");
	}
	parent->items[parent->n++] = item;
	return 0;
}

/* The value of key in map, or NULL. */
static sbx_ynode *child(const sbx_ynode *map, const char *key)
{
	return sbx_ytree__get(map, key);
}

/* ---- strings ---- */

static int put_utf8(sbx_buf *b, unsigned long c)
{
	char u[4];
	size_t n;

	if (c < 0x80) {
		u[0] = (char)c, n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | c >> 6), u[1] = (char)(0x80 | (c & 0x3f)), n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xe0 | c >> 12), u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[2] = (char)(0x80 | (c & 0x3f)), n = 3;
	} else {
		u[0] = (char)(0xf0 | c >> 18), u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((c >> 6) & 0x3f)), u[3] = (char)(0x80 | (c & 0x3f)), n = 4;
	}
	return sbx_buf_append(b, u, n);
}

static int escape(parser *p, sbx_buf *b)
{
	static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
	int c = peek(p);
	const char *e = c > 0 ? strchr(from, c) : NULL;
	unsigned long u = 0;
	int digits;

	if (e) {
		p->pos++;
		return sbx_buf_append(b, &to[e - from], 1);
	}
	if (c != 'u' && c != 'U')
		return fail(p, "unknown escape '\\%c'", c > 0x20 && c < 0x7f ? c : '?');
	digits = c == 'u' ? 4 : 8;
	p->pos++;
	for (int i = 0; i < digits; i++) {
		int h = peek(p);

		if (h < 0 || !strchr("0123456789abcdefABCDEF", h) || !h)
			return fail(p, "\\%c needs %d hex digits", c, digits);
		u = u * 16 + (unsigned long)(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
		p->pos++;
	}
	if (u == 0 || u > 0x10ffff || (u >= 0xd800 && u <= 0xdfff))
		return fail(p, "\\%c escape is not a Unicode scalar value", c);
	return put_utf8(b, u);
}

/* A string starting at the quote: "basic", 'literal', """multi""", '''multi'''. */
static int string(parser *p, char **out)
{
	_cleanup_(sbx_buf_free) sbx_buf b = SBX_BUF_INIT(SBX_YTREE_MAX_SCALAR + 8);
	char q = p->s[p->pos];
	bool multi = at(p, q == '"' ? "\"\"\"" : "'''");
	int r = 0;

	p->pos += multi ? 3 : 1;
	if (multi)
		newline(p); /* a newline right after the opening quotes is trimmed */
	for (;;) {
		int c = peek(p);

		if (c < 0)
			return fail(p, "unterminated string");
		if (c == q && (!multi || at(p, q == '"' ? "\"\"\"" : "'''"))) {
			/* Up to two quotes may end a multi-line string's content. */
			while (multi && p->pos + 3 < p->len && p->s[p->pos + 3] == q &&
			       b.len < SIZE_MAX) {
				r = sbx_buf_append(&b, &q, 1);
				p->pos++;
			}
			p->pos += multi ? 3 : 1;
			break;
		}
		if (c == '\n' || at(p, "\r\n")) {
			if (!multi)
				return fail(p, "newline in a single-line string");
			r = sbx_buf_append(&b, "\n", 1);
			newline(p);
		} else if (c == '\\' && q == '"') {
			p->pos++;
			if (multi && (peek(p) == ' ' || peek(p) == '\t' || peek(p) == '\n' ||
				      at(p, "\r\n"))) {
				/* A line-ending backslash: the whitespace up to the next text goes.
				 */
				size_t save = p->pos;

				skip_ws(p);
				if (!newline(p)) {
					p->pos = save;
					return fail(p, "unknown escape '\\ '");
				}
				while (newline(p) || peek(p) == ' ' || peek(p) == '\t')
					skip_ws(p);
			} else {
				r = escape(p, &b);
			}
		} else if ((c < 0x20 && c != '\t') || c == 0x7f) {
			return fail(p, "control character in a string");
		} else {
			r = sbx_buf_append(&b, &p->s[p->pos], 1);
			p->pos++;
		}
		if (r == -ENOBUFS || b.len > SBX_YTREE_MAX_SCALAR)
			return fail(p, "string longer than %d bytes", SBX_YTREE_MAX_SCALAR);
		if (r < 0)
			return r == -EINVAL ? r : sbx_error_set(p->err, -ENOMEM, "out of memory");
	}
	*out = sbx_buf_steal(&b, NULL);
	return *out ? 0 : sbx_error_set(p->err, -ENOMEM, "out of memory");
}

/* ---- keys ---- */

static bool bare_key_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

#define MAX_KEY_PARTS 8

typedef struct keypath {
	char *part[MAX_KEY_PARTS];
	size_t n;
} keypath;

static void keypath_clear(keypath *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->part[i]);
	k->n = 0;
}

/* a, "a b", 'a', and dotted: a.b."c" */
static int keypath_parse(parser *p, keypath *k)
{
	for (;;) {
		int c = peek(p), r;
		char *part;

		skip_ws(p);
		c = peek(p);
		if (k->n == MAX_KEY_PARTS)
			return fail(p, "key with more than %d parts", MAX_KEY_PARTS);
		if (c == '"' || c == '\'') {
			if (at(p, "\"\"\"") || at(p, "'''"))
				return fail(p, "a key cannot be a multi-line string");
			r = string(p, &part);
			if (r < 0)
				return r;
		} else {
			size_t start = p->pos;

			while (bare_key_char(peek(p)))
				p->pos++;
			if (p->pos == start)
				return fail(p, "expected a key");
			part = strndup(p->s + start, p->pos - start);
			if (!part)
				return sbx_error_set(p->err, -ENOMEM, "out of memory");
		}
		k->part[k->n++] = part;
		skip_ws(p);
		if (peek(p) != '.')
			return 0;
		p->pos++;
	}
}

/* ---- values ---- */

static int value(parser *p, unsigned depth, sbx_ynode **out);

/* Numbers and booleans: plain scalars holding their text without '_'. */
static int bare_value(parser *p, sbx_ynode *n)
{
	size_t start = p->pos, j = 0;
	char *v, *end;

	while (p->pos < p->len &&
	       (bare_key_char(peek(p)) || peek(p) == '+' || peek(p) == '.' || peek(p) == ':'))
		p->pos++;
	if (p->pos == start)
		return fail(p, "expected a value");
	if (p->pos - start > 64)
		return fail(p, "value too long");
	v = malloc(p->pos - start + 1);
	if (!v)
		return sbx_error_set(p->err, -ENOMEM, "out of memory");
	n->value = v;
	for (size_t i = start; i < p->pos; i++) {
		char c = p->s[i];

		if (c == '_') {
			bool ok = i > start && i + 1 < p->pos && p->s[i - 1] >= '0' &&
				  p->s[i - 1] <= '9' && p->s[i + 1] >= '0' && p->s[i + 1] <= '9';
			if (!ok) {
				p->pos = i;
				return fail(p, "'_' must sit between two digits");
			}
			continue;
		}
		v[j++] = c;
	}
	v[j] = '\0';
	n->len = j;
	n->plain = true;
	if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
		return 0;
	if (strchr(v, ':') || (j >= 5 && v[4] == '-' && v[0] >= '0' && v[0] <= '9'))
		return fail(p, "dates and times are not supported");
	if (j >= 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'o' || v[1] == 'b'))
		return fail(p, "only decimal integers are supported");
	if (strcmp(v + (v[0] == '+' || v[0] == '-'), "inf") == 0 ||
	    strcmp(v + (v[0] == '+' || v[0] == '-'), "nan") == 0)
		return 0;
	errno = 0;
	(void)strtod(v, &end);
	if (*end || !strchr("+-0123456789", v[0]) || strchr(v, 'x') || strchr(v, 'X'))
		return fail(p, "'%s' is not a number, a boolean or a quoted string", v);
	return 0;
}

static int array(parser *p, unsigned depth, sbx_ynode *n)
{
	p->pos++; /* [ */
	for (;;) {
		sbx_ynode *item;
		int r;

		skip_space(p);
		if (peek(p) == ']')
			break;
		r = value(p, depth + 1, &item);
		if (r < 0)
			return r;
		r = push(p, n, NULL, item, here(p));
		if (r < 0)
			return r;
		skip_space(p);
		if (peek(p) == ',') {
			p->pos++;
			continue;
		}
		if (peek(p) != ']')
			return fail(p, "expected ',' or ']' in an array");
		break;
	}
	p->pos++;
	return 0;
}

static int assign(parser *p, sbx_ynode *table, unsigned depth);

static int inline_table(parser *p, unsigned depth, sbx_ynode *n)
{
	p->pos++; /* { */
	skip_ws(p);
	if (peek(p) == '}') {
		p->pos++;
		goto done;
	}
	for (;;) {
		int r = assign(p, n, depth + 1);

		if (r < 0)
			return r;
		skip_ws(p);
		if (peek(p) == ',') {
			p->pos++;
			continue;
		}
		if (peek(p) != '}')
			return fail(p, "expected ',' or '}' in an inline table (on one line)");
		p->pos++;
		break;
	}
done:
	SEALED(n) = true;
	n->len = 1; /* closed */
	return 0;
}

static int value(parser *p, unsigned depth, sbx_ynode **out)
{
	_cleanup_(sbx_ytree__freep) sbx_ynode *n = NULL;
	int c = peek(p), r;

	if (depth > SBX_YTREE_MAX_DEPTH)
		return fail(p, "nested deeper than %d", SBX_YTREE_MAX_DEPTH);
	n = node_new(p, c == '[' ? SBX_YNODE_SEQ : c == '{' ? SBX_YNODE_MAP : SBX_YNODE_SCALAR);
	if (!n)
		return -ENOMEM;
	if (c == '[')
		r = array(p, depth, n);
	else if (c == '{')
		r = inline_table(p, depth, n);
	else if (c == '"' || c == '\'')
		r = string(p, &n->value);
	else
		r = bare_value(p, n);
	if (r < 0)
		return r;
	if (n->kind == SBX_YNODE_SCALAR && !n->plain)
		n->len = strlen(n->value);
	*out = TAKE_PTR(n);
	return 0;
}

/*
 * Walks (making) the tables of k's first n parts below t; *out is the last.
 * Through an array of tables it takes its last table.
 */
static int descend(parser *p, sbx_ynode *t, const keypath *k, size_t n, bool dotted, pos at,
		   sbx_ynode **out)
{
	for (size_t i = 0; i < n; i++) {
		sbx_ynode *c = child(t, k->part[i]);
		int r;

		if (c && c->kind == SBX_YNODE_SEQ && TABLE_ARRAY(c) && c->n > 0 && !dotted)
			c = c->items[c->n - 1];
		if (c && (c->kind != SBX_YNODE_MAP || CLOSED(c) || (dotted && SEALED(c))))
			return fail_at(p, at, "key", k->part[i]);
		if (!c) {
			c = node_new(p, SBX_YNODE_MAP);
			if (!c)
				return -ENOMEM;
			c->line = at.line;
			c->col = at.col;
			r = push(p, t, strdup(k->part[i]), c, at);
			if (r < 0)
				return r;
		}
		t = c;
	}
	*out = t;
	return 0;
}

/* key = value into table. */
static int assign(parser *p, sbx_ynode *table, unsigned depth)
{
	_cleanup_(keypath_clear) keypath k = {0};
	sbx_ynode *t, *v;
	pos at;
	int r;

	skip_ws(p);
	at = here(p);
	r = keypath_parse(p, &k);
	if (r >= 0)
		r = descend(p, table, &k, k.n - 1, true, at, &t);
	if (r < 0)
		return r;
	if (child(t, k.part[k.n - 1]))
		return fail_at(p, at, "key", k.part[k.n - 1]);
	if (peek(p) != '=')
		return fail(p, "expected '=' after the key");
	p->pos++;
	skip_ws(p);
	r = value(p, depth, &v);
	if (r < 0)
		return r;
	r = push(p, t, k.part[k.n - 1], v, at);
	k.part[--k.n] = NULL;
	return r;
}

/* [a.b] or [[a.b]]; *cur becomes the table. */
static int header(parser *p, sbx_ynode *root, sbx_ynode **cur)
{
	_cleanup_(keypath_clear) keypath k = {0};
	bool arr = at(p, "[[");
	pos hp = here(p);
	sbx_ynode *t, *last, *tbl;
	int r;

	p->pos += arr ? 2 : 1;
	r = keypath_parse(p, &k);
	if (r >= 0)
		r = descend(p, root, &k, k.n - 1, false, hp, &t);
	if (r < 0)
		return r;
	if (!(arr ? at(p, "]]") : peek(p) == ']'))
		return fail(p, "expected '%s' to end the table header", arr ? "]]" : "]");
	p->pos += arr ? 2 : 1;
	last = child(t, k.part[k.n - 1]);
	if (arr) {
		if (last && (last->kind != SBX_YNODE_SEQ || !TABLE_ARRAY(last)))
			return fail_at(p, hp, "key", k.part[k.n - 1]);
		if (!last) {
			last = node_new(p, SBX_YNODE_SEQ);
			if (!last)
				return -ENOMEM;
			last->len = 1;
			last->line = hp.line;
			last->col = hp.col;
			r = push(p, t, k.part[k.n - 1], last, hp);
			k.part[--k.n] = NULL;
			if (r < 0)
				return r;
		}
		tbl = node_new(p, SBX_YNODE_MAP);
		if (!tbl)
			return -ENOMEM;
		r = push(p, last, NULL, tbl, hp);
		if (r < 0)
			return r;
	} else {
		if (last && (last->kind != SBX_YNODE_MAP || SEALED(last)))
			return fail_at(p, hp, "table", k.part[k.n - 1]);
		if (!last) {
			last = node_new(p, SBX_YNODE_MAP);
			if (!last)
				return -ENOMEM;
			r = push(p, t, k.part[k.n - 1], last, hp);
			k.part[--k.n] = NULL;
			if (r < 0)
				return r;
		}
		tbl = last;
	}
	SEALED(tbl) = true;
	tbl->line = hp.line;
	tbl->col = hp.col;
	*cur = tbl;
	return 0;
}

static int check_text(parser *p)
{
	for (size_t i = 0; i < p->len;) {
		unsigned char c = (unsigned char)p->s[i];
		size_t n = c < 0x80 ? 1 : sbx_utf8_seq((const unsigned char *)p->s + i, p->len - i);

		if (c == '\n') {
			p->line++;
			p->line_start = i + 1;
		}
		p->pos = i;
		if (n == 0)
			return fail(p, "not valid UTF-8");
		if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
			return fail(p, "control character 0x%02x", c);
		if (c == '\r' && (i + 1 >= p->len || p->s[i + 1] != '\n'))
			return fail(p, "a carriage return not followed by a newline");
		i += n;
	}
	p->pos = p->line_start = 0;
	p->line = 1;
	return 0;
}

int sbx_toml__parse(const char *name, const char *text, size_t len, sbx_ynode **out, sbx_error *err)
{
	parser p = {.name = name, .s = text, .len = len, .line = 1, .err = err};
	_cleanup_(sbx_ytree__freep) sbx_ynode *root = NULL;
	sbx_ynode *cur;
	int r;

	if (len > SBX_YTREE_MAX_INPUT)
		return sbx_error_set(err, -EFBIG, "%s: larger than %d bytes", name,
				     SBX_YTREE_MAX_INPUT);
	r = check_text(&p);
	if (r < 0)
		return r;
	root = cur = node_new(&p, SBX_YNODE_MAP);
	if (!root)
		return -ENOMEM;
	for (;;) {
		skip_space(&p);
		if (p.pos >= p.len)
			break;
		r = peek(&p) == '[' ? header(&p, root, &cur) : assign(&p, cur, 1);
		if (r < 0)
			return r;
		skip_ws(&p);
		skip_comment(&p);
		if (p.pos < p.len && !newline(&p))
			return fail(&p, "expected the end of the line");
	}
	*out = TAKE_PTR(root);
	return 0;
}

/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "sbx/cleanup.h"
#include "ytree.h"

typedef struct builder {
	const char *name;
	yaml_parser_t parser;
	size_t nodes;
	sbx_error *err;
} builder;

void sbx_ytree__free(sbx_ynode *node)
{
	if (!node)
		return;
	for (size_t i = 0; i < node->n; i++) {
		if (node->keys)
			sbx_ytree__free(node->keys[i]);
		sbx_ytree__free(node->items[i]);
	}
	sbx_free_all(node->keys, node->items, node->value);
	free(node);
}

static int fail_at(builder *b, const yaml_mark_t *m, const char *what)
{
	return sbx_error_set(b->err, -EINVAL, "%s:%zu:%zu: %s", b->name, m->line + 1, m->column + 1,
			     what);
}

/*
 * libyaml's problem mark is where it gave up (an unterminated quote: the end
 * of the file); its context mark is where the construct began, which is what
 * to fix. With a context, the position is the context's and the text says
 * where the problem was found.
 */
static int parser_error(builder *b)
{
	const yaml_parser_t *p = &b->parser;
	const yaml_mark_t *m = p->problem ? &p->problem_mark : &p->mark;

	if (p->problem && p->context)
		return sbx_error_set(b->err, -EINVAL,
				     "%s:%zu:%zu: invalid YAML: %s (at %zu:%zu) %s", b->name,
				     p->context_mark.line + 1, p->context_mark.column + 1,
				     p->problem, m->line + 1, m->column + 1, p->context);
	return sbx_error_set(b->err, -EINVAL, "%s:%zu:%zu: invalid YAML: %s", b->name, m->line + 1,
			     m->column + 1, p->problem ? p->problem : "syntax error");
}

static sbx_ynode *node_new(builder *b, sbx_ynode_kind kind, const yaml_mark_t *m)
{
	sbx_ynode *n;

	if (++b->nodes > SBX_YTREE_MAX_NODES) {
		fail_at(b, m, "too many YAML nodes");
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		sbx_error_set(b->err, -ENOMEM, "out of memory");
		return NULL;
	}
	n->kind = kind;
	n->line = (unsigned)m->line + 1;
	n->col = (unsigned)m->column + 1;
	return n;
}

static int node_push(builder *b, sbx_ynode *parent, sbx_ynode *key, sbx_ynode *item)
{
	sbx_ynode **items = realloc(parent->items, (parent->n + 1) * sizeof(*items));

	if (!items)
		return sbx_error_set(b->err, -ENOMEM, "out of memory");
	parent->items = items;
	if (parent->kind == SBX_YNODE_MAP) {
		sbx_ynode **keys = realloc(parent->keys, (parent->n + 1) * sizeof(*keys));

		if (!keys)
			return sbx_error_set(b->err, -ENOMEM, "out of memory");
		parent->keys = keys;
		keys[parent->n] = key;
	}
	items[parent->n++] = item;
	return 0;
}

static int parse_node(builder *b, yaml_event_t *ev, unsigned depth, sbx_ynode **out);

/* Reads events until the collection ends, filling node. */
static int parse_children(builder *b, sbx_ynode *node, unsigned depth)
{
	yaml_event_type_t end =
		node->kind == SBX_YNODE_MAP ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;

	for (;;) {
		_cleanup_(sbx_ytree__freep) sbx_ynode *key = NULL;
		_cleanup_(sbx_ytree__freep) sbx_ynode *item = NULL;
		yaml_event_t ev;
		int r;

		if (!yaml_parser_parse(&b->parser, &ev))
			return parser_error(b);
		if (ev.type == end) {
			yaml_event_delete(&ev);
			return 0;
		}
		r = parse_node(b, &ev, depth + 1, node->kind == SBX_YNODE_MAP ? &key : &item);
		if (r < 0)
			return r;
		if (node->kind == SBX_YNODE_MAP) {
			if (key->kind != SBX_YNODE_SCALAR)
				return sbx_error_set(b->err, -EINVAL,
						     "%s:%u:%u: mapping keys must be plain strings",
						     b->name, key->line, key->col);
			if (sbx_ytree__get(node, key->value))
				return sbx_error_set(b->err, -EINVAL,
						     "%s:%u:%u: duplicate key '%s'", b->name,
						     key->line, key->col, key->value);
			if (!yaml_parser_parse(&b->parser, &ev))
				return parser_error(b);
			r = parse_node(b, &ev, depth + 1, &item);
			if (r < 0)
				return r;
		}
		r = node_push(b, node, key, item);
		if (r < 0)
			return r;
		TAKE_PTR(key);
		TAKE_PTR(item);
	}
}

/* Consumes ev (always deleted) and the events of its children. */
static int parse_node(builder *b, yaml_event_t *ev, unsigned depth, sbx_ynode **out)
{
	_cleanup_(sbx_ytree__freep) sbx_ynode *node = NULL;
	yaml_mark_t mark = ev->start_mark;
	int r = 0;

	if (depth > SBX_YTREE_MAX_DEPTH) {
		yaml_event_delete(ev);
		return fail_at(b, &mark, "YAML nested too deeply");
	}
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		r = fail_at(b, &mark, "YAML aliases are not allowed");
		break;
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.anchor || ev->data.scalar.tag) {
			r = fail_at(b, &mark, "YAML anchors and tags are not allowed");
			break;
		}
		if (ev->data.scalar.length > SBX_YTREE_MAX_SCALAR) {
			r = fail_at(b, &mark, "YAML scalar too long (over 64 KiB)");
			break;
		}
		if (memchr(ev->data.scalar.value, 0, ev->data.scalar.length)) {
			r = fail_at(b, &mark, "YAML scalar contains a NUL character");
			break;
		}
		node = node_new(b, SBX_YNODE_SCALAR, &mark);
		if (!node) {
			r = -EINVAL;
			break;
		}
		node->value = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
		if (!node->value) {
			r = sbx_error_set(b->err, -ENOMEM, "out of memory");
			break;
		}
		node->len = ev->data.scalar.length;
		node->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		break;
	case YAML_MAPPING_START_EVENT:
	case YAML_SEQUENCE_START_EVENT: {
		bool map = ev->type == YAML_MAPPING_START_EVENT;

		if (map ? (ev->data.mapping_start.anchor || ev->data.mapping_start.tag)
			: (ev->data.sequence_start.anchor || ev->data.sequence_start.tag)) {
			r = fail_at(b, &mark, "YAML anchors and tags are not allowed");
			break;
		}
		node = node_new(b, map ? SBX_YNODE_MAP : SBX_YNODE_SEQ, &mark);
		if (!node) {
			r = -EINVAL;
			break;
		}
		yaml_event_delete(ev);
		r = parse_children(b, node, depth);
		if (r < 0)
			return r;
		*out = TAKE_PTR(node);
		return 0;
	}
	default:
		r = fail_at(b, &mark, "unexpected YAML event");
		break;
	}
	yaml_event_delete(ev);
	if (r < 0)
		return r;
	*out = TAKE_PTR(node);
	return 0;
}

static int expect(builder *b, yaml_event_type_t type, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&b->parser, ev))
		return parser_error(b);
	if (ev->type != type) {
		yaml_mark_t m = ev->start_mark;

		yaml_event_delete(ev);
		return fail_at(b, &m,
			       type == YAML_STREAM_END_EVENT ? "only one YAML document is allowed"
							     : "unexpected YAML structure");
	}
	return 0;
}

int sbx_ytree__parse(const char *name, const char *text, size_t len, sbx_ynode **out,
		     sbx_error *err)
{
	_cleanup_(sbx_ytree__freep) sbx_ynode *root = NULL;
	builder b = {.name = name, .err = err};
	yaml_event_t ev;
	int r;

	if (len > SBX_YTREE_MAX_INPUT)
		return sbx_error_set(err, -EFBIG, "%s: file too large (over 1 MiB)", name);
	if (!yaml_parser_initialize(&b.parser))
		return sbx_error_set(err, -ENOMEM, "out of memory");
	yaml_parser_set_input_string(&b.parser, (const unsigned char *)text, len);
	r = expect(&b, YAML_STREAM_START_EVENT, &ev);
	if (r < 0)
		goto done;
	yaml_event_delete(&ev);
	if (!yaml_parser_parse(&b.parser, &ev)) {
		r = parser_error(&b);
		goto done;
	}
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		r = sbx_error_set(err, -EINVAL, "%s:1:1: empty document", name);
		goto done;
	}
	if (ev.type != YAML_DOCUMENT_START_EVENT) {
		yaml_event_delete(&ev);
		r = sbx_error_set(err, -EINVAL, "%s:1:1: unexpected YAML structure", name);
		goto done;
	}
	yaml_event_delete(&ev);
	if (!yaml_parser_parse(&b.parser, &ev)) {
		r = parser_error(&b);
		goto done;
	}
	r = parse_node(&b, &ev, 0, &root);
	if (r < 0)
		goto done;
	r = expect(&b, YAML_DOCUMENT_END_EVENT, &ev);
	if (r < 0)
		goto done;
	yaml_event_delete(&ev);
	r = expect(&b, YAML_STREAM_END_EVENT, &ev);
	if (r < 0)
		goto done;
	yaml_event_delete(&ev);
	*out = TAKE_PTR(root);
done:
	yaml_parser_delete(&b.parser);
	return r;
}

sbx_ynode *sbx_ytree__get(const sbx_ynode *map, const char *key)
{
	if (!map || map->kind != SBX_YNODE_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->keys[i]->value, key) == 0)
			return map->items[i];
	return NULL;
}

bool sbx_ytree__is_null(const sbx_ynode *node)
{
	return node && node->kind == SBX_YNODE_SCALAR && node->plain &&
	       (node->len == 0 || strcmp(node->value, "~") == 0 ||
		strcmp(node->value, "null") == 0 || strcmp(node->value, "Null") == 0 ||
		strcmp(node->value, "NULL") == 0);
}

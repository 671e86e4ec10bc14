/* SPDX-License-Identifier: MIT */
/*
 * The function registry: the tables of formula_fn_*.c flattened once, found
 * by name (the parser) and by index (the evaluator's call nodes). A file of
 * its own so the parser needs the table, not the evaluator.
 */
#include <ctype.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include "formula-internal.h"
#include "sbx/cleanup.h"

static const fx_func *const tables[] = {sbx_fx__math_funcs, sbx_fx__logic_funcs,
					sbx_fx__finance_funcs, sbx_fx__text_funcs,
					sbx_fx__lookup_funcs};

static const char *strip_prefix(const char *name, size_t *len)
{
	static const char *const prefixes[] = {"_xlfn.", "_xlws.", "COM.MICROSOFT.",
					       "ORG.OPENOFFICE."};

	for (size_t i = 0; i < SBX_ELEMENTSOF(prefixes); i++) {
		size_t n = strlen(prefixes[i]);
		if (*len > n && strncasecmp(name, prefixes[i], n) == 0) {
			*len -= n;
			return name + n;
		}
	}
	return name;
}

/* The tables flattened once, so a call finds its function by index. */
#define MAX_FUNCS 256
static const fx_func *flat[MAX_FUNCS];
static int n_flat;
static pthread_once_t flat_once = PTHREAD_ONCE_INIT;

static void flatten(void)
{
	for (size_t t = 0; t < SBX_ELEMENTSOF(tables); t++)
		for (const fx_func *f = tables[t]; f->name && n_flat < MAX_FUNCS; f++)
			flat[n_flat++] = f;
}

int sbx_fx__func_find(const char *name, size_t len)
{
	pthread_once(&flat_once, flatten);
	name = strip_prefix(name, &len);
	if (len == 0)
		return -1;
	for (int i = 0; i < n_flat; i++)
		if (toupper((unsigned char)flat[i]->name[0]) == toupper((unsigned char)name[0]) &&
		    strlen(flat[i]->name) == len && strncasecmp(flat[i]->name, name, len) == 0)
			return i;
	return -1;
}

const fx_func *sbx_fx__func(int index)
{
	pthread_once(&flat_once, flatten);
	return index >= 0 && index < n_flat ? flat[index] : NULL;
}

int sbx_fx__variant(const fx_node *call)
{
	const fx_func *f = sbx_fx__func(call->fn);

	return f ? f->variant : 0; /* a call node always names a known function */
}

bool sbx_formula_function_native(const char *name)
{
	return name && sbx_fx__func_find(name, strlen(name)) >= 0;
}

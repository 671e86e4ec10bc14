/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the files of lib/formula share (README.md, "Files"): no other module
 * sees it. A formula is parsed once into a flat node array; evaluation walks
 * it with a per-cell scratch arena for strings.
 */

#include <stdbool.h>
#include <stdint.h>

#include "sbx/formula.h"
#include "sbx/sheet_ref.h"
#include "sbx/sheet_store.h"

/*
 * Bounds on a formula, past which it is refused as unsupported (never a
 * crash): they bound the parser's and the evaluator's recursion, so the
 * worst formula admitted needs a known amount of stack (README.md,
 * "Bounded"). Nesting counts parentheses, calls, unary and postfix operators:
 * Excel allows 64 nested function levels. Text is Excel's 8,192 characters
 * (counted in bytes here). Arguments per call are Excel's and LibreOffice's
 * 255. A chain of binary operators (=1+1+...+1) does not nest: the parser
 * and the evaluator loop over it.
 */
#define FX_MAX_DEPTH 64
#define FX_MAX_TEXT  8192
#define FX_MAX_ARGS  255
/* The evaluator's own recursion guard: a parsed formula stays far below it. */
#define FX_MAX_EVAL_DEPTH (FX_MAX_DEPTH * 8)
/* Longest string a formula may build (LibreOffice's own limit is larger). */
#define FX_MAX_STRING (1u << 20)

typedef enum fx_err {
	FX_E_NONE = 0,
	FX_E_NULL,  /* #NULL! */
	FX_E_DIV0,  /* #DIV/0! */
	FX_E_VALUE, /* #VALUE! */
	FX_E_REF,   /* #REF! */
	FX_E_NAME,  /* #NAME? */
	FX_E_NUM,   /* #NUM! */
	FX_E_NA,    /* #N/A */
	FX_E_ARG,   /* Err:502, LibreOffice's "invalid argument" */
	FX_E_CYCLE, /* Err:522 */
	FX_E_UNSUP, /* not computable natively: never written as a value */
} fx_err;

const char *sbx_fx__err_text(fx_err e);
fx_err sbx_fx__err_parse(const char *text);

typedef enum fx_type {
	FX_EMPTY = 0,
	FX_NUM,
	FX_BOOL,
	FX_STR,
	FX_ERR,
	FX_REF, /* a rectangle of cells on one sheet */
} fx_type;

typedef struct fx_rect {
	uint32_t sheet; /* index in the book */
	uint32_t r0, c0, r1, c1;
} fx_rect;

typedef struct fx_val {
	fx_type type;
	fx_err err;
	double num;	 /* NUM, BOOL (0/1) */
	const char *str; /* STR: NUL-terminated, in the arena or the book's pool */
	uint32_t len;	 /* STR: bytes */
	fx_rect ref;	 /* REF */
} fx_val;

typedef enum fx_op {
	N_NUM,
	N_STR,
	N_BOOL,
	N_ERR,
	N_REF,
	N_MISSING, /* an omitted argument: IF(A1,,1) */
	N_CALL,
	N_NEG,
	N_PLUS,
	N_PCT,
	N_RANGE, /* ref:ref where an end is computed (INDEX(...):A9) */
	N_ADD,
	N_SUB,
	N_MUL,
	N_DIV,
	N_POW,
	N_CAT,
	N_EQ,
	N_NE,
	N_LT,
	N_LE,
	N_GT,
	N_GE,
} fx_op;

/* A book holds one per operand and operator of every formula: kept small. */
typedef struct fx_node {
	fx_op op;
	fx_err err;	/* N_ERR */
	int16_t fn;	/* N_CALL: index in the function table */
	uint16_t nargs; /* N_CALL */
	uint32_t a, b;	/* operands; N_CALL: first index in fx_formula.args */
	bool ref_bad;	/* N_REF to a sheet the book lacks: #REF! */
	union {
		double num; /* N_NUM, N_BOOL */
		struct {
			const char *str; /* N_STR: unescaped, in the formula's own storage */
			uint32_t len;
		};
		fx_rect ref; /* N_REF */
	};
} fx_node;

#define FX_WHY_MAX 160

typedef struct fx_formula {
	fx_node *nodes;
	uint32_t n, cap;
	uint32_t *args;
	uint32_t nargs, args_cap;
	uint32_t root;
	char *strings; /* literal text, unescaped */
	size_t strings_len, strings_cap;
	char *why; /* unsupported: the reason ("unsupported function X"), FX_WHY_MAX bytes */
	bool unsupported;
	bool borrowed; /* args and strings belong to a shape cache */
} fx_formula;

/*
 * Parses A1 formula text in the context of book b (sheet names resolve to
 * indices; a bare reference is on sheet `self`). Returns 0 (f->unsupported
 * set for what cannot be computed natively, with f->why) or -ENOMEM.
 */
int sbx_fx__parse(const sbx_book *b, uint32_t self, const char *text, fx_formula *f);
void sbx_fx__formula_free(fx_formula *f);

/* Where a node's tokens were in the formula text (a traced parse). */
typedef struct fx_origin {
	uint32_t pos[2]; /* offsets: N_REF its ends' words, N_NUM its digits; UINT32_MAX none */
	uint32_t raw[4]; /* N_REF: row, col of each end as written (not yet ordered) */
} fx_origin;

/* sbx_fx__parse, also giving one fx_origin per node (*origins: free it). */
int sbx_fx__parse_traced(const sbx_book *b, uint32_t self, const char *text, fx_formula *f,
			 fx_origin **origins);

/*
 * Formulas that differ only in their cell references and small integers
 * (=A2*2+1, =A3*2+1, ...) share one parse: formula_shape.c parses the
 * first, then copies its nodes for the others with their own references.
 */
typedef struct fx_shapes fx_shapes;

fx_shapes *sbx_fx__shapes_new(void);
/* Frees the cache and what the formulas it gave point to. */
void sbx_fx__shapes_free(fx_shapes *s);
/* sbx_fx__parse through the cache: f may borrow from it (free f before it). */
int sbx_fx__shapes_parse(fx_shapes *s, const sbx_book *b, uint32_t self, const char *text,
			 fx_formula *f);

/* Scratch memory for one evaluation; reset between cells. */
typedef struct fx_arena {
	char **chunks;
	size_t n, cap;
	size_t used, size; /* in the last chunk */
	uint64_t bytes;
} fx_arena;

void sbx_fx__arena_reset(fx_arena *a);
void sbx_fx__arena_free(fx_arena *a);
/* NULL when out of memory. */
char *sbx_fx__arena_alloc(fx_arena *a, size_t n);

typedef struct fx_ctx fx_ctx;
typedef struct fx_indexes fx_indexes;

/*
 * How the evaluator reads a formula cell's value (recalc: its computed one).
 * Returns false to use the cell's cached value.
 */
typedef bool (*fx_formula_cell_fn)(fx_ctx *c, uint32_t sheet, uint32_t row, uint32_t col,
				   const scell *cell, fx_val *out);

struct fx_ctx {
	const sbx_book *book;
	uint32_t sheet, row, col; /* the cell being computed */
	const fx_formula *f;
	fx_arena arena;
	uint64_t steps, max_steps;
	uint32_t depth;	  /* sbx_fx__eval calls open */
	bool over;	  /* max_steps passed */
	bool oom;	  /* out of memory */
	bool unsupported; /* something unsupported was hit */
	/*
	 * Text comparisons with = < > etc. respect case: ODF's default
	 * (table:case-sensitive), which LibreOffice applies to ODS files;
	 * XLSX, like Excel, ignores case. Criteria and lookups always ignore it.
	 */
	bool case_sensitive;
	char why[160];
	fx_formula_cell_fn formula_cell;
	void *userdata;
	/* Used range per sheet, computed once: the book does not change while evaluating. */
	struct fx_used {
		bool known;
		uint32_t rows, cols;
	} * used;
	size_t n_used;
	fx_indexes *indexes; /* exact-match lookups (formula_index.c) */
};

/* Frees what a context holds (arena, caches). */
void sbx_fx__ctx_free(fx_ctx *c);

/* Evaluates node i (references stay references). */
void sbx_fx__eval(fx_ctx *c, uint32_t i, fx_val *out);
/* Evaluates node i to a scalar (a reference is dereferenced or intersected). */
void sbx_fx__eval_scalar(fx_ctx *c, uint32_t i, fx_val *out);
/* The value of one cell. */
void sbx_fx__cell(fx_ctx *c, uint32_t sheet, uint32_t row, uint32_t col, fx_val *out);
/* A reference as a scalar: one cell, or implicit intersection with the current row/column. */
void sbx_fx__deref(fx_ctx *c, const fx_val *ref, fx_val *out);

/* Walks a rectangle: non-empty cells only (fn gets their values). fn returns false to stop. */
typedef bool (*fx_cell_visit)(fx_ctx *c, uint32_t row, uint32_t col, const fx_val *v, void *ud);
void sbx_fx__each(fx_ctx *c, const fx_rect *r, fx_cell_visit fn, void *ud);
/* The rectangle clamped to what its sheet uses (false: nothing left). */
bool sbx_fx__clamp(fx_ctx *c, const fx_rect *r, fx_rect *out);

/* Coercions: false with *err set when the value cannot be one. */
bool sbx_fx__to_num(fx_ctx *c, const fx_val *v, double *out, fx_err *err);
bool sbx_fx__to_bool(fx_ctx *c, const fx_val *v, bool *out, fx_err *err);
/* Text of a scalar ("" for empty, numbers in LibreOffice's general format). */
bool sbx_fx__to_str(fx_ctx *c, const fx_val *v, const char **out, uint32_t *len, fx_err *err);
/* Parses a whole string as a number the way LibreOffice converts text (unambiguous only). */
bool sbx_fx__parse_number(const char *s, uint32_t len, double *out);
/* A number as text in a formula (=1/3&""), as LibreOffice writes it (formula_numtext.c). */
void sbx_fx__format_general(double v, char buf[static 40]);
/* A number as TEXT(v,"General") writes it. */
void sbx_fx__format_text_general(double v, char buf[static 40]);
/*
 * a (>= 0) in fixed notation with exactly `decimals` (0..15) decimals, rounded
 * as LibreOffice's number formats do. Returns the length, or -1 when a is
 * 1e300 or more or cap is under 330.
 */
int sbx_fx__format_fixed(double a, int decimals, char *out, size_t cap);

/* x^y with LibreOffice's errors (poles and complex results #NUM!; 0^0 is 1). */
double sbx_fx__pow(double x, double y, fx_err *err);

/* Results. */
void sbx_fx__set_num(fx_val *v, double n);
void sbx_fx__set_bool(fx_val *v, bool b);
void sbx_fx__set_err(fx_val *v, fx_err e);
/* Room for a len-byte string result and its NUL; NULL (v an error, c->oom) when out of memory. */
char *sbx_fx__str_alloc(fx_ctx *c, size_t len, fx_val *v);
/* A string copied into the arena (an error when it does not fit). */
void sbx_fx__set_str(fx_ctx *c, fx_val *v, const char *s, size_t len);
/* Marks the evaluation unsupported (the first reason is kept) and sets v to FX_E_UNSUP. */
void sbx_fx__unsupported(fx_ctx *c, fx_val *v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Counts one unit of work; false once the cap is passed (inline: every node and cell counts). */
static inline bool sbx_fx__step(fx_ctx *c, uint64_t n)
{
	c->steps += n;
	if (c->steps > c->max_steps)
		c->over = true;
	return !c->over;
}

/* The same, case-sensitive for equal-ignoring-case text (lower case first). */
int sbx_fx__compare_case(const fx_val *a, const fx_val *b);

/* rtl::math::approxEqual and LibreOffice's approxAdd (cancellation noise is 0). */
bool sbx_fx__approx_equal(double a, double b);
double sbx_fx__approx_add(double a, double b);

/* Compares two scalars as LibreOffice does (numbers < text < ... ; text case-insensitive). */
int sbx_fx__compare(const fx_val *a, const fx_val *b);

/* ---- functions ---- */

/* Argument helpers: false with *res set to the error when the argument is not one. */
bool sbx_fx__arg_num(fx_ctx *c, uint32_t node, double *out, fx_val *res);
bool sbx_fx__arg_bool(fx_ctx *c, uint32_t node, bool *out, fx_val *res);
/* A reference argument; anything else gives not_ref (or its own error). */
bool sbx_fx__arg_ref(fx_ctx *c, uint32_t node, fx_rect *out, fx_val *res, fx_err not_ref);
/* Argument i is there and not omitted (IF(A1,,1)). */
bool sbx_fx__given(fx_ctx *c, const fx_node *call, const uint32_t *args, uint32_t i);

typedef void (*fx_fn)(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out);

typedef struct fx_func {
	const char *name;
	uint8_t min, max; /* argument counts; max 255 = any */
	fx_fn fn;
	uint8_t variant; /* which of the functions fn computes (ROUND, ROUNDUP, ...) */
} fx_func;

extern const fx_func sbx_fx__math_funcs[];
extern const fx_func sbx_fx__logic_funcs[];
extern const fx_func sbx_fx__finance_funcs[];
extern const fx_func sbx_fx__text_funcs[];
extern const fx_func sbx_fx__lookup_funcs[];

/* Finds a function by name (prefixes stripped); -1 when unknown. */
int sbx_fx__func_find(const char *name, size_t len);
const fx_func *sbx_fx__func(int index);
/* The variant of the function a call node calls. */
int sbx_fx__variant(const fx_node *call);

/*
 * An exact match for key in the n cells from (r0,c0) down (dr 1) or along
 * (dr 0): FX_INDEX_ABSENT when no cell equals it, FX_INDEX_SCAN when the
 * caller must scan, else the first position whose value hashes like key
 * (the caller compares: it may be a collision).
 */
#define FX_INDEX_ABSENT (-1)
#define FX_INDEX_SCAN	(-2)
int64_t sbx_fx__index_find(fx_ctx *c, uint32_t sheet, uint32_t r0, uint32_t c0, uint32_t dr,
			   uint64_t n, const fx_val *key);
void sbx_fx__indexes_free(fx_indexes *x);

/* Criteria of COUNTIF and friends ("<=5", "x", 3). */
typedef struct fx_crit {
	int op; /* 0 =, 1 <>, 2 <, 3 <=, 4 >, 5 >= */
	fx_val v;
	bool num_ok; /* v is a number (or text that reads as one) */
	double num;
} fx_crit;

void sbx_fx__crit_init(fx_ctx *c, const fx_val *criterion, fx_crit *out);
bool sbx_fx__crit_match(const fx_crit *k, const fx_val *v);

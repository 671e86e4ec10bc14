/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Workbooks for the spreadsheet tools. A parsed workbook is cached keyed by
 * path, device, inode, mtime and size, so a read_cell on an unchanged file
 * costs a stat, not a parse; a file changed by other means (execute_python,
 * the host copying task files in late) is simply read again. Saving is
 * atomic and confined: a temp file beside the target, opened through a
 * directory fd resolved beneath the workspace, then renameat().
 *
 * The cache belongs to the server (server_init makes it): one lock in it
 * serialises the spreadsheet tools: wb_open takes it, wb_close releases it.
 */

#include <sys/stat.h>
#include <cjson/cJSON.h>

#include "sbx/sheet.h"
#include "server.h"

typedef struct wb_cache wb_cache;

/* An empty cache, or NULL on out-of-memory. */
wb_cache *wb_cache_new(void);

/* Frees the cache and every workbook in it. Accepts NULL. */
void wb_cache_free(wb_cache *c);

typedef struct wb_handle {
	wb_cache *cache;
	sbx_book *book;	 /* borrowed from the cache */
	const char *arg; /* the file_path argument, for messages */
	char *rel;	 /* workspace-relative path */
	struct wb_entry *entry;
	bool locked;
} wb_handle;

/*
 * Opens the workbook named by args.file_path (takes the lock). On failure
 * fills out ("File not found: x.ods", not a spreadsheet, ...) and returns a
 * negative errno; the lock is not held then.
 */
int wb_open(tool_context *ctx, const cJSON *args, wb_handle *h, tool_result *out);

/*
 * The sheet named by args.sheet_name (key may be another name), or the first
 * sheet when the argument is absent. "Sheet 'X' not found" otherwise.
 */
sbx_sheet *wb_sheet(wb_handle *h, const cJSON *args, const char *key, tool_result *out);

/* Saves the book over its file atomically; notes the file as modified. */
int wb_save(tool_context *ctx, wb_handle *h, tool_result *out);

/* Releases the lock. Accepts a handle that was never opened. */
void wb_close(wb_handle *h);

/* Forgets every cached workbook: what follows is read from the files again. */
void wb_cache_clear(wb_cache *c);

/* Forgets the cached book after a failed change (the file was not written). */
void wb_discard(wb_handle *h);

/*
 * wb_open, then wb_sheet(h, args, NULL, out): the sheet the tool works on.
 * NULL (out filled, the lock not held) when either fails.
 */
sbx_sheet *wb_open_sheet(tool_context *ctx, const cJSON *args, wb_handle *h, tool_result *out);

/*
 * Ends a tool that failed: forgets the book when discard is set (its change
 * failed half-way), releases the lock and fails the tool (TOOL_E_ARGUMENT)
 * with the formatted message. Returns 0, as a handler does for a failure it
 * reported. wb_fail_discard after a change; wb_fail_keep for a refusal before
 * any, which leaves the book cached.
 */
int wb_fail(wb_handle *h, tool_result *out, bool discard, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define wb_fail_discard(h, out, ...) wb_fail(h, out, true, __VA_ARGS__)
#define wb_fail_keep(h, out, ...)    wb_fail(h, out, false, __VA_ARGS__)

/*
 * Ends a tool that changed the book: saves it (only when changed is true),
 * hands o to out->structured and releases the lock. o NULL (out of memory):
 * the change is discarded and -ENOMEM returned. A failed save leaves its
 * message in out and frees o; returns 0 then.
 */
int wb_save_answer(tool_context *ctx, wb_handle *h, tool_result *out, cJSON *o, bool changed);

/* ---- cell helpers shared by the spreadsheet tools (sheet_cells.c) ---- */

/* Parses "B7" into 0-based row/col, or fills out with "Invalid cell reference: ...". */
int cell_parse(const char *text, uint32_t *row, uint32_t *col, tool_result *out);

/* "B7" for 0-based row/col into buf (>= 16 bytes). */
char *cell_name(uint32_t row, uint32_t col, char buf[static 16]);

/* The JSON value of a cell: number, string, boolean, ISO date/time text, or null. */
cJSON *cell_value_json(const sbx_cell *c);

/* The ODF value-type name of a cell: float, string, boolean, date, ..., empty. */
const char *cell_type_name(const sbx_cell *c);

/*
 * Replaces the workspace file rel with data, atomically and confined (the
 * same way wb_save writes), drops it from the cache and notes it modified.
 * When expected is not NULL the file must still be that one (same inode,
 * size and mtime), else -EAGAIN: someone wrote it meanwhile.
 */
int wb_replace_file(tool_context *ctx, const char *rel, const void *data, size_t len,
		    const struct stat *expected, sbx_error *err);

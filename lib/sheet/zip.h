/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Zip access for the ODS and XLSX readers and writers.
 * Reading goes through libarchive with every limit enforced while the data
 * is decompressed: entry count, total unpacked bytes, unpacked/packed ratio.
 * Writing is a small hand-made zip (libarchive always adds extra fields,
 * which ODF forbids on the leading "mimetype" entry) deflated with zlib.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sbx/buf.h"
#include "sbx/error.h"
#include "sbx/sheet.h"

struct archive;

/* Budget shared by every entry read from one file. */
typedef struct sheet_zip_budget {
	const sbx_sheet_limits *lim;
	const char *file; /* for messages */
	size_t packed;	  /* size of the zip file */
	uint64_t unpacked;
} sheet_zip_budget;

typedef struct sheet_zip {
	struct archive *a;
	sheet_zip_budget *budget;
	const char *entry; /* the entry being read, for messages */
} sheet_zip;

/*
 * Opens the zip image and positions it at the entry named entry.
 * Returns 0, -ENOENT when there is no such entry (err not set), or another
 * negative errno with err set ("'x.ods': not a zip file: ...").
 */
int sbx_sheet__zip_open_entry(sheet_zip *z, const void *data, size_t len, sheet_zip_budget *budget,
			      const char *entry, sbx_error *err);

/* Reads up to n bytes of the current entry; 0 at its end; negative errno with err set. */
ssize_t sbx_sheet__zip_read(sheet_zip *z, void *buf, size_t n, sbx_error *err);

/* Reads the whole entry into out (at most max bytes). -ENOENT when absent (err not set). */
int sbx_sheet__zip_slurp(const void *data, size_t len, sheet_zip_budget *budget, const char *entry,
			 size_t max, sbx_buf *out, sbx_error *err);

void sbx_sheet__zip_close(sheet_zip *z);

/* ---- writing ---- */

typedef struct sheet_zip_writer {
	sbx_buf *out;
	sbx_buf central; /* central directory being built */
	uint32_t count;
	/* the entry being written */
	struct z_stream_s *zs;
	const char *name;
	size_t hdr_off, data_off;
	uint64_t usize;
	uint32_t crc;
	bool compress, open;
	int level; /* deflate level of the entries begun from now on (init: 6) */
	struct sheet_zip_deflater *bg; /* deflating the open entry on a second thread, or NULL */
	bool bg_unavailable;	       /* no thread could be had for this entry: do not retry */
} sheet_zip_writer;

void sbx_sheet__zipw_init(sheet_zip_writer *w, sbx_buf *out);
/* Adds one entry; stored when compress is false. */
int sbx_sheet__zipw_add(sheet_zip_writer *w, const char *name, const void *data, size_t len,
			bool compress, sbx_error *err);
/* The same in pieces, so a big part is deflated as it is produced. */
int sbx_sheet__zipw_begin(sheet_zip_writer *w, const char *name, bool compress, sbx_error *err);
int sbx_sheet__zipw_write(sheet_zip_writer *w, const void *data, size_t len, sbx_error *err);
/*
 * Hands what b holds to the open entry once it holds at least at bytes (0:
 * whatever it holds), then empties b. The writers build a part into b and
 * flush every SHEET_ZIP_FLUSH_AT bytes, so a big part is never whole in memory.
 */
#define SHEET_ZIP_FLUSH_AT ((size_t)1 << 20)
int sbx_sheet__zipw_flush(sheet_zip_writer *w, sbx_buf *b, size_t at, sbx_error *err);
/* Ends a sheet row: appends its closing tag to b, then flushes at SHEET_ZIP_FLUSH_AT. */
int sbx_sheet__zipw_end_row(sheet_zip_writer *w, sbx_buf *b, const char *close_tag, sbx_error *err);
int sbx_sheet__zipw_end(sheet_zip_writer *w, sbx_error *err);
/* Writes the central directory. */
int sbx_sheet__zipw_finish(sheet_zip_writer *w, sbx_error *err);
void sbx_sheet__zipw_free(sheet_zip_writer *w);

/*
 * crc32 and deflate (or store) len bytes of the open entry into out; -errno on
 * failure. The deflater thread's step: call it yourself only when w->bg is
 * NULL (or synced); it neither counts usize nor checks the zip limits.
 */
int sbx_sheet__zipw_consume(sheet_zip_writer *w, const void *data, size_t len);

/*
 * Deflating an entry on a second thread (zip_deflater.c), started by
 * sbx_sheet__zipw_flush once a part passes one chunk. start() returns NULL
 * when no thread could be had (the writer then deflates by itself); hand()
 * gives the thread what b holds, swapping b for the emptied buffer of the
 * chunk before; sync() waits until the thread holds nothing, so the caller
 * may touch the entry's stream; stop() syncs, joins and frees (accepts
 * NULL). Each returns the thread's first failure (-errno) or 0.
 */
typedef struct sheet_zip_deflater sheet_zip_deflater;
sheet_zip_deflater *sbx_sheet__deflater_start(sheet_zip_writer *w, size_t max);
int sbx_sheet__deflater_hand(sheet_zip_deflater *d, sbx_buf *b);
int sbx_sheet__deflater_sync(sheet_zip_deflater *d);
int sbx_sheet__deflater_stop(sheet_zip_deflater *d);

/*
 * Reading an entry through a producer thread (zip_pipe.c). start() takes
 * an opened sheet_zip; next() returns the next chunk's length (0 at the
 * end, negative errno with err set on failure) and the chunk stays valid
 * until the next call; stop() joins the thread and frees. Accepts NULL.
 */
typedef struct sheet_zip_pipe sheet_zip_pipe;
int sbx_sheet__pipe_start(sheet_zip_pipe **out, sheet_zip *z, sbx_error *err);
ssize_t sbx_sheet__pipe_next(sheet_zip_pipe *p, const char **chunk, sbx_error *err);
void sbx_sheet__pipe_stop(sheet_zip_pipe *p);

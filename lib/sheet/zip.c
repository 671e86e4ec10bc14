/* SPDX-License-Identifier: MIT */
/* Zip reading (libarchive, with limits) and writing (by hand, zlib deflate). */
#include <assert.h>
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sheet-internal.h"
#include "zip.h"

/* Past this many unpacked bytes the ratio check applies. */
#define RATIO_FLOOR ((uint64_t)16 << 20)

void sbx_sheet__zip_close(sheet_zip *z)
{
	if (z->a)
		archive_read_free(z->a);
	z->a = NULL;
}

int sbx_sheet__zip_open_entry(sheet_zip *z, const void *data, size_t len, sheet_zip_budget *budget,
			      const char *entry, sbx_error *err)
{
	struct archive_entry *e;
	uint32_t n = 0;
	int r;

	z->budget = budget;
	z->entry = entry;
	z->a = archive_read_new();
	if (!z->a)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	archive_read_support_format_zip(z->a);
	if (archive_read_open_memory(z->a, data, len) != ARCHIVE_OK) {
		r = sbx_error_set(err, -EINVAL, "'%s': not a zip file: %s", budget->file,
				  archive_error_string(z->a));
		sbx_sheet__zip_close(z);
		return r;
	}
	for (;;) {
		r = archive_read_next_header(z->a, &e);
		if (r == ARCHIVE_EOF) {
			sbx_sheet__zip_close(z);
			return -ENOENT;
		}
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			r = sbx_error_set(err, -EINVAL, "'%s': corrupt zip: %s", budget->file,
					  archive_error_string(z->a));
			sbx_sheet__zip_close(z);
			return r;
		}
		if (++n > budget->lim->max_entries) {
			sbx_sheet__zip_close(z);
			return sbx_error_set(err, -E2BIG, "'%s': more than %u zip entries (limit)",
					     budget->file, budget->lim->max_entries);
		}
		const char *name = archive_entry_pathname(e);
		if (name && strcmp(name, entry) == 0)
			return 0;
	}
}

ssize_t sbx_sheet__zip_read(sheet_zip *z, void *buf, size_t n, sbx_error *err)
{
	sheet_zip_budget *b = z->budget;
	la_ssize_t got = archive_read_data(z->a, buf, n);

	if (got < 0)
		return sbx_error_set(err, -EINVAL, "'%s': %s: corrupt zip data: %s", b->file,
				     z->entry, archive_error_string(z->a));
	b->unpacked += (uint64_t)got;
	if (b->unpacked > b->lim->max_unpacked)
		return sbx_error_set(err, -E2BIG, "'%s': %s: more than %llu bytes unpacked (limit)",
				     b->file, z->entry, (unsigned long long)b->lim->max_unpacked);
	if (b->unpacked > RATIO_FLOOR &&
	    b->unpacked / (b->packed ? b->packed : 1) > b->lim->max_ratio)
		return sbx_error_set(err, -E2BIG,
				     "'%s': %s: compression ratio above %u (limit; zip bomb?)",
				     b->file, z->entry, b->lim->max_ratio);
	return got;
}

int sbx_sheet__zip_slurp(const void *data, size_t len, sheet_zip_budget *budget, const char *entry,
			 size_t max, sbx_buf *out, sbx_error *err)
{
	sheet_zip z = {0};
	char tmp[65536];
	int r;

	r = sbx_sheet__zip_open_entry(&z, data, len, budget, entry, err);
	if (r < 0)
		return r;
	sbx_buf_reset(out);
	for (;;) {
		ssize_t n = sbx_sheet__zip_read(&z, tmp, sizeof(tmp), err);
		if (n < 0) {
			r = (int)n;
			break;
		}
		if (n == 0)
			break;
		if (out->len + (size_t)n > max) {
			r = sbx_error_set(err, -E2BIG, "'%s': %s: larger than %zu bytes (limit)",
					  budget->file, entry, max);
			break;
		}
		r = sbx_buf_append(out, tmp, (size_t)n);
		if (r < 0) {
			r = sbx_error_set(err, r, "'%s': %s: out of memory", budget->file, entry);
			break;
		}
	}
	sbx_sheet__zip_close(&z);
	return r;
}

/* ---- writing ---- */

/* One little-endian field of a zip record: its width in bytes (2 or 4) and its value. */
typedef struct le_field {
	unsigned width;
	uint32_t value;
} le_field;

#define U16(v) ((le_field){2, (uint32_t)(v)})
#define U32(v) ((le_field){4, (uint32_t)(v)})
/* Appends a record given as its list of fields, in the order the zip format lays them out. */
#define PUT_FIELDS(b, ...)                                                                         \
	put_fields(b, (const le_field[]){__VA_ARGS__},                                             \
		   sizeof((const le_field[]){__VA_ARGS__}) / sizeof(le_field))

static int put_fields(sbx_buf *b, const le_field *f, size_t n)
{
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		unsigned char c[4];

		for (unsigned k = 0; k < f[i].width; k++)
			c[k] = (unsigned char)(f[i].value >> (8 * k));
		r = sbx_buf_append(b, c, f[i].width);
	}
	return r;
}

void sbx_sheet__zipw_init(sheet_zip_writer *w, sbx_buf *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->level = 6;
	sbx_buf_init(&w->central, (size_t)64 << 20);
}

void sbx_sheet__zipw_free(sheet_zip_writer *w)
{
	(void)sbx_sheet__deflater_stop(TAKE_PTR(w->bg));
	if (w->zs) {
		deflateEnd(w->zs);
		free(w->zs);
		w->zs = NULL;
	}
	sbx_buf_free(&w->central);
}

static void patch32(sbx_buf *b, size_t off, uint32_t v)
{
	unsigned char *c = (unsigned char *)b->data + off;
	c[0] = (unsigned char)v;
	c[1] = (unsigned char)(v >> 8);
	c[2] = (unsigned char)(v >> 16);
	c[3] = (unsigned char)(v >> 24);
}

static int entry_fail(sheet_zip_writer *w, int r, sbx_error *err)
{
	(void)sbx_sheet__deflater_stop(TAKE_PTR(w->bg)); /* before its stream goes */
	if (w->zs) {
		deflateEnd(w->zs);
		free(w->zs);
		w->zs = NULL;
	}
	w->open = false;
	return sbx_error_set(err, r, "zip entry '%s': %s", w->name,
			     r == -ENOBUFS ? "output too large"
			     : r == -EFBIG ? "too large (no zip64)"
					   : "out of memory");
}

int sbx_sheet__zipw_begin(sheet_zip_writer *w, const char *name, bool compress, sbx_error *err)
{
	size_t name_len = strlen(name);
	int r;

	assert(!w->open);
	w->name = name;
	w->compress = compress;
	w->crc = crc32(0L, Z_NULL, 0);
	w->usize = 0;
	w->bg_unavailable = false;
	w->hdr_off = w->out->len;
	if (w->hdr_off > UINT32_MAX)
		return entry_fail(w, -EFBIG, err);
	if (compress) {
		w->zs = calloc(1, sizeof(z_stream));
		if (!w->zs ||
		    deflateInit2(w->zs, w->level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			free(w->zs);
			w->zs = NULL;
			return entry_fail(w, -ENOMEM, err);
		}
	}
	/* Local header; crc and sizes are patched in at the end. DOS time: 1980-01-01. */
	r = PUT_FIELDS(w->out, U32(0x04034b50), U16(20), U16(0x0800) /* UTF-8 names */,
		       U16(compress ? 8 : 0), U16(0), U16(0x21), U32(0) /* crc */,
		       U32(0) /* compressed size */, U32(0) /* size */, U16(name_len),
		       U16(0) /* extra length */);
	if (r == 0)
		r = sbx_buf_append(w->out, name, name_len);
	if (r < 0)
		return entry_fail(w, r, err);
	w->data_off = w->out->len;
	w->open = true;
	return 0;
}

/* Runs deflate over the input set in zs, appending output to out. */
static int pump(sheet_zip_writer *w, int flush)
{
	unsigned char tmp[65536];
	int zr, r = 0;

	do {
		w->zs->next_out = tmp;
		w->zs->avail_out = sizeof(tmp);
		zr = deflate(w->zs, flush);
		if (zr == Z_STREAM_ERROR)
			return -EIO;
		r = sbx_buf_append(w->out, tmp, sizeof(tmp) - w->zs->avail_out);
	} while (r == 0 && (w->zs->avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END)));
	return r;
}

int sbx_sheet__zipw_consume(sheet_zip_writer *w, const void *data, size_t len)
{
	const unsigned char *p = data;
	int r = 0;

	while (len > 0 && r == 0) {
		uInt chunk = len > (1u << 30) ? (1u << 30) : (uInt)len;
		w->crc = (uint32_t)crc32(w->crc, p, chunk);
		if (w->compress) {
			w->zs->next_in = (Bytef *)(uintptr_t)p;
			w->zs->avail_in = chunk;
			r = pump(w, Z_NO_FLUSH);
		} else {
			r = sbx_buf_append(w->out, p, chunk);
		}
		p += chunk;
		len -= chunk;
	}
	return r;
}

/* Counts len more bytes into the open entry; false past what a zip without zip64 holds. */
static bool count_in(sheet_zip_writer *w, size_t len)
{
	if (w->usize + len > UINT32_MAX)
		return false;
	w->usize += len;
	return true;
}

int sbx_sheet__zipw_write(sheet_zip_writer *w, const void *data, size_t len, sbx_error *err)
{
	int r = 0;

	assert(w->open);
	if (!count_in(w, len))
		return entry_fail(w, -EFBIG, err);
	if (w->bg) /* the thread must be done with the stream, and the order kept */
		r = sbx_sheet__deflater_sync(w->bg);
	if (r == 0)
		r = sbx_sheet__zipw_consume(w, data, len);
	return r < 0 ? entry_fail(w, r, err) : 0;
}

int sbx_sheet__zipw_flush(sheet_zip_writer *w, sbx_buf *b, size_t at, sbx_error *err)
{
	int r = 0;

	if (b->len < at || b->len == 0)
		return 0;
	/* A whole chunk of a compressed part: a big one, worth a second thread. */
	if (!w->bg && !w->bg_unavailable && w->compress && at > 0) {
		w->bg = sbx_sheet__deflater_start(w, b->max);
		w->bg_unavailable = !w->bg;
	}
	if (!w->bg) {
		r = sbx_sheet__zipw_write(w, b->data, b->len, err);
		sbx_buf_reset(b);
		return r;
	}
	if (!count_in(w, b->len))
		return entry_fail(w, -EFBIG, err);
	r = sbx_sheet__deflater_hand(w->bg, b);
	return r < 0 ? entry_fail(w, r, err) : 0;
}

int sbx_sheet__zipw_end_row(sheet_zip_writer *w, sbx_buf *b, const char *close_tag, sbx_error *err)
{
	int r = sbx_buf_puts(b, close_tag);

	return r < 0 ? r : sbx_sheet__zipw_flush(w, b, SHEET_ZIP_FLUSH_AT, err);
}

int sbx_sheet__zipw_end(sheet_zip_writer *w, sbx_error *err)
{
	size_t name_len = strlen(w->name);
	int r = 0;

	assert(w->open);
	r = sbx_sheet__deflater_stop(TAKE_PTR(w->bg));
	if (r < 0)
		return entry_fail(w, r, err);
	if (w->compress) {
		w->zs->next_in = NULL;
		w->zs->avail_in = 0;
		r = pump(w, Z_FINISH);
		deflateEnd(w->zs);
		free(w->zs);
		w->zs = NULL;
		if (r < 0)
			return entry_fail(w, r, err);
	}
	w->open = false;
	size_t csize = w->out->len - w->data_off;
	if (csize > UINT32_MAX)
		return entry_fail(w, -EFBIG, err);
	patch32(w->out, w->hdr_off + 14, w->crc);
	patch32(w->out, w->hdr_off + 18, (uint32_t)csize);
	patch32(w->out, w->hdr_off + 22, (uint32_t)w->usize);

	sbx_buf *c = &w->central;
	r = PUT_FIELDS(c, U32(0x02014b50), U16(0x0314) /* made by: unix, 2.0 */, U16(20),
		       U16(0x0800), U16(w->compress ? 8 : 0), U16(0), U16(0x21), U32(w->crc),
		       U32(csize), U32(w->usize), U16(name_len), U16(0) /* extra length */,
		       U16(0) /* comment length */, U16(0) /* disk */,
		       U16(0) /* internal attributes */,
		       U32(0100644u << 16) /* external attributes: a regular file, 0644 */,
		       U32(w->hdr_off));
	if (r == 0)
		r = sbx_buf_append(c, w->name, name_len);
	if (r < 0)
		return sbx_error_set(err, r, "zip directory: out of memory");
	w->count++;
	return 0;
}

int sbx_sheet__zipw_add(sheet_zip_writer *w, const char *name, const void *data, size_t len,
			bool compress, sbx_error *err)
{
	int r = sbx_sheet__zipw_begin(w, name, compress, err);

	if (r == 0)
		r = sbx_sheet__zipw_write(w, data, len, err);
	if (r == 0)
		r = sbx_sheet__zipw_end(w, err);
	return r;
}

int sbx_sheet__zipw_finish(sheet_zip_writer *w, sbx_error *err)
{
	size_t cd_off = w->out->len;
	int r;

	if (cd_off > UINT32_MAX || w->count > 0xffff)
		return sbx_error_set(err, -EFBIG, "zip too large (no zip64)");
	r = sbx_buf_append(w->out, w->central.data, w->central.len);
	if (r == 0)
		r = PUT_FIELDS(w->out, U32(0x06054b50), U16(0) /* disk */,
			       U16(0) /* directory disk */, U16(w->count), U16(w->count),
			       U32(w->central.len), U32(cd_off), U16(0) /* comment length */);
	if (r < 0)
		return sbx_error_set(err, r, "zip: %s",
				     r == -ENOBUFS ? "output too large" : "out of memory");
	return 0;
}

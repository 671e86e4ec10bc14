/* SPDX-License-Identifier: MIT */
/* Opening and saving books: format detection, size caps, atomic replace. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>

#include "sbx/file.h"
#include "sbx/path.h"
#include "sheet-internal.h"

#define ODS_MIME "application/vnd.oasis.opendocument.spreadsheet"

static sbx_sheet_format format_from_name(const char *name)
{
	const char *dot = name ? strrchr(name, '.') : NULL;

	if (!dot)
		return SBX_FORMAT_AUTO;
	if (strcasecmp(dot, ".ods") == 0)
		return SBX_FORMAT_ODS;
	if (strcasecmp(dot, ".xlsx") == 0 || strcasecmp(dot, ".xlsm") == 0)
		return SBX_FORMAT_XLSX;
	if (strcasecmp(dot, ".csv") == 0 || strcasecmp(dot, ".txt") == 0)
		return SBX_FORMAT_CSV;
	return SBX_FORMAT_AUTO;
}

sbx_sheet_format sbx_sheet_detect_format(const char *name, const void *head, size_t len)
{
	const unsigned char *h = head;
	sbx_sheet_format by_name = format_from_name(name);

	if (h && len >= 4 && memcmp(h, "PK\003\004", 4) == 0) {
		/* ODF puts an uncompressed "mimetype" entry first: name at 30, data at 38. */
		if (len >= 38 + strlen(ODS_MIME) && memcmp(h + 30, "mimetype", 8) == 0 &&
		    memcmp(h + 38, ODS_MIME, strlen(ODS_MIME)) == 0)
			return SBX_FORMAT_ODS;
		if (by_name == SBX_FORMAT_ODS || by_name == SBX_FORMAT_XLSX)
			return by_name;
		return SBX_FORMAT_XLSX;
	}
	/* A .ods/.xlsx that is not a zip stays what its name says, so it fails as a broken one. */
	return by_name;
}

/* libxml2 must be initialised once before threads use it concurrently. */
static void init_xml(void)
{
	xmlInitParser();
}

int sbx_book_open_memory(const void *data, size_t len, const char *name,
			 const sbx_sheet_open_options *opts, sbx_book **out, sbx_error *err)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	sbx_sheet_open_options o = SBX_SHEET_OPEN_OPTIONS_INIT;
	_cleanup_book_ sbx_book *b = NULL;
	sbx_sheet_format fmt;
	int r;

	pthread_once(&once, init_xml);
	if (!name)
		name = "<memory>";
	if (opts)
		o = *opts;
	sbx_sheet__limits_fill(&o.limits);
	if (len > o.limits.max_file_size)
		return sbx_error_set(err, -EFBIG, "'%s': larger than %llu bytes (limit)", name,
				     (unsigned long long)o.limits.max_file_size);
	fmt = o.format;
	if (fmt == SBX_FORMAT_AUTO)
		fmt = sbx_sheet_detect_format(name, data, len);
	if (fmt == SBX_FORMAT_AUTO)
		return sbx_error_set(err, -EINVAL, "'%s': not a spreadsheet (ods, xlsx or csv)",
				     name);
	r = sbx_book_new(fmt, &b, err);
	if (r < 0)
		return r;
	b->limits = o.limits;
	switch (fmt) {
	case SBX_FORMAT_ODS:
		r = sbx_sheet__read_ods(b, data, len, name, &o, err);
		break;
	case SBX_FORMAT_XLSX:
		r = sbx_sheet__read_xlsx(b, data, len, name, &o, err);
		break;
	default:
		r = sbx_sheet__read_csv(b, data, len, name, &o, err);
		break;
	}
	if (r < 0)
		return r;
	*out = TAKE_PTR(b);
	return 0;
}

int sbx_book_open(const char *path, const sbx_sheet_open_options *opts, sbx_book **out,
		  sbx_error *err)
{
	sbx_sheet_limits l = SBX_SHEET_LIMITS_INIT;
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int r;

	if (opts)
		l = opts->limits;
	sbx_sheet__limits_fill(&l);
	r = sbx_file_read_capped(AT_FDCWD, path, (size_t)l.max_file_size, &data, &len, err);
	if (r < 0)
		return r;
	return sbx_book_open_memory(data, len, path, opts, out, err);
}

static sbx_sheet_format save_format(const sbx_book *b, const char *path, sbx_sheet_format fmt)
{
	if (fmt != SBX_FORMAT_AUTO)
		return fmt;
	if (b->format != SBX_FORMAT_AUTO)
		return b->format;
	fmt = format_from_name(path);
	return fmt != SBX_FORMAT_AUTO ? fmt : SBX_FORMAT_ODS;
}

int sbx_book_save_memory(sbx_book *b, sbx_sheet_format fmt, sbx_buf *out, sbx_error *err)
{
	sbx_buf_reset(out);
	switch (save_format(b, NULL, fmt)) {
	case SBX_FORMAT_XLSX:
		return sbx_sheet__write_xlsx(b, out, err);
	case SBX_FORMAT_CSV:
		if (b->nsheets == 0)
			return 0;
		return sbx_sheet_write_csv(b->sheets[0], ',', out, err);
	default:
		return sbx_sheet__write_ods(b, out, err);
	}
}

int sbx_book_save(sbx_book *b, const char *path, sbx_sheet_format fmt, sbx_error *err)
{
	sbx_buf out = SBX_BUF_INIT(SHEET_OUT_MAX);
	int r;

	r = sbx_book_save_memory(b, save_format(b, path, fmt), &out, err);
	if (r < 0) {
		sbx_buf_free(&out);
		return sbx_error_prefix(err, r, "'%s'", path);
	}
	r = sbx_path_write_atomic(path, out.data ? out.data : "", out.len, err);
	sbx_buf_free(&out);
	return r;
}

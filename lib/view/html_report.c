/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "sbx/base64.h"
#include "sbx/cleanup.h"
#include "sbx/path.h"
#include "view-internal.h"

int sbx_view__image(const sbx_view_ctx *ctx, size_t root, const char *rel, const char *alt,
		    sbx_buf *out)
{
	_cleanup_free_ char *data = NULL;
	size_t len;
	int r;

	if (!ctx->report) {
		r = sbx_buf_puts(out, "<img class=\"shot\" alt=\"");
		r = r < 0 ? r : sbx_html_escape(out, alt);
		r = r < 0 ? r : sbx_buf_puts(out, "\" src=\"");
		r = r < 0 ? r : sbx_view__href(ctx, out, 'f', root, rel);
		return r < 0 ? r : sbx_buf_puts(out, "\">");
	}
	/* A report stands alone: the image goes in as a data URI, if it is not too big. */
	if (sbx_view_read(ctx->rootfds[root], rel, ctx->image_max, &data, &len, NULL) < 0 ||
	    len < 8 || memcmp(data, "\x89PNG\r\n\x1a\n", 8) != 0 ||
	    (ctx->image_budget && len > *ctx->image_budget))
		return sbx_buf_printf(out,
				      "<p class=\"dim\">(image left out: not a PNG, over %zu "
				      "bytes, or past the report's %u MiB of images)</p>",
				      ctx->image_max, SBX_VIEW_REPORT_IMAGES_MAX >> 20);
	if (ctx->image_budget)
		*ctx->image_budget -= len;
	r = sbx_buf_puts(out, "<img class=\"shot\" alt=\"");
	r = r < 0 ? r : sbx_html_escape(out, alt);
	r = r < 0 ? r : sbx_buf_puts(out, "\" src=\"data:image/png;base64,");
	r = r < 0 ? r : sbx_base64_encode_buf(out, data, len);
	return r < 0 ? r : sbx_buf_puts(out, "\">");
}

static int append_runs(const sbx_view_ctx *ctx, sbx_buf *out, sbx_error *err)
{
	sbx_sweep_plan *plan = NULL;
	sbx_sweep_record *recs = NULL;
	size_t n = 0, shown = 0;
	int r;

	r = sbx_view__sweep_load(ctx->rootfds[0], "", &plan, &recs, &n, err);
	if (r < 0)
		return r;
	for (size_t i = 0; r >= 0 && i < n && shown < SBX_VIEW_REPORT_RUNS_MAX; i++) {
		_cleanup_free_ char *rel = NULL;

		if (!recs[i].run_id || strchr(recs[i].run_id, '/'))
			continue;
		if (asprintf(&rel, "runs/%s", recs[i].run_id) < 0) {
			r = -ENOMEM;
			break;
		}
		if (!sbx_view__exists(ctx->rootfds[0], rel))
			continue;
		r = sbx_buf_puts(out, "<hr>");
		r = r < 0 ? r : sbx_view_page_run(ctx, 0, rel, out, err);
		shown++;
	}
	if (r >= 0 && shown >= SBX_VIEW_REPORT_RUNS_MAX)
		r = sbx_buf_printf(out,
				   "<p class=\"dim\">only the first %d episodes' pages are "
				   "included</p>",
				   SBX_VIEW_REPORT_RUNS_MAX);
	sbx_view__records_free(recs, n);
	sbx_sweep_plan_free(plan);
	return r;
}

int sbx_view_report(const char *dir, const char *out_path, sbx_error *err)
{
	_cleanup_(sbx_buf_free) sbx_buf page = SBX_BUF_INIT(SBX_VIEW_PAGE_MAX);
	_cleanup_close_ int rootfd = -1;
	size_t image_budget = SBX_VIEW_REPORT_IMAGES_MAX;
	unsigned char raw[16];
	char nonce[33];
	sbx_view_entry e;
	sbx_view_ctx ctx = {
		.rootfds = &rootfd,
		.root_names = &dir,
		.n_roots = 1,
		.report = true,
		.image_max = SBX_VIEW_IMAGE_MAX,
		.image_budget = &image_budget,
		.prefix = "",
		.nonce = nonce,
	};
	int r;

	rootfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return sbx_error_set(err, -errno, "'%s': cannot open: %s", dir, strerror(errno));
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return sbx_error_set(err, -errno, "getrandom: %s", strerror(errno));
	for (size_t i = 0; i < sizeof(raw); i++)
		sprintf(nonce + 2 * i, "%02x", raw[i]);
	r = sbx_view_entry_load(rootfd, 0, "", &e, err);
	if (r < 0)
		return sbx_error_set(err, r,
				     "'%s': neither a run (result.json) nor a sweep "
				     "(sweep.json)",
				     dir);
	r = sbx_view__page_begin(&ctx, &page, e.id, NULL);
	if (r >= 0 && e.kind == SBX_VIEW_SWEEP) {
		r = sbx_view_page_sweep(&ctx, 0, "", &page, err);
		r = r < 0 ? r : append_runs(&ctx, &page, err);
	} else if (r >= 0)
		r = sbx_view_page_run(&ctx, 0, "", &page, err);
	r = r < 0 ? r : sbx_view__page_end(&ctx, &page);
	sbx_view_entry_clear(&e);
	if (r < 0)
		return sbx_error_set(err, r, "'%s': the report: %s", dir, strerror(-r));
	return sbx_path_write_atomic(out_path, page.data, page.len, err);
}

/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "view-internal.h"

double sbx_view__clamp(double v, double lo, double hi)
{
	if (!(v >= lo)) /* NaN too */
		return lo;
	return v > hi ? hi : v;
}

char *sbx_view__join(const char *dir, const char *file)
{
	char *s;

	if (!dir || !*dir)
		return strdup(file);
	if (asprintf(&s, "%s/%s", dir, file) < 0)
		return NULL;
	return s;
}

int sbx_view__open_in(int rootfd, const char *dir, const char *file, int flags)
{
	_cleanup_free_ char *rel = sbx_view__join(dir, file);

	return rel ? sbx_view_open(rootfd, rel, flags, NULL) : -ENOMEM;
}

bool sbx_view__exists(int rootfd, const char *rel)
{
	_cleanup_close_ int fd = sbx_view_open(rootfd, rel, O_PATH, NULL);

	return fd >= 0;
}

cJSON *sbx_view__load_json(int rootfd, const char *dir, const char *file, size_t max,
			   sbx_error *err)
{
	_cleanup_free_ char *rel = sbx_view__join(dir, file), *text = NULL;
	cJSON *j = NULL;
	size_t len;

	if (!rel || sbx_view_read(rootfd, rel, max, &text, &len, err) < 0)
		return NULL;
	if (sbx_json_parse(text, len, &j, err) < 0)
		return NULL;
	return j;
}

int sbx_view__load_records(int rootfd, const char *dir, sbx_sweep_record **out, size_t *n_out,
			   sbx_error *err)
{
	_cleanup_free_ char *rel = sbx_view__join(dir, "results.jsonl"), *text = NULL;
	sbx_sweep_record *v = NULL;
	size_t n = 0, cap = 0, len = 0;
	int r;

	if (!rel)
		return -ENOMEM;
	r = sbx_view_read(rootfd, rel, SBX_VIEW_JSONL_MAX, &text, &len, err);
	if (r == -ENOENT) {
		*out = NULL;
		*n_out = 0;
		return 0;
	}
	if (r < 0)
		return r;
	for (char *p = text, *nl; p < text + len; p = nl + 1) {
		sbx_sweep_record rec = {0};

		nl = memchr(p, '\n', (size_t)(text + len - p));
		if (!nl)
			break; /* a torn last line: the sweep is still writing it */
		if (nl == p || sbx_sweep_record_parse(p, (size_t)(nl - p), &rec, NULL) < 0)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			sbx_sweep_record *nv = realloc(v, ncap * sizeof(*v));
			if (!nv) {
				sbx_sweep_record_clear(&rec);
				for (size_t i = 0; i < n; i++)
					sbx_sweep_record_clear(&v[i]);
				free(v);
				return sbx_error_set(err, -ENOMEM, "out of memory");
			}
			v = nv;
			cap = ncap;
		}
		v[n++] = rec;
	}
	*out = v;
	*n_out = n;
	return 0;
}

void sbx_view__tally_results(int rootfd, const char *dir, sbx_view_tally *t)
{
	sbx_sweep_record *recs = NULL;
	size_t n = 0, max_ep = 0;
	_cleanup_free_ bool *seen = NULL;

	if (sbx_view__load_records(rootfd, dir, &recs, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (recs[i].episode > max_ep)
			max_ep = recs[i].episode;
	seen = n ? calloc(max_ep + 1, sizeof(*seen)) : NULL;
	for (size_t i = 0; seen && i < n; i++) {
		if (!sbx_sweep_record_done(&recs[i]) || seen[recs[i].episode])
			continue;
		seen[recs[i].episode] = true;
		t->done++;
		t->passed += recs[i].status == SBX_RUN_PASS;
		t->total_ms += recs[i].total_ms;
	}
	for (size_t i = 0; i < n; i++)
		sbx_sweep_record_clear(&recs[i]);
	free(recs);
}

int sbx_view__href(const sbx_view_ctx *ctx, sbx_buf *out, char kind, size_t root, const char *rel)
{
	_cleanup_(sbx_buf_free) sbx_buf url = SBX_BUF_INIT(16384);
	int r;

	if (ctx->report) {
		/* One file: pages are anchors in it. */
		r = sbx_buf_printf(&url, "#%c-%zu-", kind, root);
		r = r < 0 ? r : sbx_url_escape(&url, rel);
	} else {
		r = sbx_buf_printf(&url, "%s%c/%zu/", ctx->prefix, kind, root);
		r = r < 0 ? r : sbx_url_escape(&url, rel);
	}
	return r < 0 ? r : sbx_html_escape(out, sbx_buf_str(&url));
}

int sbx_view__put_ms(sbx_buf *out, double ms)
{
	if (isnan(ms))
		return sbx_buf_puts(out, "—");
	if (ms < 1000)
		return sbx_buf_printf(out, "%.0f ms", ms);
	if (ms < 120000)
		return sbx_buf_printf(out, "%.2f s", ms / 1000);
	return sbx_buf_printf(out, "%.1f min", ms / 60000);
}

int sbx_view__put_escaped(sbx_buf *out, const char *before, const char *text)
{
	int r = sbx_buf_puts(out, before);

	return r < 0 ? r : sbx_html_escape(out, text);
}

int sbx_view__put_status(sbx_buf *out, const char *status)
{
	char cls[24];
	size_t i = 0;
	int r;

	/* The class comes from the status but only its safe letters: it is agent-adjacent data. */
	for (const char *p = status; *p && i < sizeof(cls) - 1; p++)
		if ((*p >= 'a' && *p <= 'z') || *p == '_')
			cls[i++] = *p;
	cls[i] = 0;
	r = sbx_buf_printf(out, "<span class=\"st st-%s\">", cls);
	r = r < 0 ? r : sbx_html_escape(out, status);
	return r < 0 ? r : sbx_buf_puts(out, "</span>");
}

int sbx_view__page_begin(const sbx_view_ctx *ctx, sbx_buf *out, const char *title,
			 const char *live_path)
{
	int r;

	r = sbx_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			      "<meta name=\"viewport\" content=\"width=device-width\">");
	/* A report must not reach the network, whatever it holds. */
	if (r >= 0 && ctx->report)
		r = sbx_buf_printf(out,
				   "<meta http-equiv=\"Content-Security-Policy\" content=\"%s\">",
				   sbx_view__csp(ctx, false));
	r = r < 0 ? r : sbx_buf_puts(out, "<title>");
	r = r < 0 ? r : sbx_html_escape(out, title);
	r = r < 0 ? r
		  : sbx_buf_printf(out, " · sandboxctl</title><style>%s</style></head>",
				   sbx_view__css);
	r = r < 0 ? r : sbx_buf_puts(out, "<body");
	if (r >= 0 && live_path && *live_path && !ctx->report) {
		_cleanup_(sbx_buf_free) sbx_buf url = SBX_BUF_INIT(16384);

		r = sbx_buf_puts(&url, ctx->prefix);
		r = r < 0 ? r : sbx_url_escape(&url, live_path);
		r = r < 0 ? r : sbx_buf_puts(out, " data-live=\"");
		r = r < 0 ? r : sbx_html_escape(out, sbx_buf_str(&url));
		r = r < 0 ? r : sbx_buf_puts(out, "\"");
	}
	r = r < 0 ? r : sbx_buf_puts(out, "><header id=\"top\"><a class=\"home\" href=\"");
	r = r < 0 ? r : sbx_html_escape(out, ctx->report ? "#top" : ctx->prefix);
	r = r < 0 ? r : sbx_buf_puts(out, "\">sandboxctl view</a>");
	if (r >= 0 && live_path && *live_path && !ctx->report)
		r = sbx_buf_puts(out, " <span id=\"live\" class=\"live\">live</span>");
	return r < 0 ? r : sbx_buf_puts(out, "</header><main id=\"main\">");
}

int sbx_view__entry_begin(const sbx_view_ctx *ctx, sbx_buf *out, const sbx_view_entry *e,
			  size_t root, const char *rel)
{
	_cleanup_free_ char *live = NULL;
	bool sweep = e->kind == SBX_VIEW_SWEEP;
	int r;

	if (e->live && asprintf(&live, "e/%zu/%s", root, rel) < 0)
		live = NULL;
	r = ctx->report ? 0 : sbx_view__page_begin(ctx, out, e->id, live);
	r = r < 0 ? r
		  : sbx_buf_printf(out, "<section class=\"%s\" id=\"%c-%zu-",
				   sweep ? "sweep" : "run", sweep ? 's' : 'r', root);
	return r < 0 ? r : sbx_url_escape(out, rel);
}

int sbx_view__page_end(const sbx_view_ctx *ctx, sbx_buf *out)
{
	return sbx_buf_printf(out, "</main><script nonce=\"%s\">%s</script></body></html>\n",
			      ctx->nonce, sbx_view__js);
}

const char *sbx_view__csp(const sbx_view_ctx *ctx, bool served)
{
	/*
	 * Defence in depth behind the escaping: only our script (it carries the nonce)
	 * runs, and nothing but this server (a report: nothing at all) is reached.
	 */
	static _Thread_local char csp[256];

	snprintf(csp, sizeof(csp),
		 "default-src 'none'; img-src %s data:; style-src 'unsafe-inline'; "
		 "script-src 'nonce-%s'; connect-src %s; base-uri 'none'; form-action %s",
		 served ? "'self'" : "", ctx->nonce, served ? "'self'" : "'none'",
		 served ? "'self'" : "'none'");
	return csp;
}

/* SPDX-License-Identifier: MIT */
/*
 * The filmstrip of a GUI run: runs/<id>/frames/<n>-<unix ms>.png (`run
 * --record`), each frame captioned with the tool calls the agent made since
 * the frame before, matched by the transcript's wall-clock "ts".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "view-internal.h"

#define FRAMES_MAX	  600
#define REPORT_FRAMES_MAX 24 /* a report inlines at most this many, evenly spaced */
#define CAPTION_CALLS_MAX 12

typedef struct frame {
	char name[64];
	long long ms;
} frame;

typedef struct call {
	long long ms;
	char name[64];
	bool error;
} call;

static int by_name(const void *a, const void *b)
{
	return strcmp(((const frame *)a)->name, ((const frame *)b)->name);
}

/* "2026-12-03T06:13:51.214Z" → unix ms; -1 when it is not that. */
static long long iso_ms(const char *s)
{
	struct tm tm = {0};
	int ms = 0, n = 0;

	if (!s || sscanf(s, "%d-%d-%dT%d:%d:%d.%3d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
			 &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &n) < 6)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (long long)timegm(&tm) * 1000 + ms;
}

static size_t list_frames(int rootfd, const char *rel, frame *out)
{
	_cleanup_free_ char *dir = sbx_view__join(rel, "frames");
	int dfd = dir ? sbx_view_open(rootfd, dir, O_RDONLY | O_DIRECTORY, NULL) : -1;
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	while ((de = readdir(d)) && n < FRAMES_MAX) {
		unsigned idx;
		long long ms;
		int end = 0;

		if (de->d_type != DT_REG || strlen(de->d_name) >= sizeof(out->name) ||
		    sscanf(de->d_name, "%u-%lld.png%n", &idx, &ms, &end) != 2 ||
		    de->d_name[end] != 0 || ms < 0 || ms > 253402300799000LL)
			continue;
		snprintf(out[n].name, sizeof(out[n].name), "%s", de->d_name);
		out[n++].ms = ms;
	}
	closedir(d);
	qsort(out, n, sizeof(*out), by_name);
	return n;
}

/* The agent's tool calls with their wall-clock times, from transcript.jsonl. */
static size_t list_calls(int rootfd, const char *rel, call **out)
{
	_cleanup_free_ char *path = sbx_view__join(rel, "transcript.jsonl"), *text = NULL;
	call *v = NULL;
	size_t len = 0, n = 0, cap = 0;

	if (!path || sbx_view_read(rootfd, path, SBX_VIEW_JSONL_MAX, &text, &len, NULL) < 0)
		return 0;
	for (char *p = text, *nl; p < text + len; p = nl + 1) {
		_cleanup_json_ cJSON *line = NULL;
		const cJSON *msg;
		const char *name = NULL;

		nl = memchr(p, '\n', (size_t)(text + len - p));
		if (!nl)
			break;
		if (sbx_json_parse(p, (size_t)(nl - p), &line, NULL) < 0 ||
		    strcmp(sbx_json_get_string(line, "dir", ""), "agent->server") != 0)
			continue;
		msg = sbx_json_get(line, "message");
		name = sbx_json_get_string(msg, "tool_name", NULL);
		if (!name && strcmp(sbx_json_get_string(msg, "method", ""), "tools/call") == 0)
			name = sbx_json_get_string(sbx_json_get(msg, "params"), "name", NULL);
		if (!name)
			continue;
		if (!v || n == cap) { /* !v: the first call (n == cap == 0) */
			call *nv = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[n].ms = iso_ms(sbx_json_get_string(line, "ts", NULL));
		snprintf(v[n].name, sizeof(v[n].name), "%s", name);
		n++;
	}
	*out = v;
	return n;
}

int sbx_view__filmstrip(const sbx_view_ctx *ctx, size_t root, const char *rel, sbx_buf *out)
{
	_cleanup_free_ frame *frames = calloc(FRAMES_MAX, sizeof(*frames));
	_cleanup_free_ call *calls = NULL;
	size_t n, n_calls, c = 0, step = 1;
	int r;

	if (!frames)
		return -ENOMEM;
	n = list_frames(ctx->rootfds[root], rel, frames);
	if (!n)
		return 0;
	n_calls = list_calls(ctx->rootfds[root], rel, &calls);
	if (ctx->report && n > REPORT_FRAMES_MAX)
		step = (n + REPORT_FRAMES_MAX - 1) / REPORT_FRAMES_MAX;
	r = sbx_buf_printf(out,
			   "<h2>Filmstrip</h2><p class=\"dim\">%zu frames%s</p>"
			   "<div class=\"film\" id=\"filmstrip\">",
			   n, step > 1 ? " (every few shown)" : "");
	for (size_t i = 0; r >= 0 && i < n; i++) {
		_cleanup_free_ char *path = NULL;
		unsigned shown = 0;

		/* The calls made up to this frame go in its caption, shown or not. */
		if (asprintf(&path, "%s%sframes/%s", rel, *rel ? "/" : "", frames[i].name) < 0)
			return -ENOMEM;
		if (i % step != 0 && i != n - 1)
			continue;
		r = sbx_buf_printf(out, "<figure data-ms=\"%lld\">", frames[i].ms);
		r = r < 0 ? r : sbx_view__image(ctx, root, path, frames[i].name, out);
		r = r < 0 ? r
			  : sbx_buf_printf(out, "<figcaption><b>+%.1f s</b>",
					   (double)(frames[i].ms - frames[0].ms) / 1000);
		for (; r >= 0 && c < n_calls && calls[c].ms <= frames[i].ms; c++) {
			if (shown++ >= CAPTION_CALLS_MAX)
				continue;
			r = sbx_buf_puts(out, " ");
			r = r < 0 ? r : sbx_html_escape(out, calls[c].name);
		}
		if (r >= 0 && shown > CAPTION_CALLS_MAX)
			r = sbx_buf_printf(out, " … %u more", shown - CAPTION_CALLS_MAX);
		r = r < 0 ? r : sbx_buf_puts(out, "</figcaption></figure>");
	}
	return r < 0 ? r : sbx_buf_puts(out, "</div>");
}

/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "llm.h"
#include "llm_reply.h"

static double monotonic_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Retry-After is delay-seconds or an HTTP date (RFC 9110 10.2.3); a date in the past is 0. */
static long retry_after_seconds(const char *v, size_t len)
{
	char text[128], *end;
	long secs;
	time_t when;

	while (len > 0 && (*v == ' ' || *v == '\t'))
		v++, len--;
	while (len > 0 && (v[len - 1] == '\r' || v[len - 1] == '\n' || v[len - 1] == ' '))
		len--;
	if (len == 0 || len >= sizeof(text))
		return -1;
	memcpy(text, v, len);
	text[len] = '\0';
	errno = 0;
	secs = strtol(text, &end, 10);
	if (end != text && !*end)
		return errno || secs < 0 ? -1 : secs;
	when = curl_getdate(text, NULL);
	if (when == -1)
		return -1;
	return when > time(NULL) ? (long)(when - time(NULL)) : 0;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	llm_body *b = ud;
	size_t len = size * n;
	char line[256]; /* a header line is not NUL-terminated: the ones read here, copied */

	/* Every header line of every response (1xx ones too), whatever libcurl's own cap. */
	b->header_bytes += len;
	if (b->header_bytes > LLM_HEADERS_MAX) {
		b->refused = LLM_REFUSED_HEADERS;
		return 0;
	}
	snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) ? len : sizeof(line) - 1), p);
	if (strncasecmp(line, "Retry-After:", 12) == 0)
		b->retry_after = retry_after_seconds(p + 12, len - 12);
	if (strncasecmp(line, "Content-Length:", 15) == 0)
		b->length = strtoll(line + 15, NULL, 10);
	if (strncasecmp(line, "Content-Type:", 13) == 0 && strcasestr(line, "text/event-stream"))
		b->refused = LLM_REFUSED_STREAM; /* never asked for (no "stream": true) */
	else if (b->length > LLM_REPLY_MAX)
		b->refused = LLM_REFUSED_SIZE;
	return b->refused ? 0 : len; /* 0 ends the transfer */
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	llm_body *b = ud;
	size_t len = size * n;

	/* White space before the JSON is a keep-alive some proxies send while the model works. */
	for (size_t i = 0; i < len && !b->json_began; i++)
		if (!strchr(" \t\r\n", p[i]))
			b->json_began = monotonic_s();
	b->received += len;
	if (b->b.len + len > LLM_REPLY_MAX) {
		b->refused = LLM_REFUSED_SIZE;
		return 0;
	}
	return agent_body_write(p, size, n, ud);
}

/* Called about once a second while a transfer is idle, too. */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	llm_body *b = ud;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	if (b->json_began && monotonic_s() - b->json_began > LLM_REPLY_SECONDS) {
		b->refused = LLM_REFUSED_SLOW;
		return 1;
	}
	return 0;
}

void llm_body_init(llm_body *b, CURL *curl)
{
	*b = (llm_body){.b.max = LLM_REPLY_MAX, .retry_after = -1, .length = -1};
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, b);
	curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(curl, CURLOPT_XFERINFODATA, b);
}

void llm_body_refusal(const llm_body *b, const char *url, char *why, size_t why_len)
{
	switch (b->refused) {
	case LLM_REFUSED_SIZE:
		if (b->length > LLM_REPLY_MAX)
			snprintf(why, why_len,
				 "%s sent a reply of %lld bytes: over the %ld MiB a reply may have",
				 url, b->length, LLM_REPLY_MAX >> 20);
		else
			snprintf(why, why_len,
				 "%s sent a reply still coming after %zu bytes: over the %ld MiB a "
				 "reply may have",
				 url, b->received, LLM_REPLY_MAX >> 20);
		break;
	case LLM_REFUSED_STREAM:
		snprintf(why, why_len,
			 "%s answered with an event stream (text/event-stream), which the agent "
			 "does not ask for",
			 url);
		break;
	case LLM_REFUSED_SLOW:
		snprintf(why, why_len,
			 "%s sent a reply that had not ended %d s after it began (%zu bytes): an "
			 "endless or stalled body",
			 url, LLM_REPLY_SECONDS, b->received);
		break;
	case LLM_REFUSED_HEADERS:
		snprintf(why, why_len, "%s sent over %d KiB of response headers", url,
			 LLM_HEADERS_MAX >> 10);
		break;
	case LLM_REFUSED_NONE:
		break;
	}
}

cJSON *llm_body_parse(const llm_body *b, const char *url, char *why, size_t why_len)
{
	size_t values = llm_json_values(b->b.data ? b->b.data : "", b->b.len);
	cJSON *reply;

	if (values > LLM_REPLY_VALUES) {
		snprintf(why, why_len,
			 "%s sent a reply of about %zu JSON values: over the %d a reply may have",
			 url, values, LLM_REPLY_VALUES);
		return NULL;
	}
	/*
	 * A raw control byte in a string (which cJSON accepts) prints as \u00XX:
	 * six bytes for one, in model.jsonl, the conversation and every request
	 * after. The reply's printed size, not its received one, is what the
	 * limit bounds.
	 */
	{
		size_t controls = 0, printed;

		for (size_t i = 0; b->b.data && i < b->b.len; i++)
			controls += (unsigned char)b->b.data[i] < 0x20;
		printed = b->b.len + 5 * controls;
		if (printed > LLM_REPLY_MAX) {
			snprintf(why, why_len,
				 "%s sent a reply whose %zu control characters would print as %zu "
				 "bytes: over the %ld MiB a reply may have",
				 url, controls, printed, LLM_REPLY_MAX >> 20);
			return NULL;
		}
	}
	reply = cJSON_ParseWithLength(b->b.data ? b->b.data : "", b->b.len);
	if (!reply)
		snprintf(why, why_len, "%s answered 200 with a body that is not JSON", url);
	return reply;
}

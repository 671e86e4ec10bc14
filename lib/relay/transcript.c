/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sbx/clock.h"
#include "sbx/json.h"
#include "transcript.h"

struct sbx_transcript {
	pthread_mutex_t lock;
	FILE *f;
	double t0_ms; /* sbx_now_msf() at open: t_ms counts from here */
	unsigned long count;
	long long bytes;
	bool full;
	int error;
};

int sbx_transcript_open(sbx_transcript **out, const char *path, sbx_error *err)
{
	sbx_transcript *t = calloc(1, sizeof(*t));

	if (!t)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	t->f = fopen(path, "ae");
	if (!t->f) {
		int r = -errno;
		free(t);
		return sbx_error_set(err, r, "transcript '%s': %s", path, strerror(-r));
	}
	pthread_mutex_init(&t->lock, NULL);
	t->t0_ms = sbx_now_msf();
	*out = t;
	return 0;
}

/* The revision a message names: the 2026-07-28 envelope, or initialize's protocolVersion. */
static const char *message_version(const cJSON *msg)
{
	const cJSON *params = sbx_json_get(msg, "params");
	const char *v = sbx_json_get_string(sbx_json_get(params, "_meta"),
					    "io.modelcontextprotocol/protocolVersion", NULL);

	if (!v && strcmp(sbx_json_get_string(msg, "method", ""), "initialize") == 0)
		v = sbx_json_get_string(params, "protocolVersion", NULL);
	if (!v)
		v = sbx_json_get_string(sbx_json_get(msg, "result"), "protocolVersion", NULL);
	return v;
}

static void add_body(cJSON *o, const char *body, size_t len, const char *version)
{
	cJSON *msg = NULL;

	if (len <= SBX_TRANSCRIPT_BODY_MAX && sbx_json_parse(body, len, &msg, NULL) == 0) {
		const char *v = message_version(msg);

		v = v ? v : version;
		/* The agent writes it: a short label or nothing. */
		if (v && strlen(v) <= 32)
			sbx_json_add_string(o, "mcp_version", v);
		cJSON_AddItemToObject(o, "message", msg);
		return;
	}
	if (len > SBX_TRANSCRIPT_BODY_MAX) {
		cJSON_AddBoolToObject(o, "truncated", 1);
		cJSON_AddNumberToObject(o, "length", (double)len);
		len = SBX_TRANSCRIPT_BODY_MAX;
	}
	{
		char *text = strndup(body, len);
		if (text) {
			cJSON_AddStringToObject(o, "body", text);
			free(text);
		}
	}
}

void sbx_transcript_record(sbx_transcript *t, unsigned conn, const char *dir, const char *method,
			   const char *path, int status, const char *body, size_t len)
{
	sbx_transcript_record_mcp(t, conn, dir, method, path, status, NULL, body, len);
}

void sbx_transcript_record_mcp(sbx_transcript *t, unsigned conn, const char *dir,
			       const char *method, const char *path, int status,
			       const char *version, const char *body, size_t len)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();
	_cleanup_free_ char *line = NULL;
	struct timespec now;
	struct tm tm;
	char ts[64];
	double t_ms;

	if (!t || !o)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 now.tv_nsec / 1000000);
	t_ms = sbx_now_msf() - t->t0_ms;
	sbx_json_add_string(o, "ts", ts);
	sbx_json_add_number(o, "t_ms", (double)(long long)(t_ms * 1000) / 1000.0);
	sbx_json_add_number(o, "conn", conn);
	sbx_json_add_string(o, "dir", dir);
	if (method)
		sbx_json_add_string(o, "method", method);
	if (path)
		sbx_json_add_string(o, "path", path);
	if (status)
		sbx_json_add_number(o, "status", status);
	if (body && len)
		add_body(o, body, len, version);
	line = sbx_json_print(o);
	if (!line)
		return;
	pthread_mutex_lock(&t->lock);
	if (t->full) {
		/* Capped: an agent cannot fill the disk through the transcript. */
	} else if (t->bytes + (long long)strlen(line) + 1 > SBX_TRANSCRIPT_FILE_MAX) {
		t->full = true;
		fprintf(t->f, "{\"ts\":\"%s\",\"truncated\":true}\n", ts);
		fflush(t->f);
	} else if (fprintf(t->f, "%s\n", line) < 0 || fflush(t->f) != 0) {
		if (!t->error)
			t->error = -errno ? -errno : -EIO;
	} else {
		t->count++;
		t->bytes += (long long)strlen(line) + 1;
	}
	pthread_mutex_unlock(&t->lock);
}

unsigned long sbx_transcript_count(sbx_transcript *t)
{
	unsigned long n;

	if (!t)
		return 0;
	pthread_mutex_lock(&t->lock);
	n = t->count;
	pthread_mutex_unlock(&t->lock);
	return n;
}

int sbx_transcript_close(sbx_transcript *t)
{
	int r;

	if (!t)
		return 0;
	r = t->error;
	if (fclose(t->f) != 0 && !r)
		r = -errno;
	pthread_mutex_destroy(&t->lock);
	free(t);
	return r;
}

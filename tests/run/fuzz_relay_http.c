/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the relay's HTTP/1.1 framing (lib/relay/http_framing.c, on
 * libhttp-parser): what an agent sends and what comes back from the sandbox
 * are both outside input. Reads heads and bodies (Content-Length, chunked,
 * until EOF) in request mode, response mode and as the response to a HEAD
 * request, from an in-memory stream, and writes each head back out.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_framing.h"

typedef struct mem_stream {
	sbx_stream base;
	const uint8_t *p;
	size_t len, off;
} mem_stream;

static ssize_t m_read(sbx_stream *s, void *buf, size_t n, int timeout_ms)
{
	mem_stream *m = (mem_stream *)s;
	size_t left = m->len - m->off;

	(void)timeout_ms;
	if (n > left)
		n = left;
	if (n > 7)
		n = 7 + (m->off % 61); /* uneven reads, like a network */
	if (n > left)
		n = left;
	memcpy(buf, m->p + m->off, n);
	m->off += n;
	return (ssize_t)n;
}

static int m_write(sbx_stream *s, const void *buf, size_t n)
{
	(void)s;
	(void)buf;
	(void)n;
	return 0;
}

static bool m_stale(sbx_stream *s)
{
	(void)s;
	return false;
}

static void m_close(sbx_stream *s)
{
	(void)s;
}

static const sbx_stream_ops ops = {m_read, m_write, m_stale, m_close};

static int sink(const char *d, size_t n, void *ud)
{
	size_t *total = ud;

	(void)d;
	*total += n;
	return *total > (1u << 24) ? -EFBIG : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int mode = 0; mode < 3; mode++) {
		mem_stream m = {{&ops}, data, size, 0};
		bool request = mode == 0;
		http_reader r;

		http_reader_init(&r, &m.base, 0);
		r.method = mode == 2 ? "HEAD" : "GET";
		for (int i = 0; i < 8; i++) {
			sbx_error err = SBX_ERROR_INIT;
			http_head h;
			size_t total = 0;
			int k = http_read_head(&r, &h, request, &err);

			if (k == 0) {
				(void)http_head_get(&h, "Content-Type");
				k = http_write_head(&m.base, &h, !h.close);
				if (k == 0 &&
				    (request || !http_response_bodyless(r.method, h.status)))
					k = http_relay_body(&r, &h, !request, &m.base, sink, &total,
							    &err);
			}
			http_head_free(&h);
			if (k < 0)
				break;
		}
	}
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The engine's stdout/stderr framing: [stream 0 0 0 size32be] payload, in any
 * split; and the capped sink that collects a framed answer into two buffers.
 */
#include <errno.h>
#include <string.h>

#include "docker-internal.h"

/* Parses one 8-byte frame header; -EPROTO when it is not one. */
static int parse_header(const unsigned char hdr[8], int *stream, size_t *len)
{
	/* Stream 0 (stdin) is legal on the wire though the engine never sends it. */
	if (hdr[0] > 2 || hdr[1] || hdr[2] || hdr[3])
		return -EPROTO;
	*stream = hdr[0];
	*len = (size_t)hdr[4] << 24 | (size_t)hdr[5] << 16 | (size_t)hdr[6] << 8 | (size_t)hdr[7];
	return 0;
}

void sbx_docker__demux_init(docker_demux *m, bool raw)
{
	memset(m, 0, sizeof(*m));
	m->raw = raw;
	m->stream = SBX_DOCKER_STDOUT;
}

bool sbx_docker__demux_idle(const docker_demux *m)
{
	return m->raw || (m->hdr_len == 0 && m->left == 0);
}

ssize_t sbx_docker__demux_payload(docker_demux *m, const char **p, size_t *n)
{
	if (m->raw)
		return (ssize_t)*n;
	/* An empty frame is legal: keep reading headers until there is payload. */
	while (m->left == 0 && *n > 0) {
		size_t take = sizeof(m->hdr) - m->hdr_len;
		int r;

		if (take > *n)
			take = *n;
		memcpy(m->hdr + m->hdr_len, *p, take);
		m->hdr_len += take;
		*p += take;
		*n -= take;
		if (m->hdr_len < sizeof(m->hdr))
			return 0;
		m->hdr_len = 0;
		r = parse_header(m->hdr, &m->stream, &m->left);
		if (r < 0)
			return r;
	}
	return (ssize_t)(m->left < *n ? m->left : *n);
}

void sbx_docker__demux_consumed(docker_demux *m, size_t k)
{
	if (!m->raw)
		m->left -= k;
}

int sbx_docker__demux_feed(docker_demux *m, const char *p, size_t n, docker_frame_fn fn,
			   void *payload)
{
	while (n > 0) {
		ssize_t k = sbx_docker__demux_payload(m, &p, &n);
		int r;

		if (k <= 0)
			return (int)k;
		r = fn(m->stream, p, (size_t)k, payload);
		if (r < 0)
			return r;
		sbx_docker__demux_consumed(m, (size_t)k);
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int sink_frame(int stream, const char *p, size_t n, void *payload)
{
	docker_sink *s = payload;
	sbx_buf *b = stream == SBX_DOCKER_STDERR ? s->errout : s->out;

	if (n > s->max - s->total)
		return -ENOBUFS;
	s->total += n;
	return b ? sbx_buf_append(b, p, n) : 0;
}

int sbx_docker__sink_data(const char *p, size_t n, void *payload)
{
	docker_sink *s = payload;

	return sbx_docker__demux_feed(&s->demux, p, n, sink_frame, s);
}

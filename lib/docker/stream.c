/* SPDX-License-Identifier: MIT */
/*
 * Hijacked exec/attach streams. curl opens the connection on unix sockets
 * and plain tcp (CONNECT_ONLY); TLS streams use OpenSSL directly (tls.c) so
 * they can half-close. We speak the upgrade request ourselves, then the
 * socket carries stdin one way and framed stdout/stderr the other.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "docker-internal.h"
#include "sbx/clock.h"
#include "sbx/file.h"

#define RBUF_SIZE	 65536
#define MAX_HEADER_BYTES 16384

struct sbx_docker_stream {
	CURL *c;	 /* unix:// and plain tcp:// */
	docker_tls *tls; /* tcp:// with TLS */
	int fd;
	bool eof;
	bool write_closed;
	unsigned char rbuf[RBUF_SIZE];
	size_t rpos, rlen;
	docker_demux demux;
	char errbuf[CURL_ERROR_SIZE];
};

/* Nonblocking send/recv: bytes, -EAGAIN, 0 at EOF (recv), or a negative errno. */
static ssize_t io_send(sbx_docker_stream *s, const void *p, size_t n)
{
	if (s->tls)
		return sbx_docker__tls_send(s->tls, p, n);
	for (;;) {
		ssize_t w = send(s->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w >= 0)
			return w;
		if (errno == EINTR)
			continue;
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	}
}

static ssize_t io_recv(sbx_docker_stream *s, void *p, size_t n)
{
	if (s->tls)
		return sbx_docker__tls_recv(s->tls, p, n);
	for (;;) {
		ssize_t r = recv(s->fd, p, n, MSG_DONTWAIT);
		if (r >= 0)
			return r;
		if (errno == EINTR)
			continue;
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	}
}

static int send_all(sbx_docker_stream *s, const void *p, size_t n, long deadline)
{
	while (n > 0) {
		ssize_t w = io_send(s, p, n);
		if (w == -EAGAIN) {
			int r = sbx_fd_wait(s->fd, s->tls ? sbx_docker__tls_wants(s->tls) : POLLOUT,
					    deadline);
			if (r < 0)
				return r;
			continue;
		}
		if (w < 0)
			return (int)w;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

/* Fills rbuf with at least one more byte: 0, -EAGAIN/-ETIMEDOUT, or EOF (s->eof). */
static int fill(sbx_docker_stream *s, long deadline)
{
	if (s->rpos == s->rlen)
		s->rpos = s->rlen = 0;
	if (s->rlen == sizeof(s->rbuf)) {
		memmove(s->rbuf, s->rbuf + s->rpos, s->rlen - s->rpos);
		s->rlen -= s->rpos;
		s->rpos = 0;
	}
	for (;;) {
		ssize_t n = io_recv(s, s->rbuf + s->rlen, sizeof(s->rbuf) - s->rlen);
		if (n > 0) {
			s->rlen += (size_t)n;
			return 0;
		}
		if (n == 0) {
			s->eof = true;
			return 0;
		}
		if (n != -EAGAIN)
			return (int)n;
		if (deadline == 0)
			return -EAGAIN;
		n = sbx_fd_wait(s->fd, s->tls ? sbx_docker__tls_wants(s->tls) : POLLIN, deadline);
		if (n < 0)
			return (int)n;
	}
}

void sbx_docker_stream_free(sbx_docker_stream *s)
{
	if (!s)
		return;
	curl_easy_cleanup(s->c);
	sbx_docker__tls_free(s->tls);
	free(s);
}

/* Reads the HTTP answer to the upgrade; keeps what follows it in rbuf. */
static int read_upgrade_answer(sbx_docker_stream *s, const char *what, long deadline,
			       sbx_error *err)
{
	char *end = NULL;
	long status;
	int r;

	while (!end) {
		if (s->rlen >= MAX_HEADER_BYTES)
			return sbx_error_set(err, -EPROTO, "%s: oversized HTTP answer", what);
		r = fill(s, deadline);
		if (r == -ETIMEDOUT)
			return sbx_error_set(err, r, "%s: the engine did not answer in time", what);
		if (r < 0)
			return sbx_error_set(err, r, "%s: %s", what, strerror(-r));
		if (s->eof && !memmem(s->rbuf, s->rlen, "\r\n\r\n", 4))
			return sbx_error_set(err, -ECONNRESET,
					     "%s: connection closed by the engine", what);
		end = memmem(s->rbuf, s->rlen, "\r\n\r\n", 4);
	}
	if (s->rlen < 12 || memcmp(s->rbuf, "HTTP/1.", 7) != 0)
		return sbx_error_set(err, -EPROTO, "%s: not an HTTP answer", what);
	status = strtol((char *)s->rbuf + 9, NULL, 10);
	s->rpos = (size_t)(end + 4 - (char *)s->rbuf);
	if (status == 101 || status == 200)
		return 0;
	{
		/* An error: the body (JSON message) follows; take what has arrived. */
		docker_resp resp = {.status = status};
		long body_deadline = sbx_now_ms() + 1000;
		while (!s->eof && s->rlen < sizeof(s->rbuf) && fill(s, body_deadline) == 0 &&
		       !memchr(s->rbuf + s->rpos, '}', s->rlen - s->rpos))
			;
		sbx_buf_init(&resp.body, DOCKER_MAX_ERROR_BODY);
		sbx_buf_append(&resp.body, s->rbuf + s->rpos, s->rlen - s->rpos);
		r = sbx_docker__check(&resp, what, err);
		sbx_buf_free(&resp.body);
		return r < 0 ? r : sbx_error_set(err, -EPROTO, "%s: HTTP %ld", what, status);
	}
}

static int open_stream(sbx_docker *d, const char *path, const char *body, bool tty,
		       const char *what, sbx_docker_stream **out, sbx_error *err)
{
	_cleanup_free_ char *url = NULL, *request = NULL;
	long deadline = sbx_now_ms() + d->connect_timeout_ms + d->request_timeout_ms;
	curl_socket_t sock = CURL_SOCKET_BAD;
	sbx_docker_stream *s;
	CURLcode rc;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	sbx_docker__demux_init(&s->demux, tty);
	if (asprintf(&url, "%s/v%s%s", d->base_url, d->api_version, path) < 0)
		url = NULL;
	if (!url ||
	    asprintf(&request,
		     "POST /v%s%s HTTP/1.1\r\nHost: docker\r\nUser-Agent: sandboxctl\r\n"
		     "Content-Type: application/json\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n"
		     "Content-Length: %zu\r\n\r\n%s",
		     d->api_version, path, strlen(body), body) < 0) {
		request = NULL;
		sbx_docker_stream_free(s);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	if (d->tls) {
		r = sbx_docker__tls_connect(d, sbx_now_ms() + d->connect_timeout_ms, &s->tls, what,
					    err);
		if (r < 0) {
			sbx_docker_stream_free(s);
			return r;
		}
		s->fd = sbx_docker__tls_fd(s->tls);
	} else {
		s->c = curl_easy_init();
		if (!s->c) {
			sbx_docker_stream_free(s);
			return sbx_error_set(err, -ENOMEM, "out of memory");
		}
		d->curl_error[0] = '\0';
		sbx_docker__setup_transport(d, s->c, 0);
		curl_easy_setopt(s->c, CURLOPT_ERRORBUFFER, s->errbuf);
		curl_easy_setopt(s->c, CURLOPT_URL, url);
		curl_easy_setopt(s->c, CURLOPT_CONNECT_ONLY, 1L);
		rc = curl_easy_perform(s->c);
		if (rc == CURLE_OK)
			rc = curl_easy_getinfo(s->c, CURLINFO_ACTIVESOCKET, &sock);
		if (rc != CURLE_OK || sock == CURL_SOCKET_BAD) {
			memcpy(d->curl_error, s->errbuf, sizeof(d->curl_error));
			r = sbx_docker__transport_error(d, s->c,
							rc != CURLE_OK ? rc : CURLE_COULDNT_CONNECT,
							what, d->connect_timeout_ms, err);
			sbx_docker_stream_free(s);
			return r;
		}
		s->fd = (int)sock;
	}
	r = send_all(s, request, strlen(request), deadline);
	if (r < 0)
		r = sbx_error_set(err, r, "%s: sending the request: %s", what, strerror(-r));
	if (r == 0)
		r = read_upgrade_answer(s, what, deadline, err);
	if (r < 0) {
		sbx_docker_stream_free(s);
		return r;
	}
	*out = s;
	return 0;
}

int sbx_docker_stream_open_exec(sbx_docker *d, const char *exec_id, bool tty,
				sbx_docker_stream **out, sbx_error *err)
{
	_cleanup_free_ char *path = NULL, *what = NULL;
	int r = sbx_docker__exec_prepare(exec_id, "start stream", "/start", &what, &path, err);

	if (r < 0)
		return r;
	return open_stream(d, path,
			   tty ? "{\"Detach\":false,\"Tty\":true}"
			       : "{\"Detach\":false,\"Tty\":false}",
			   tty, what, out, err);
}

int sbx_docker_stream_open_attach(sbx_docker *d, const char *container_id, bool tty,
				  sbx_docker_stream **out, sbx_error *err)
{
	_cleanup_free_ char *path = NULL, *what = NULL;
	int r = sbx_docker__check_name("container", container_id, err);

	if (r < 0)
		return r;
	if (asprintf(&path, "/containers/%s/attach?stream=1&stdin=1&stdout=1&stderr=1",
		     container_id) < 0 ||
	    asprintf(&what, "container '%s': attach", container_id) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return open_stream(d, path, "", tty, what, out, err);
}

static long deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : timeout_ms == 0 ? 0 : sbx_now_ms() + timeout_ms;
}

int sbx_docker_stream_write(sbx_docker_stream *s, const void *data, size_t len, int timeout_ms,
			    sbx_error *err)
{
	int r;

	if (s->write_closed)
		return sbx_error_set(err, -EPIPE, "stream: stdin already closed");
	r = send_all(s, data, len, deadline_of(timeout_ms));
	if (r == -ETIMEDOUT || r == -EAGAIN)
		return sbx_error_set(err, -ETIMEDOUT, "stream: write timed out after %d ms",
				     timeout_ms);
	if (r < 0)
		return sbx_error_set(err, r, "stream: write failed: %s", strerror(-r));
	return 0;
}

ssize_t sbx_docker_stream_read(sbx_docker_stream *s, void *buf, size_t cap, int *which,
			       int timeout_ms, sbx_error *err)
{
	long deadline = deadline_of(timeout_ms);
	int r;

	if (cap == 0)
		return sbx_error_set(err, -EINVAL, "stream: read into an empty buffer");
	for (;;) {
		const char *p = (const char *)s->rbuf + s->rpos;
		size_t avail = s->rlen - s->rpos;
		ssize_t k = sbx_docker__demux_payload(&s->demux, &p, &avail);

		s->rpos = (size_t)(p - (const char *)s->rbuf);
		if (k < 0)
			return sbx_error_set(err, -EPROTO, "stream: malformed frame header");
		if (k > 0) {
			size_t n = (size_t)k < cap ? (size_t)k : cap;

			memcpy(buf, p, n);
			s->rpos += n;
			sbx_docker__demux_consumed(&s->demux, n);
			if (which)
				*which = s->demux.stream;
			return (ssize_t)n;
		}
		if (s->eof) {
			if (!sbx_docker__demux_idle(&s->demux))
				return sbx_error_set(err, -EPROTO, "stream: ended inside a frame");
			return 0;
		}
		r = fill(s, deadline);
		if (r == -EAGAIN)
			return -EAGAIN;
		if (r == -ETIMEDOUT)
			return sbx_error_set(err, r, "stream: no output within %d ms", timeout_ms);
		if (r < 0)
			return sbx_error_set(err, r, "stream: read failed: %s", strerror(-r));
	}
}

int sbx_docker_stream_close_write(sbx_docker_stream *s, sbx_error *err)
{
	if (s->write_closed)
		return 0;
	if (s->tls) {
		/* close_notify, as the docker CLI's CloseWrite: the engine reads EOF. */
		int r = sbx_docker__tls_close_write(s->tls, sbx_now_ms() + 5000);
		if (r < 0)
			return sbx_error_set(err, r, "stream: closing stdin: %s", strerror(-r));
		s->write_closed = true;
		return 0;
	}
	if (shutdown(s->fd, SHUT_WR) < 0)
		return sbx_error_set(err, -errno, "stream: closing stdin: %s", strerror(errno));
	s->write_closed = true;
	return 0;
}

int sbx_docker_stream_fd(const sbx_docker_stream *s)
{
	return s->fd;
}

bool sbx_docker_stream_pending(const sbx_docker_stream *s)
{
	return s->rpos < s->rlen || s->eof || (s->tls && sbx_docker__tls_pending(s->tls));
}

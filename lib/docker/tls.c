/* SPDX-License-Identifier: MIT */
/*
 * TLS for hijacked streams to a tcp:// engine. curl carries every ordinary
 * request, but a stream must be able to close its write side alone (EOF on
 * the process's stdin) by sending close_notify while it keeps reading, as
 * the docker CLI does; curl has no call for that, so streams speak OpenSSL
 * themselves, with the same certificates and verification as curl.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "docker-internal.h"
#include "sbx/file.h"

struct docker_tls {
	SSL_CTX *ctx;
	SSL *ssl;
	int fd;
	short wants; /* POLLIN or POLLOUT, set when send or recv returns -EAGAIN */
};

void sbx_docker__tls_free(docker_tls *t)
{
	if (!t)
		return;
	if (t->ssl)
		SSL_free(t->ssl);
	if (t->ctx)
		SSL_CTX_free(t->ctx);
	if (t->fd >= 0)
		close(t->fd);
	free(t);
}

/* "https://HOST:PORT" or "https://[v6]:PORT" -> host (brackets dropped) and port. */
static int split_url(const char *url, char *host, size_t hlen, char *port, size_t plen)
{
	const char *h = strstr(url, "://"), *colon;
	size_t n;

	if (!h)
		return -EINVAL;
	h += 3;
	colon = strrchr(h, ':');
	if (!colon || colon == h)
		return -EINVAL;
	n = (size_t)(colon - h);
	if (h[0] == '[' && n >= 2 && h[n - 1] == ']') {
		h++;
		n -= 2;
	}
	if (n >= hlen || strlen(colon + 1) >= plen)
		return -ENAMETOOLONG;
	memcpy(host, h, n);
	host[n] = '\0';
	strcpy(port, colon + 1);
	return 0;
}

static int tcp_connect(const char *host, const char *port, long deadline, int *fd_out)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res = NULL, *ai;
	int r = -ECONNREFUSED;

	if (getaddrinfo(host, port, &hints, &res) != 0)
		return -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
				ai->ai_protocol);
		int soerr = 0;
		socklen_t sl = sizeof(soerr);

		if (fd < 0) {
			r = -errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
			r = -errno;
			close(fd);
			continue;
		}
		r = sbx_fd_wait(fd, POLLOUT, deadline);
		if (r == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr)
			r = -soerr;
		if (r < 0) {
			close(fd);
			continue;
		}
		*fd_out = fd;
		break;
	}
	freeaddrinfo(res);
	return r;
}

static const char *ssl_reason(void)
{
	unsigned long e = ERR_get_error();
	const char *s = e ? ERR_reason_error_string(e) : NULL;

	return s ? s : "handshake failed";
}

int sbx_docker__tls_connect(sbx_docker *d, long deadline, docker_tls **out, const char *what,
			    sbx_error *err)
{
	char host[256], port[16], path[4200];
	docker_tls *t;
	unsigned char v6[16];
	bool is_ip;
	int r;

	if (split_url(d->base_url, host, sizeof(host), port, sizeof(port)) < 0)
		return sbx_error_set(err, -EINVAL, "%s: bad engine address '%s'", what, d->host);
	t = calloc(1, sizeof(*t));
	if (!t)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	t->fd = -1;
	r = tcp_connect(host, port, deadline, &t->fd);
	if (r < 0) {
		sbx_docker__tls_free(t);
		return sbx_error_set(err, r == -ETIMEDOUT ? r : -ECONNREFUSED,
				     "%s: cannot connect to the Docker engine at '%s': %s", what,
				     d->host, strerror(-r));
	}
	ERR_clear_error();
	t->ctx = SSL_CTX_new(TLS_client_method());
	if (!t->ctx)
		goto tls_fail;
	SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(t->ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	if (d->cert_path) {
		snprintf(path, sizeof(path), "%s/cert.pem", d->cert_path);
		if (SSL_CTX_use_certificate_chain_file(t->ctx, path) != 1)
			goto tls_fail;
		snprintf(path, sizeof(path), "%s/key.pem", d->cert_path);
		if (SSL_CTX_use_PrivateKey_file(t->ctx, path, SSL_FILETYPE_PEM) != 1)
			goto tls_fail;
	}
	if (d->tls_verify) {
		snprintf(path, sizeof(path), "%s/ca.pem", d->cert_path ? d->cert_path : "");
		if (d->cert_path ? SSL_CTX_load_verify_locations(t->ctx, path, NULL) != 1
				 : SSL_CTX_set_default_verify_paths(t->ctx) != 1)
			goto tls_fail;
		SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
	}
	t->ssl = SSL_new(t->ctx);
	if (!t->ssl || SSL_set_fd(t->ssl, t->fd) != 1)
		goto tls_fail;
	is_ip = inet_pton(AF_INET, host, v6) == 1 || inet_pton(AF_INET6, host, v6) == 1;
	if (d->tls_verify) {
		if (is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->ssl), host) != 1
			  : SSL_set1_host(t->ssl, host) != 1)
			goto tls_fail;
	}
	if (!is_ip)
		SSL_set_tlsext_host_name(t->ssl, host);
	for (;;) {
		int c = SSL_connect(t->ssl), e;

		if (c == 1)
			break;
		e = SSL_get_error(t->ssl, c);
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
			r = sbx_fd_wait(t->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
					deadline);
			if (r < 0) {
				sbx_docker__tls_free(t);
				return sbx_error_set(err, r, "%s: TLS handshake with '%s': %s",
						     what, d->host, strerror(-r));
			}
			continue;
		}
		goto tls_fail;
	}
	*out = t;
	return 0;

tls_fail:
	r = sbx_error_set(err, -EACCES, "%s: TLS with '%s' failed: %s", what, d->host,
			  ssl_reason());
	sbx_docker__tls_free(t);
	return r;
}

int sbx_docker__tls_fd(const docker_tls *t)
{
	return t->fd;
}

short sbx_docker__tls_wants(const docker_tls *t)
{
	return t->wants ? t->wants : POLLIN;
}

/*
 * SSL_write's or SSL_read's answer n as what send/recv return: bytes, -EAGAIN
 * (noting the direction TLS waits for), 0 at a clean close while reading, else
 * -ECONNRESET (reading) or -EPIPE (writing).
 */
static ssize_t io_result(docker_tls *t, int n, bool reading)
{
	int e;

	if (n > 0)
		return n;
	e = SSL_get_error(t->ssl, n);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		t->wants = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
		return -EAGAIN;
	}
	if (reading && e == SSL_ERROR_ZERO_RETURN)
		return 0;
	ERR_clear_error();
	return reading ? -ECONNRESET : -EPIPE;
}

/*
 * OpenSSL's socket BIO writes with write(2), so a peer that has closed raises
 * SIGPIPE, which kills a process that has not ignored it (a library must not
 * ask that of its callers; the unix-socket path sends with MSG_NOSIGNAL). The
 * signal is blocked in this thread around the call, and one the call raised
 * is taken back before the mask is restored.
 */
static void sigpipe_block(sigset_t *old, bool *was_pending)
{
	sigset_t pipe_set, pending;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, old);
	*was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
}

static void sigpipe_restore(const sigset_t *old, bool was_pending)
{
	static const struct timespec now = {0, 0};
	sigset_t pipe_set, pending;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	if (!was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE))
		sigtimedwait(&pipe_set, NULL, &now);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

ssize_t sbx_docker__tls_send(docker_tls *t, const void *p, size_t n)
{
	sigset_t old;
	bool was_pending;
	int w;

	sigpipe_block(&old, &was_pending);
	w = SSL_write(t->ssl, p, n > INT32_MAX ? INT32_MAX : (int)n);
	sigpipe_restore(&old, was_pending);
	return io_result(t, w, false);
}

ssize_t sbx_docker__tls_recv(docker_tls *t, void *p, size_t n)
{
	return io_result(t, SSL_read(t->ssl, p, n > INT32_MAX ? INT32_MAX : (int)n), true);
}

bool sbx_docker__tls_pending(const docker_tls *t)
{
	return SSL_pending(t->ssl) > 0;
}

int sbx_docker__tls_close_write(docker_tls *t, long deadline)
{
	for (;;) {
		sigset_t old;
		bool was_pending;
		int c, e, r;

		sigpipe_block(&old, &was_pending); /* close_notify is a write too */
		c = SSL_shutdown(t->ssl);
		sigpipe_restore(&old, was_pending);

		/* 0: our close_notify is out, the peer's not yet in: reading goes on. */
		if (c >= 0)
			return 0;
		e = SSL_get_error(t->ssl, c);
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
			ERR_clear_error();
			return -EPIPE;
		}
		r = sbx_fd_wait(t->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline);
		if (r < 0)
			return r;
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * The HTTP side, on libmicrohttpd: a thread per connection (a claim blocks
 * until the sandbox's server answers), bounded bodies, the token checked
 * before anything else. Loopback TCP or a 0600 unix socket, nothing else.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "openenv.h"
#include "sandboxes.h"
#include "service.h"
#include "sbx/buf.h"
#include "sbx/cleanup.h"

#define CONNECTION_SLOTS   256
#define CONNECTION_TIMEOUT 120	 /* seconds idle */
#define HEAD_TIMEOUT_MS	   10000 /* the whole request head, from the connect */
/* Past the slots the guard evicts; the evicted keep a place here until their thread ends. */
#define CONNECTION_LIMIT (CONNECTION_SLOTS * 2)

typedef struct request {
	const char *openenv_task; /* first: openenv.c's upgrade reads it */
	sbx_buf body;
	bool too_big;
	bool answered; /* refused at the head */
	bool transfer; /* holds a transfer slot (sbx_serve__transfer_busy) */
} request;

/* 413's answer: {"error": "too_large", "message": ...} (the sandbox API's shape; episodes read
 * "error" as before). */
static char *body_too_large(size_t max)
{
	char msg[96];
	char *out = NULL;

	snprintf(msg, sizeof(msg), "the body is over %zu bytes", max);
	sbx_serve__sandbox_error(&out, 413, "too_large", msg);
	return out;
}

enum MHD_Result sbx_serve__send_text(struct MHD_Connection *c, unsigned status, char *text,
				     const char *type)
{
	struct MHD_Response *resp;
	enum MHD_Result r;

	if (!text)
		return MHD_NO;
	resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (status == 401) {
		MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
		/* A tokenless client does not keep a slot. */
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	}
	r = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_size, void **con_cls)
{
	sbx_serve *s = cls;
	request *rq = *con_cls;
	const char *auth, *path, *len;
	char id[SERVE_ID_MAX + 1] = "";
	char *out = NULL;
	int route, status;

	(void)version;
	auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	if (!rq) {
		sbx_connguard_busy(s->guard, c);
		/* At the head, before any body is read: a tokenless body is never waited for. */
		if (!sbx_serve__authorized(s->token, url, auth, &path)) {
			sbx_serve__unauthorized(s);
			sbx_connguard_refused(s->guard, c);
			return sbx_serve__send_text(
				c, 401, sbx_serve__error_json("the service's token is required"),
				"application/json");
		}
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		sbx_buf_init(&rq->body, sbx_serve__body_max(path));
		*con_cls = rq;
		len = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
		/* Refused before a byte of it is read (MHD then closes the connection). */
		if (len && strtoull(len, NULL, 10) > rq->body.max) {
			rq->answered = true;
			return sbx_serve__send_text(c, 413, body_too_large(rq->body.max),
						    "application/json");
		}
		if (sbx_serve__transfer_busy(s, method, path, len ? strtoull(len, NULL, 10) : ~0ULL,
					     &rq->transfer)) {
			rq->answered = true;
			sbx_serve__sandbox_error(&out, 503, "busy",
						 "too many large transfers under way; try again");
			return sbx_serve__send_text(c, 503, out, "application/json");
		}
		return MHD_YES;
	}
	if (*upload_size) {
		if (!rq->too_big && sbx_buf_append(&rq->body, upload_data, *upload_size) < 0)
			rq->too_big = true;
		*upload_size = 0;
		return MHD_YES;
	}
	if (rq->answered)
		return MHD_YES;
	if (!sbx_serve__authorized(s->token, url, auth, &path))
		return MHD_NO; /* checked at the head */
	if (strncmp(path, "/openenv/", 9) == 0)
		return sbx_serve__openenv_request(s, c, method, path, &rq->openenv_task);
	route = sbx_serve__route(method, path, id);
	if (route < 0)
		return sbx_serve__send_text(
			c, (unsigned)-route,
			sbx_serve__error_json(route == -405 ? "method not allowed" : "not found"),
			"application/json");
	if (rq->too_big)
		return sbx_serve__send_text(c, 413, body_too_large(rq->body.max),
					    "application/json");
	if (route >= SERVE_ROUTE_SBX_CREATE)
		return sbx_serve__sandbox_request(s, c, route, id, method, sbx_buf_str(&rq->body),
						  rq->body.len);
	status = sbx_serve__handle(s, route, id, sbx_buf_str(&rq->body), rq->body.len, &out);
	return sbx_serve__send_text(c, (unsigned)status, out,
				    route == SERVE_ROUTE_METRICS && status == 200
					    ? "text/plain; version=0.0.4; charset=utf-8"
					    : "application/json");
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	sbx_serve *s = cls;
	request *rq = *con_cls;

	(void)toe;
	sbx_connguard_idle(s->guard, c);
	if (rq && rq->transfer)
		sbx_serve__transfer_end(s);
	if (rq) {
		sbx_buf_free(&rq->body);
		free((char *)rq->openenv_task);
		free(rq);
		*con_cls = NULL;
	}
}

/* "unix:PATH": a fresh socket, mode 0600 from the start (umask at bind). */
static int listen_unix(sbx_serve *s, const char *path, sbx_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	mode_t old;
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return sbx_error_set(err, -ENAMETOOLONG, "--listen unix:%s: path too long", path);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return sbx_error_set(err, -EEXIST, "--listen unix:%s: exists", path);
		unlink(path); /* a stale socket of an earlier service */
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return sbx_error_set(err, -errno, "socket: %s", strerror(errno));
	old = umask(0177);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0 || chmod(path, 0600) < 0 || listen(fd, 128) < 0) {
		r = -errno;
		close(fd);
		return sbx_error_set(err, r, "--listen unix:%s: %s", path, strerror(-r));
	}
	s->unix_path = strdup(path);
	s->listen_fd = fd;
	if (!s->unix_path || asprintf(&s->url, "unix:%s", path) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

static int listen_tcp(sbx_serve *s, const char *spec, sbx_error *err)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	const char *colon = strrchr(spec, ':');
	char host[64];
	char *end;
	long port;
	int fd, one = 1;

	if (!colon || (size_t)(colon - spec) >= sizeof(host))
		return sbx_error_set(err, -EINVAL, "--listen '%s': 127.0.0.1:PORT or unix:PATH",
				     spec);
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = 0;
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port < 0 || port > 65535)
		return sbx_error_set(err, -EINVAL, "--listen '%s': bad port", spec);
	if (strcmp(host, "localhost") == 0)
		snprintf(host, sizeof(host), "127.0.0.1");
	/* Loopback only: the API hands out sandboxes. */
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1 || (ntohl(sa.sin_addr.s_addr) >> 24) != 127)
		return sbx_error_set(err, -EINVAL,
				     "--listen '%s': only a loopback address (127.x.x.x)", spec);
	sa.sin_port = htons((uint16_t)port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return sbx_error_set(err, -errno, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
		int r = -errno;

		close(fd);
		return sbx_error_set(err, r, "--listen '%s': %s", spec, strerror(-r));
	}
	s->listen_fd = fd;
	if (asprintf(&s->url, "http://%s:%u/%s", host, ntohs(sa.sin_port), s->token) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

int sbx_serve__listen(sbx_serve *s, const char *spec, sbx_error *err)
{
	int r = strncmp(spec, "unix:", 5) == 0 ? listen_unix(s, spec + 5, err)
					       : listen_tcp(s, spec, err);

	if (r >= 0)
		r = sbx_connguard_new(&s->guard, CONNECTION_SLOTS, HEAD_TIMEOUT_MS, err);
	if (r < 0)
		return r;
	s->mhd = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
					  MHD_USE_POLL | MHD_ALLOW_UPGRADE,
				  0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET,
				  s->listen_fd, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
				  MHD_OPTION_NOTIFY_CONNECTION, sbx_connguard_mhd_notify, s->guard,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTION_LIMIT,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT,
				  MHD_OPTION_END);
	if (!s->mhd)
		return sbx_error_set(err, -EIO, "serve: the HTTP server did not start");
	return 0;
}

void sbx_serve__unlisten(sbx_serve *s)
{
	if (s->mhd) {
		/* Upgraded connections are ours to close before MHD stops. */
		sbx_serve__openenv_stop(s);
		MHD_stop_daemon(s->mhd);
		s->mhd = NULL;
	}
	sbx_connguard_free(TAKE_PTR(s->guard));
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		s->listen_fd = -1;
	}
	if (s->unix_path) {
		unlink(s->unix_path);
		free(s->unix_path);
		s->unix_path = NULL;
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * The HTTP transport on libmicrohttpd: one thread per connection (a tool
 * call runs on its connection's thread, other connections go on), a body
 * cap, a connection cap, keep-alive. Listens on a loopback TCP address or a
 * unix socket bound here and handed over with MHD_OPTION_LISTEN_SOCKET.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "http_server.h"
#include "sbx/connguard.h"
#include "sbx/hostguard.h"
#include "task_session.h"

#define HEAD_TIMEOUT_MS 10000 /* the published port: the whole request head, from the connect */

typedef struct conn_state {
	sbx_buf body;
	bool too_large;
	bool replied;
	size_t url_skip;	       /* the token's bytes at the front of the path ("/<token>") */
	unsigned char after_reply[64]; /* http_request.after_reply, for on_completed */
	size_t after_reply_len;
} conn_state;

typedef struct http_server {
	server *srv;
	const http_options *opt;
	const char *token; /* the published listener's; NULL on the host's socket */
	char prefix[80];   /* "/<token>" */
	/* The published listener's slots and head deadline: any local user reaches it. */
	sbx_connguard *guard;
} http_server;

const char *http_header(http_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

enum MHD_Result http_reply(http_request *req, unsigned status, const char *content_type,
			   const char *body, const http_session *session)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(body ? strlen(body) : 0, (void *)(body ? body : ""),
					    MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	if (content_type)
		MHD_add_response_header(r, "Content-Type", content_type);
	if (session)
		MHD_add_response_header(r, "Mcp-Session-Id", session->mcp.id);
	if (status == 401) /* a client without the token keeps no slot */
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(req->conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result http_reply_bytes(http_request *req, unsigned status, const char *content_type,
				 char *data, size_t len, const char *const *headers)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(data);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", content_type);
	for (size_t i = 0; headers && headers[i] && headers[i + 1]; i += 2)
		MHD_add_response_header(r, headers[i], headers[i + 1]);
	ret = MHD_queue_response(req->conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result http_reply_json(http_request *req, unsigned status, cJSON *o)
{
	_cleanup_free_ char *text = o ? sbx_json_print(o) : NULL;

	cJSON_Delete(o);
	if (!text)
		return http_reply(req, 500, "application/json",
				  "{\"success\":false,\"result\":null,\"error\":\"out of memory\"}",
				  NULL);
	return http_reply(req, status, "application/json", text, NULL);
}

enum MHD_Result http_reply_error(http_request *req, unsigned status, const char *message)
{
	cJSON *o = cJSON_CreateObject();

	if (o) {
		cJSON_AddBoolToObject(o, "success", false);
		cJSON_AddNullToObject(o, "result");
		cJSON_AddStringToObject(o, "error", message);
	}
	return http_reply_json(req, status, o);
}

/* DNS-rebinding protection (sbx/hostguard.h): any port, Host optional as before. */
static const char *check_origin(http_request *req)
{
	const sbx_hostguard g = {
		.extra = req->srv->allowed_hosts,
		.n_extra = req->srv->n_allowed_hosts,
	};

	switch (sbx_hostguard_check(&g, http_header(req, "Host"), http_header(req, "Origin"))) {
	case SBX_HOSTGUARD_BAD_HOST:
		return "Forbidden: Host not allowed";
	case SBX_HOSTGUARD_BAD_ORIGIN:
		return "Forbidden: Origin not allowed";
	default:
		return NULL;
	}
}

/*
 * The reference's /health is exactly {"status":"ok","workspace":…}; clients
 * compare it. /v1/health adds what a supervisor wants to see.
 */
static enum MHD_Result health(http_request *req, bool ours)
{
	cJSON *o = cJSON_CreateObject();

	if (o && !ours) {
		cJSON_AddStringToObject(o, "status", "ok");
		cJSON_AddStringToObject(o, "workspace", req->srv->base.workspace);
	} else if (o) {
		cJSON_AddStringToObject(o, "status", "healthy");
		cJSON_AddStringToObject(o, "server", SERVER_NAME);
		cJSON_AddNumberToObject(o, "tools", (double)req->srv->n_tools);
		cJSON_AddStringToObject(o, "workspace", req->srv->base.workspace);
		cJSON_AddStringToObject(o, "task",
					task_state_name(task_session_state(req->srv->base.task)));
	}
	return http_reply_json(req, 200, o);
}

static enum MHD_Result not_allowed(http_request *req, const char *allow)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	static const char body[] =
		"{\"success\":false,\"result\":null,\"error\":\"Method not allowed\"}";

	r = MHD_create_response_from_buffer(sizeof(body) - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Allow", allow);
	ret = MHD_queue_response(req->conn, 405, r);
	MHD_destroy_response(r);
	return ret;
}

static bool is(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static enum MHD_Result route(http_request *req)
{
	const char *url = req->url, *m = req->method;
	const char *denied = check_origin(req);
	bool get = is(m, "GET") || is(m, "HEAD"), post = is(m, "POST");
	enum MHD_Result result;

	if (denied)
		return http_reply_error(req, 403, denied);
	if (is(url, "/mcp") || is(url, "/mcp/")) {
		if (post)
			return http_mcp_post(req);
		if (is(m, "DELETE"))
			return http_mcp_delete(req);
		/* No server-initiated messages outside a request: no GET stream. */
		return not_allowed(req, "POST, DELETE");
	}
	if (is(url, "/mcp/sse") || is(url, "/sse"))
		return get ? http_legacy_get(req, is(url, "/sse") ? "/messages" : "/mcp/messages")
			   : not_allowed(req, "GET");
	if (is(url, "/mcp/messages") || is(url, "/mcp/messages/") || is(url, "/messages") ||
	    is(url, "/messages/"))
		return post ? http_legacy_post(req) : not_allowed(req, "POST");
	if (is(url, "/health") || is(url, "/") || is(url, "/v1/health"))
		return get ? health(req, is(url, "/v1/health")) : not_allowed(req, "GET");
	if (http_rest_route(req, &result) || http_control_route(req, &result))
		return result;
	return http_reply_error(req, 404, "Not found");
}

/* Compares n bytes in time that does not depend on where they differ. */
static bool same_secret(const char *a, const char *b, size_t n)
{
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)a[i] ^ (unsigned char)b[i];
	return d == 0;
}

/*
 * The published listener's door, as the relay's: the token as the path's
 * first segment (*skip: its length, stripped before routing) or as
 * Authorization: Bearer. False when neither holds it.
 */
static bool authorized(const http_server *hs, struct MHD_Connection *conn, const char *url,
		       size_t *skip)
{
	const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	size_t tl = strlen(hs->token);

	*skip = 0;
	if (url[0] == '/' && strnlen(url + 1, tl) == tl && same_secret(url + 1, hs->token, tl) &&
	    (url[1 + tl] == '/' || url[1 + tl] == '\0')) {
		*skip = 1 + tl;
		return true;
	}
	if (auth && strncasecmp(auth, "Bearer ", 7) == 0) {
		const char *v = auth + 7;

		while (*v == ' ')
			v++;
		return strlen(v) == tl && same_secret(v, hs->token, tl);
	}
	return false;
}

/*
 * The body cap: --max-body, except the host's requests for a sandbox without
 * a task (on the host's socket only): a file, or an exec's stdin in base64.
 */
static size_t body_max(const http_server *hs, const char *url)
{
	if (!hs->token && strncmp(url, "/control/sandbox/", 17) == 0 &&
	    hs->opt->max_body < SANDBOX_BODY_MAX)
		return SANDBOX_BODY_MAX;
	return hs->opt->max_body;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	http_server *hs = cls;
	conn_state *cs = *con_cls;
	http_request req = {hs->srv, conn, url, method, NULL, 0, hs->token != NULL, NULL, NULL, 0};

	if (!cs) {
		const char *len =
			MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
		cs = calloc(1, sizeof(*cs));
		if (!cs)
			return MHD_NO;
		sbx_buf_init(&cs->body, body_max(hs, url));
		*con_cls = cs;
		if (hs->guard)
			sbx_connguard_busy(hs->guard, conn);
		if (hs->token && !authorized(hs, conn, url, &cs->url_skip)) {
			cs->replied = true;
			if (hs->guard)
				sbx_connguard_refused(hs->guard, conn);
			return http_reply_error(
				&req, 401,
				"Unauthorized: this port needs the run's token (the "
				"URL sandboxctl gave, or Authorization: Bearer)");
		}
		if (len && strtoull(len, NULL, 10) > cs->body.max) {
			char msg[128];
			/* Answer before reading: MHD then closes the connection. */
			snprintf(msg, sizeof(msg), "Request body too large (limit %zu bytes)",
				 cs->body.max);
			cs->replied = true;
			return http_reply_error(&req, 413, msg);
		}
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		if (!cs->too_large && !cs->replied &&
		    sbx_buf_append(&cs->body, upload_data, *upload_data_size) < 0)
			cs->too_large = true;
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (cs->replied)
		return MHD_YES;
	cs->replied = true;
	if (cs->too_large) {
		char msg[128];
		snprintf(msg, sizeof(msg), "Request body too large (limit %zu bytes)",
			 cs->body.max);
		return http_reply_error(&req, 413, msg);
	}
	req.body = sbx_buf_str(&cs->body);
	req.body_len = cs->body.len;
	if (hs->token) {
		req.url = url[cs->url_skip] ? url + cs->url_skip : "/";
		req.prefix = cs->url_skip ? hs->prefix : "";
	} else {
		/* Behind sandboxctl's relay, which strips the token and names it here. */
		req.prefix = http_header(&req, "X-Forwarded-Prefix");
	}
	req.after_reply = cs->after_reply;
	enum MHD_Result ret = route(&req);

	cs->after_reply_len =
		req.after_reply_len <= sizeof(cs->after_reply) ? req.after_reply_len : 0;
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	http_server *hs = cls;
	conn_state *cs = *con_cls;

	if (hs->guard)
		sbx_connguard_idle(hs->guard, conn);
	if (!cs)
		return;
	/* The reply is out (in the socket's buffer, which outlives us): PID 1 may act. */
	if (cs->after_reply_len && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK &&
	    hs->srv->init_fd >= 0)
		(void)!send(hs->srv->init_fd, cs->after_reply, cs->after_reply_len, MSG_NOSIGNAL);
	sbx_buf_free(&cs->body);
	free(cs);
	*con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	server_log(SBX_LOG_WARNING, "http: %s", line);
}

static bool loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return false;
}

static int listen_tcp(const char *spec, bool any_address, char *url, size_t url_size,
		      sbx_error *err)
{
	_cleanup_free_ char *host = strdup(spec);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *ai = NULL;
	struct sockaddr_storage bound;
	socklen_t blen = sizeof(bound);
	char *port, nhost[64];
	int fd, one = 1, r;

	if (!host)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	port = strrchr(host, ':');
	if (!port)
		return sbx_error_set(err, -EINVAL, "--http '%s': expected ADDR:PORT", spec);
	*port++ = '\0';
	if (host[0] == '[') {
		size_t n = strlen(host);
		if (n < 2 || host[n - 1] != ']')
			return sbx_error_set(err, -EINVAL, "--http '%s': bad IPv6 address", spec);
		host[n - 1] = '\0';
		memmove(host, host + 1, n - 1);
	}
	r = getaddrinfo(*host ? host : "127.0.0.1", port, &hints, &ai);
	if (r != 0)
		return sbx_error_set(err, -EINVAL, "--http '%s': %s", spec, gai_strerror(r));
	if (!any_address && !loopback(ai->ai_addr)) {
		freeaddrinfo(ai);
		return sbx_error_set(err, -EPERM,
				     "--http '%s': not a loopback address (use --listen-any "
				     "to allow it)",
				     spec);
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		freeaddrinfo(ai);
		return sbx_error_set(err, -errno, "socket: %s", strerror(errno));
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0) {
		r = -errno;
		close(fd);
		freeaddrinfo(ai);
		return sbx_error_set(err, r, "--http '%s': %s", spec, strerror(-r));
	}
	freeaddrinfo(ai);
	getsockname(fd, (struct sockaddr *)&bound, &blen);
	if (bound.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&bound;
		inet_ntop(AF_INET6, &s6->sin6_addr, nhost, sizeof(nhost));
		snprintf(url, url_size, "http://[%s]:%u", nhost, ntohs(s6->sin6_port));
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&bound;
		inet_ntop(AF_INET, &s4->sin_addr, nhost, sizeof(nhost));
		snprintf(url, url_size, "http://%s:%u", nhost, ntohs(s4->sin_port));
	}
	return fd;
}

static int listen_unix(const char *path, char *url, size_t url_size, sbx_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return sbx_error_set(err, -ENAMETOOLONG, "--unix '%s': path too long", path);
	strcpy(sa.sun_path, path);
	/* A stale socket from an earlier run is replaced; any other file is not. */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return sbx_error_set(err, -EEXIST,
					     "--unix '%s': exists and is not a socket", path);
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return sbx_error_set(err, -errno, "socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0660) < 0 ||
	    listen(fd, 128) < 0) {
		r = -errno;
		close(fd);
		return sbx_error_set(err, r, "--unix '%s': %s", path, strerror(-r));
	}
	snprintf(url, url_size, "unix:%s", path);
	return fd;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	http_server *hs = cls;

	if (hs->guard)
		sbx_connguard_mhd_notify(hs->guard, conn, socket_context, code);
}

/*
 * The host's socket has no guard: only the host reaches it, and its bridge
 * streams are opened ahead of their first request. The published port has
 * one, as the relay: past --max-connections a newcomer evicts the longest
 * waiting without a request, and a head must arrive within 10 s.
 */
static struct MHD_Daemon *start_daemon(http_server *hs, int fd)
{
	unsigned limit = hs->opt->max_connections * (hs->guard ? 2 : 1);

	return MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
					MHD_USE_POLL | MHD_USE_ERROR_LOG,
				0, NULL, NULL, on_request, hs, MHD_OPTION_EXTERNAL_LOGGER, mhd_log,
				NULL, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT,
				limit, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)300,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, hs,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, hs, MHD_OPTION_END);
}

/*
 * Serves on --unix, on --http, or on both (--network published: the host's
 * socket, and the port the engine publishes, where opt->token is required
 * and /control is not served).
 */
int http_serve(server *srv, const http_options *opt, sbx_error *err)
{
	http_server hs[2] = {{srv, opt, NULL, "", NULL}, {srv, opt, opt->token, "", NULL}};
	struct MHD_Daemon *d[2] = {NULL, NULL};
	int fd[2] = {-1, -1};
	char url[2][300], line[400];
	sigset_t mask;
	int r = 0, sig = 0;

	if (opt->token)
		snprintf(hs[1].prefix, sizeof(hs[1].prefix), "/%s", opt->token);
	if (opt->unix_path)
		fd[0] = r = listen_unix(opt->unix_path, url[0], sizeof(url[0]), err);
	if (r >= 0 && opt->listen)
		fd[1] = r = listen_tcp(opt->listen, opt->listen_any, url[1], sizeof(url[1]), err);
	if (r >= 0 && opt->token)
		r = sbx_connguard_new(&hs[1].guard, opt->max_connections, HEAD_TIMEOUT_MS, err);
	/* Connection threads inherit the mask; only the main thread takes signals. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	for (int i = 0; i < 2 && r >= 0; i++) {
		if (fd[i] < 0)
			continue;
		d[i] = start_daemon(&hs[i], fd[i]);
		if (!d[i])
			r = sbx_error_set(err, -EIO, "cannot start the HTTP server on %s", url[i]);
	}
	if (r < 0)
		goto done;
	/* The host's URL first: with both, the lifecycle reaches the socket. */
	snprintf(line, sizeof(line), "%s\n", fd[0] >= 0 ? url[0] : url[1]);
	if (opt->ready_file) {
		sbx_error e = SBX_ERROR_INIT;
		if (sbx_path_write_atomic(opt->ready_file, line, strlen(line), &e) < 0)
			server_log(SBX_LOG_WARNING, "ready file: %s", sbx_error_message(&e));
	}
	server_log(SBX_LOG_INFO, "ready %s%s%s%s (workspace '%s', %zu tools)",
		   fd[0] >= 0 ? url[0] : "", fd[0] >= 0 && fd[1] >= 0 ? " and " : "",
		   fd[1] >= 0 ? url[1] : "", opt->token && fd[1] >= 0 ? " (token required)" : "",
		   srv->base.workspace, srv->n_tools);
	while (sigwait(&mask, &sig) != 0 || sig == SIGHUP)
		;
	server_log(SBX_LOG_INFO, "signal %d: shutting down", sig);
	for (int i = 0; i < 2; i++)
		if (d[i])
			MHD_quiesce_daemon(d[i]);
	task_session_wake_all(srv->base.task);
	server_cancel_all(srv);
	sse_stream_close_all(srv->streams);
	http_session_end_all(srv->sessions);
done:
	for (int i = 0; i < 2; i++)
		if (d[i])
			MHD_stop_daemon(d[i]);
	http_workers_wait(srv);
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	if (opt->unix_path && fd[0] >= 0)
		unlink(opt->unix_path);
	sbx_connguard_free(hs[1].guard);
	return r < 0 ? r : 0;
}

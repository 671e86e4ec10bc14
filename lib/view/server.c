/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include "sbx/cleanup.h"
#include "sbx/connguard.h"
#include "sbx/json.h"
#include "view-internal.h"

#define TOKEN_BYTES	16
#define CONNECTIONS_MAX 64
#define HEAD_TIMEOUT_MS 10000 /* the whole request head, from the connect */
/* Past the slots the guard evicts; the evicted keep a place here until their thread ends. */
#define CONNECTION_LIMIT (CONNECTIONS_MAX * 4)
#define FILE_MAX	 ((uint64_t)1 << 32) /* raw files served */
#define LIVE_POLL_MS	 500
#define LIVE_BEAT_S	 10
#define LIVE_MAX_S	 (12 * 3600) /* one live stream, at most */

struct sbx_view_server {
	struct MHD_Daemon *daemon;
	sbx_connguard *guard; /* slots and the head deadline of the daemon's connections */
	int *rootfds;
	char **root_names;
	size_t n_roots;
	char token[TOKEN_BYTES * 2 + 1];
	char nonce[TOKEN_BYTES * 2 + 1];
	char prefix[TOKEN_BYTES * 2 + 3];
	char url[128];
	atomic_bool stopping;
};

static int random_hex(char *out, size_t bytes)
{
	unsigned char raw[64];

	assert(bytes <= sizeof(raw));
	if (getrandom(raw, bytes, 0) != (ssize_t)bytes)
		return -errno;
	for (size_t i = 0; i < bytes; i++)
		sprintf(out + 2 * i, "%02x", raw[i]);
	return 0;
}

/* Constant time: the token is the only key to every run's transcript. */
static bool token_ok(const char *got, size_t len, const char *want)
{
	unsigned char diff = len != strlen(want);

	for (size_t i = 0; i < strlen(want); i++)
		diff |= (unsigned char)(i < len ? got[i] : 0) ^ (unsigned char)want[i];
	return diff == 0;
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *type,
				 const char *body, size_t len, bool copy, const char *csp)
{
	struct MHD_Response *res;
	enum MHD_Result ret;

	res = MHD_create_response_from_buffer(len, (void *)body,
					      copy ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_MUST_FREE);
	if (!res)
		return MHD_NO;
	MHD_add_response_header(res, "Content-Type", type);
	MHD_add_response_header(res, "X-Content-Type-Options", "nosniff");
	/* The token is in the URL: never hand it to another site. */
	MHD_add_response_header(res, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(res, "X-Frame-Options", "DENY");
	MHD_add_response_header(res, "Cache-Control", "no-store");
	MHD_add_response_header(res, "Content-Security-Policy",
				csp ? csp : "default-src 'none'; sandbox");
	if (status == MHD_HTTP_UNAUTHORIZED) /* a client without the token keeps no slot */
		MHD_add_response_header(res, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(c, status, res);
	MHD_destroy_response(res);
	return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
	_cleanup_(sbx_buf_free) sbx_buf b = SBX_BUF_INIT(8192);

	/* text/plain, sandboxed by the CSP: no escaping needed, only no control bytes. */
	if (sbx_buf_printf(&b, "%u ", status) < 0)
		return MHD_NO;
	for (const char *p = msg; *p; p++)
		if (sbx_buf_putc(&b, (unsigned char)*p < 0x20 ? '?' : *p) < 0)
			return MHD_NO;
	if (sbx_buf_putc(&b, '\n') < 0)
		return MHD_NO;
	return send_text(c, status, "text/plain; charset=utf-8", sbx_buf_str(&b), b.len, true,
			 NULL);
}

static unsigned status_of(int r)
{
	switch (r) {
	case -ENOENT:
	case -ENOTDIR:
	case -EXDEV:
	case -ELOOP:
	case -EINVAL:
	case -ENAMETOOLONG:
		return MHD_HTTP_NOT_FOUND;
	case -EACCES:
	case -EPERM:
		return MHD_HTTP_FORBIDDEN;
	default:
		return MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
}

static const char *content_type(const char *name)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{".png", "image/png"},
		{".json", "application/json"},
		{".jsonl", "text/plain; charset=utf-8"},
		{".txt", "text/plain; charset=utf-8"},
		{".log", "text/plain; charset=utf-8"},
		{".yaml", "text/plain; charset=utf-8"},
		{".csv", "text/plain; charset=utf-8"},
	};
	const char *dot = strrchr(name, '.');

	/* Never text/html: a file an agent wrote must not become a page on this origin. */
	for (size_t i = 0; dot && i < SBX_ELEMENTSOF(types); i++)
		if (strcmp(dot, types[i].ext) == 0)
			return types[i].type;
	return "application/octet-stream";
}

static bool secret_path(const char *rel)
{
	const char *base = strrchr(rel, '/');

	base = base ? base + 1 : rel;
	return strcmp(base, "connection.json") == 0;
}

static enum MHD_Result serve_file(sbx_view_server *s, struct MHD_Connection *c, size_t root,
				  const char *rel)
{
	sbx_error err = SBX_ERROR_INIT;
	struct MHD_Response *res;
	enum MHD_Result ret;
	struct stat st;
	int fd;

	if (secret_path(rel))
		return send_error(c, MHD_HTTP_NOT_FOUND, "not served: it holds the run's token");
	fd = sbx_view_open(s->rootfds[root], rel, O_RDONLY | O_NOCTTY | O_NONBLOCK, &err);
	if (fd < 0)
		return send_error(c, status_of(fd), sbx_error_message(&err));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > FILE_MAX) {
		close(fd);
		return send_error(c, MHD_HTTP_NOT_FOUND, "not a regular file");
	}
	res = MHD_create_response_from_fd((uint64_t)st.st_size, fd); /* owns fd now */
	if (!res) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(res, "Content-Type", content_type(rel));
	MHD_add_response_header(res, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(res, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(res, "Cache-Control", "no-store");
	MHD_add_response_header(res, "Content-Security-Policy", "default-src 'none'; sandbox");
	ret = MHD_queue_response(c, MHD_HTTP_OK, res);
	MHD_destroy_response(res);
	return ret;
}

/* ---- live: server-sent events when a run's or sweep's files grow ---- */

typedef struct live {
	sbx_view_server *s;
	int rootfd;
	char *rel;
	bool sweep;
	int64_t sig; /* sizes and mtimes folded together */
	time_t started, last_sent;
	bool done;
} live;

static int64_t file_sig(int rootfd, const char *rel, const char *name)
{
	_cleanup_close_ int fd = sbx_view__open_in(rootfd, rel, name, O_PATH);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return 0;
	/* Unsigned: wraps, never overflows. */
	return (int64_t)((uint64_t)st.st_size * 1000003u + (uint64_t)st.st_mtim.tv_sec * 1000u +
			 (uint64_t)st.st_mtim.tv_nsec / 1000000u);
}

static bool live_finished(const live *l)
{
	sbx_view_tally t = {0};
	_cleanup_json_ cJSON *plan = NULL;

	if (!l->sweep)
		return file_sig(l->rootfd, l->rel, "result.json") != 0;
	plan = sbx_view__load_json(l->rootfd, l->rel, "sweep.json", SBX_VIEW_JSON_MAX, NULL);
	sbx_view__tally_results(l->rootfd, l->rel, &t);
	return t.done >= (unsigned)sbx_view__clamp(
				 cJSON_GetNumberValue(cJSON_GetObjectItem(plan, "episodes")), 0,
				 SBX_SWEEP_MAX_EPISODES);
}

static ssize_t live_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	live *l = cls;
	int n;

	if (l->done)
		return MHD_CONTENT_READER_END_OF_STREAM;
	for (;;) {
		time_t now = time(NULL);
		int64_t sig;

		if (atomic_load(&l->s->stopping) || now - l->started > LIVE_MAX_S)
			return MHD_CONTENT_READER_END_OF_STREAM;
		/* frames/: its mtime moves with each new frame of a GUI run (run --record). */
		sig = file_sig(l->rootfd, l->rel, l->sweep ? "results.jsonl" : "transcript.jsonl") ^
		      file_sig(l->rootfd, l->rel, "result.json") ^
		      file_sig(l->rootfd, l->rel, "frames") * 7;
		if (live_finished(l)) {
			l->done = true;
			n = snprintf(buf, max, "event: done\ndata: 1\n\n");
			return n;
		}
		if (sig != l->sig) {
			l->sig = sig;
			l->last_sent = now;
			n = snprintf(buf, max, "event: change\ndata: %lld\n\n", (long long)sig);
			return n;
		}
		if (now - l->last_sent >= LIVE_BEAT_S) {
			l->last_sent = now;
			return snprintf(buf, max, ": beat\n\n");
		}
		nanosleep(&(struct timespec){0, LIVE_POLL_MS * 1000000L}, NULL);
	}
	(void)pos;
}

static void live_free(void *cls)
{
	live *l = cls;

	free(l->rel);
	free(l);
}

static enum MHD_Result serve_live(sbx_view_server *s, struct MHD_Connection *c, size_t root,
				  const char *rel)
{
	sbx_view_entry e;
	struct MHD_Response *res;
	enum MHD_Result ret;
	live *l;
	int r;

	r = sbx_view_entry_load(s->rootfds[root], root, rel, &e, NULL);
	if (r < 0)
		return send_error(c, MHD_HTTP_NOT_FOUND, "no such run or sweep");
	l = calloc(1, sizeof(*l));
	if (!l || !(l->rel = strdup(rel))) {
		free(l);
		sbx_view_entry_clear(&e);
		return MHD_NO;
	}
	l->s = s;
	l->rootfd = s->rootfds[root];
	l->sweep = e.kind == SBX_VIEW_SWEEP;
	l->started = l->last_sent = time(NULL);
	l->sig = -1; /* the first poll always reports, so a page never misses a change */
	sbx_view_entry_clear(&e);
	res = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 256, live_read, l, live_free);
	if (!res) {
		live_free(l);
		return MHD_NO;
	}
	MHD_add_response_header(res, "Content-Type", "text/event-stream");
	MHD_add_response_header(res, "Cache-Control", "no-store");
	ret = MHD_queue_response(c, MHD_HTTP_OK, res);
	MHD_destroy_response(res);
	return ret;
}

/* "0/runs/x/" → root 0, rel "runs/x". */
static int split_root(const sbx_view_server *s, const char *path, size_t *root, char **rel)
{
	char *end;
	unsigned long n;
	size_t len;

	if (*path < '0' || *path > '9')
		return -ENOENT;
	errno = 0;
	n = strtoul(path, &end, 10);
	if (errno || n >= s->n_roots || (*end && *end != '/'))
		return -ENOENT;
	if (*end == '/')
		end++;
	*rel = strdup(end);
	if (!*rel)
		return -ENOMEM;
	len = strlen(*rel);
	while (len && (*rel)[len - 1] == '/')
		(*rel)[--len] = 0;
	*root = n;
	return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req)
{
	sbx_view_server *s = cls;
	sbx_view_ctx ctx = {
		.rootfds = s->rootfds,
		.root_names = (const char *const *)s->root_names,
		.n_roots = s->n_roots,
		.prefix = s->prefix,
		.nonce = s->nonce,
	};
	_cleanup_(sbx_buf_free) sbx_buf page = SBX_BUF_INIT(SBX_VIEW_PAGE_MAX);
	_cleanup_free_ char *rel = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const char *slash, *path;
	size_t root = 0;
	char *body;
	int r;

	slash = url[0] == '/' ? strchr(url + 1, '/') : NULL;
	if (!*req) { /* the head: the token before any body is waited for */
		sbx_connguard_busy(s->guard, c);
		if (url[0] != '/')
			return send_error(c, MHD_HTTP_UNAUTHORIZED, "the URL's token is missing");
		if (!token_ok(url + 1, slash ? (size_t)(slash - url - 1) : strlen(url + 1),
			      s->token))
			return send_error(c, MHD_HTTP_UNAUTHORIZED,
					  "the URL's token is missing or wrong");
		if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
			return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only");
		*req = s; /* wait for the (empty) body */
		return MHD_YES;
	}
	if (*upload_size)
		return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only");
	path = slash ? slash + 1 : "";
	if (!*path) {
		r = sbx_view_page_index(
			&ctx, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "task"),
			MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "agent"),
			MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "status"), &page,
			&err);
	} else if (strlen(path) >= 2 && path[1] == '/' && strchr("rsfec", path[0])) {
		r = split_root(s, path + 2, &root, &rel);
		if (r < 0)
			return send_error(c, MHD_HTTP_NOT_FOUND, "no such directory");
		if (path[0] == 'c') {
			const char *with =
				MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "with");
			_cleanup_free_ char *rel_b = NULL;
			size_t root_b;

			if (!with || split_root(s, with, &root_b, &rel_b) < 0)
				return send_error(c, MHD_HTTP_NOT_FOUND, "compare: no such sweep");
			r = sbx_view_page_compare(&ctx, root, rel, root_b, rel_b, &page, &err);
			goto respond;
		}
		if (path[0] == 'f')
			return serve_file(s, c, root, rel);
		if (path[0] == 'e')
			return serve_live(s, c, root, rel);
		r = path[0] == 'r' ? sbx_view_page_run(&ctx, root, rel, &page, &err)
				   : sbx_view_page_sweep(&ctx, root, rel, &page, &err);
	} else
		return send_error(c, MHD_HTTP_NOT_FOUND, "no such page");
respond:
	if (r < 0)
		return send_error(c, status_of(r), sbx_error_message(&err));
	body = sbx_buf_steal(&page, NULL);
	if (!body)
		return MHD_NO;
	return send_text(c, MHD_HTTP_OK, "text/html; charset=utf-8", body, strlen(body), false,
			 sbx_view__csp(&ctx, true));
	(void)version;
	(void)upload;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req,
			 enum MHD_RequestTerminationCode toe)
{
	sbx_view_server *s = cls;

	sbx_connguard_idle(s->guard, c);
	(void)req;
	(void)toe;
}

static bool loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

void sbx_view_server_stop(sbx_view_server *s)
{
	if (!s)
		return;
	atomic_store(&s->stopping, true);
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	sbx_connguard_free(s->guard);
	for (size_t i = 0; i < s->n_roots; i++) {
		if (s->rootfds[i] >= 0)
			close(s->rootfds[i]);
		free(s->root_names[i]);
	}
	free(s->rootfds);
	free(s->root_names);
	free(s);
}

SBX_DEFINE_CLEANUP(sbx_view_server, sbx_view_server_stop)

int sbx_view_server_start(const sbx_view_opts *opts, sbx_view_server **out, sbx_error *err)
{
	_cleanup_(sbx_view_server_stopp) sbx_view_server *s = NULL;
	const char *listen = opts->listen ? opts->listen : "127.0.0.1";
	struct sockaddr_storage ss = {0};
	const union MHD_DaemonInfo *info;
	bool v6 = strchr(listen, ':') != NULL;
	int r;

	assert(opts->n_roots > 0);
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(opts->port);
		r = inet_pton(AF_INET6, listen, &a->sin6_addr);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_port = htons(opts->port);
		r = inet_pton(AF_INET, listen, &a->sin_addr);
	}
	if (r != 1)
		return sbx_error_set(err, -EINVAL, "'%s': not an IP address", listen);
	if (!loopback(&ss))
		return sbx_error_set(
			err, -EINVAL,
			"'%s': not a loopback address (the viewer serves this machine only)",
			listen);
	s = calloc(1, sizeof(*s));
	if (!s || !(s->rootfds = calloc(opts->n_roots, sizeof(int))) ||
	    !(s->root_names = calloc(opts->n_roots, sizeof(char *))))
		return sbx_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < opts->n_roots; i++)
		s->rootfds[i] = -1;
	s->n_roots = opts->n_roots;
	for (size_t i = 0; i < opts->n_roots; i++) {
		s->rootfds[i] = open(opts->roots[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (s->rootfds[i] < 0)
			return sbx_error_set(err, -errno, "'%s': cannot open: %s", opts->roots[i],
					     strerror(errno));
		if (!(s->root_names[i] = strdup(opts->roots[i])))
			return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	if ((r = random_hex(s->token, TOKEN_BYTES)) < 0 ||
	    (r = random_hex(s->nonce, TOKEN_BYTES)) < 0)
		return sbx_error_set(err, r, "getrandom: %s", strerror(-r));
	snprintf(s->prefix, sizeof(s->prefix), "/%s/", s->token);
	r = sbx_connguard_new(&s->guard, CONNECTIONS_MAX, HEAD_TIMEOUT_MS, err);
	if (r < 0)
		return r;
	s->daemon = MHD_start_daemon(
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
			(v6 ? MHD_USE_IPv6 : 0),
		opts->port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTION_LIMIT,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION,
		sbx_connguard_mhd_notify, s->guard, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned)(LIVE_BEAT_S * 6), MHD_OPTION_END);
	if (!s->daemon)
		return sbx_error_set(err, -EADDRINUSE, "cannot listen on %s port %u: %s", listen,
				     opts->port, strerror(errno ? errno : EADDRINUSE));
	info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	snprintf(s->url, sizeof(s->url), v6 ? "http://[%s]:%u%s" : "http://%s:%u%s", listen,
		 info ? info->port : opts->port, s->prefix);
	*out = TAKE_PTR(s);
	return 0;
}

const char *sbx_view_server_url(const sbx_view_server *s)
{
	return s->url;
}

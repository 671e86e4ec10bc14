/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared by the files of lib/docker only (and its unit tests). */

#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>

#include "sbx/docker.h"
#include "sbx/docker_stream.h"
#include "sbx/docker_tar.h"
#include "sbx/json.h"
#include "sbx/path.h"

/* Caps on what the engine may send us in one answer. */
#define DOCKER_MAX_JSON_RESPONSE (16u << 20)
#define DOCKER_MAX_ERROR_BODY	 (64u << 10)
#define DOCKER_MAX_LINE		 (1u << 20)

struct sbx_docker {
	CURL *curl;
	char *host;	   /* normalised: "unix:///var/run/docker.sock", "tcp://h:2376" */
	char *socket_path; /* unix only */
	char *base_url;	   /* "http://docker" or "https://h:2376" */
	char *api_version; /* negotiated "1.41" */
	char *cert_path;   /* tls only */
	bool tls;
	bool tls_verify;
	long connect_timeout_ms;
	long request_timeout_ms;
	char **tar_prefix; /* sbx_docker_set_tar; NULL: "tar" */
	char **exec_env;   /* sbx_docker_set_exec_env; NULL: none */
	char curl_error[CURL_ERROR_SIZE];
};

/* A parsed DOCKER_HOST. */
typedef struct docker_host {
	char *normalised;
	char *socket_path; /* unix:// */
	char *base_url;
	bool tcp;
} docker_host;

/* Parses "unix:///p", "tcp://h[:port]" (NULL or "": the default socket). */
int sbx_docker__parse_host(const char *host, bool tls, docker_host *out, sbx_error *err);
void sbx_docker__host_done(docker_host *h);

/* "1.41" -> 1041; -1 when malformed. */
int sbx_docker__api_number(const char *v);

/* Receives body bytes of a 2xx answer as they arrive; negative errno aborts. */
typedef int (*docker_data_fn)(const char *p, size_t n, void *payload);

typedef struct docker_req {
	const char *method; /* "GET", "POST", "PUT", "DELETE", "HEAD" */
	const char *path;   /* "/containers/create?name=x", without the version prefix */
	bool unversioned;
	const void *body; /* in memory ... */
	size_t body_len;
	FILE *body_file;	  /* ... or streamed from a file of body_len bytes */
	const char *content_type; /* NULL: application/json when there is a body */
	long timeout_ms;	  /* 0: the handle's request timeout; -1: none */
	size_t max_body;	  /* cap when collecting into resp->body; 0: 16 MiB */
	docker_data_fn on_data;	  /* stream 2xx body here instead of collecting */
	void *payload;
} docker_req;

typedef struct docker_resp {
	long status;
	sbx_buf body;	    /* collected body (or the error body when streaming) */
	char *content_type; /* owned */
	char *api_version;  /* "Api-Version" header, owned */
	char *path_stat;    /* "X-Docker-Container-Path-Stat", owned */
	int abort_code;	    /* set by a data callback that aborted */
} docker_resp;

void sbx_docker__resp_done(docker_resp *r);

/*
 * Performs one request on d's kept-alive connection. Returns 0 whenever the
 * engine answered (any status; see resp->status), or a negative errno for
 * transport failures (err says: no engine, permission, timeout...) or when
 * on_data aborted (its code). what names the operation for messages:
 * "container 'x': start".
 */
int sbx_docker__request(sbx_docker *d, const docker_req *req, docker_resp *resp, const char *what,
			sbx_error *err);

/*
 * 2xx: returns 0. Otherwise fills err with "<what> failed: HTTP <status>:
 * <engine message>" and returns the mapped errno (see docker.h).
 */
int sbx_docker__check(const docker_resp *resp, const char *what, sbx_error *err);
int sbx_docker__status_errno(long status);

/* The engine's {"message": ...} from an error body (or the text itself); owned by caller. */
char *sbx_docker__error_message(const char *body, size_t len);

/* Applies the handle's transport settings (socket, TLS, timeouts) to a fresh easy handle. */
void sbx_docker__setup_transport(sbx_docker *d, CURL *c, long timeout_ms);

/* Maps a transport failure to an errno and a clear message. */
int sbx_docker__transport_error(sbx_docker *d, CURL *c, CURLcode rc, const char *what,
				long timeout_ms, sbx_error *err);

/* ----------------------------------------------------------- URL building */

/* Appends s percent-encoded for a URL path segment or query value (RFC 3986 unreserved kept). */
int sbx_docker__url_escape(sbx_buf *b, const char *s);

/*
 * {"label":["k","k=v"]} for ?filters=, or NULL-equivalent "" when none.
 * Writes the JSON (not yet escaped) to *out (free()).
 */
int sbx_docker__label_filters_json(const char *const *labels, char **out);

/* -------------------------------------------------------- JSON encoding */

/* The POST /containers/create body. *out: free(). */
int sbx_docker__container_create_body(const sbx_docker_container_opts *opts, char **out,
				      sbx_error *err);
/* The POST /containers/{id}/exec body. */
int sbx_docker__exec_create_body(const sbx_docker_exec_opts *opts, char **out, sbx_error *err);

/* NULL-terminated string list -> JSON array added to obj under key (nothing when list is NULL). */
int sbx_docker__add_strv(cJSON *obj, const char *key, const char *const *list);
int sbx_docker__add_labels(cJSON *obj, const char *key, const sbx_docker_kv *kv, size_t n);

/* Parses "Labels" objects and string arrays from answers. */
int sbx_docker__parse_labels(const cJSON *obj, sbx_docker_kv **out, size_t *n_out);
void sbx_docker__free_labels(sbx_docker_kv *kv, size_t n);
char **sbx_docker__parse_strv(const cJSON *arr);
/* The member names of a JSON object ("Runtimes": {"runc": {...}}), NULL-terminated. */
char **sbx_docker__member_names(const cJSON *obj);
char *sbx_docker__strdup_json(const cJSON *obj, const char *key);

/* --------------------------------------------------------- demultiplexer */

/*
 * The engine multiplexes stdout/stderr of non-TTY processes into frames:
 * [stream(1) 0 0 0 size(4, big-endian)] payload. One demuxer serves both
 * readers: the push side (a request's on_data: sbx_docker__demux_feed) and the
 * pull side (a hijacked stream's read: sbx_docker__demux_payload and
 * sbx_docker__demux_consumed). Bytes may come in any split.
 */
typedef int (*docker_frame_fn)(int stream, const char *p, size_t n, void *payload);

typedef struct docker_demux {
	unsigned char hdr[8];
	size_t hdr_len;
	size_t left; /* payload bytes left in the current frame */
	int stream;  /* the current frame's; always SBX_DOCKER_STDOUT when raw */
	bool raw;    /* TTY: no frames, everything is stdout */
} docker_demux;

void sbx_docker__demux_init(docker_demux *m, bool raw);

/*
 * Takes frame headers from the *n bytes at *p (advancing both past them)
 * until it stands inside a frame, and returns how many of the bytes now at
 * *p are payload of m->stream (0 when all was header and more is needed).
 * The caller uses k of them (k <= the return) and calls
 * sbx_docker__demux_consumed(m, k). -EPROTO on a bad header.
 */
ssize_t sbx_docker__demux_payload(docker_demux *m, const char **p, size_t *n);

/* Counts k payload bytes as used. */
void sbx_docker__demux_consumed(docker_demux *m, size_t k);

/* Feeds n bytes; returns 0, fn's negative code, or -EPROTO on a bad header. */
int sbx_docker__demux_feed(docker_demux *m, const char *p, size_t n, docker_frame_fn fn,
			   void *payload);

/* True between frames (a clean end of stream). */
bool sbx_docker__demux_idle(const docker_demux *m);

/*
 * Collects a multiplexed answer (logs, exec output): stdout frames into out,
 * stderr frames into errout (either may be NULL to drop that stream), at most
 * max bytes in all. Set out, errout and max, init demux, and pass
 * sbx_docker__sink_data as a docker_req's on_data with the sink as payload;
 * it aborts with -ENOBUFS past max.
 */
typedef struct docker_sink {
	sbx_buf *out, *errout;
	size_t total, max;
	docker_demux demux;
} docker_sink;

int sbx_docker__sink_data(const char *p, size_t n, void *payload);

/* ------------------------------------------------------ JSON line stream */

/*
 * Splits the engine's progress stream into JSON lines, passes each to the
 * progress callback, and turns errorDetail/error lines into an error.
 */
typedef struct docker_lines {
	sbx_buf line;
	sbx_docker_progress_fn fn;
	void *payload;
	char *aux_id;	   /* last aux.ID seen */
	char *last_status; /* last status seen (import: the image id) */
	char *error;	   /* the engine's error message, once seen */
} docker_lines;

void sbx_docker__lines_init(docker_lines *l, sbx_docker_progress_fn fn, void *payload);
void sbx_docker__lines_done(docker_lines *l);
/* Feeds bytes; returns 0, or the callback's negative code. */
int sbx_docker__lines_feed(docker_lines *l, const char *p, size_t n);
/* Processes a final unterminated line. */
int sbx_docker__lines_finish(docker_lines *l);

/* ------------------------------------------------------- tar extraction */

/*
 * Streaming extraction core: libarchive reads through read_fn, which returns
 * the next block (0 length at the end, negative errno on failure).
 */
typedef ssize_t (*docker_tar_read_fn)(void *payload, const void **block);

int sbx_docker__tar_extract_stream(docker_tar_read_fn read_fn, void *payload, int dirfd,
				   const sbx_docker_extract_opts *opts,
				   sbx_docker_extract_stats *stats, sbx_error *err);

/* Lexical check of a symlink target: relative and never above the root. */
bool sbx_docker__symlink_stays_inside(const char *link_name, const char *target);

/*
 * Refuses names that could change the meaning of a URL path (an image
 * "../containers/x" would reach another endpoint): only [A-Za-z0-9_.:/@-],
 * no "." or ".." segment, at most 512 bytes. kind names the object in the
 * message ("container", "image").
 */
int sbx_docker__check_name(const char *kind, const char *name, sbx_error *err);

/*
 * Checks the name of an object (kind "container" or "image") and prepares a
 * call on it: *what = "<kind> '<name>': <verb>" for messages (free(), also on
 * failure) and path += "/<kind>s/<escaped name><suffix>", suffix from fmt
 * (path freed on failure).
 */
int sbx_docker__object_prepare(const char *kind, const char *name, const char *verb, char **what,
			       sbx_buf *path, sbx_error *err, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

/* The same for an exec id: *what = "exec '<id, 12 chars>': <verb>", *path = "/exec/<id><suffix>"
 * (both free(), also on failure). */
int sbx_docker__exec_prepare(const char *exec_id, const char *verb, const char *suffix, char **what,
			     char **path, sbx_error *err);

/* "2026-12-02T14:03:49.19215455Z" -> unix seconds; 0 when unparsable. */
int64_t sbx_docker__parse_time(const char *rfc3339);

/*
 * The JSON answer of a request that returned r: checks the status
 * (sbx_docker__check), parses the body into *out and ends resp, whatever r.
 */
int sbx_docker__answer_json(docker_resp *resp, int r, const char *what, cJSON **out,
			    sbx_error *err);

/* Runs a request that returns JSON and parses it (status checked). */
int sbx_docker__get_json(sbx_docker *d, const char *method, const char *path, const char *what,
			 cJSON **out, sbx_error *err);

/*
 * POSTs the JSON body to path and hands back the "Id" the engine answers
 * with (container create, exec create): *id_out (free()). When root_out is
 * not NULL it gets the whole answer (cJSON_Delete), for its warnings.
 */
int sbx_docker__post_create(sbx_docker *d, const char *path, const char *body, const char *what,
			    char **id_out, cJSON **root_out, sbx_error *err);

/* Runs a request whose answer does not matter beyond its status. */
int sbx_docker__simple(sbx_docker *d, const char *method, const char *path, const char *what,
		       long *status_out, sbx_error *err);

/* Appends "<sep>filters=<escaped JSON>" for label filters; nothing when there are none. */
int sbx_docker__filters_query(sbx_buf *b, const char *sep, const char *const *labels);

/* ------------------------------------------------ TLS for hijacked streams (tls.c) */

typedef struct docker_tls docker_tls;

/* Connects to d's tcp:// engine and completes the TLS handshake before deadline (ms, monotonic). */
int sbx_docker__tls_connect(sbx_docker *d, long deadline, docker_tls **out, const char *what,
			    sbx_error *err);
int sbx_docker__tls_fd(const docker_tls *t);
/* Nonblocking: bytes, -EAGAIN, 0 at EOF (recv), or a negative errno. */
ssize_t sbx_docker__tls_send(docker_tls *t, const void *p, size_t n);
ssize_t sbx_docker__tls_recv(docker_tls *t, void *p, size_t n);
/*
 * After -EAGAIN, what the socket must become before trying again: POLLIN or
 * POLLOUT. TLS may need to read to send (a renegotiation or a key update) and
 * to write to receive, so the caller's own direction is the wrong thing to wait
 * for: polling for POLLOUT while OpenSSL waits for bytes spins.
 */
short sbx_docker__tls_wants(const docker_tls *t);
bool sbx_docker__tls_pending(const docker_tls *t);
/* Sends close_notify; reading goes on until the peer's. */
int sbx_docker__tls_close_write(docker_tls *t, long deadline);
void sbx_docker__tls_free(docker_tls *t);

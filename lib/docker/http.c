/* SPDX-License-Identifier: MIT */
/* One HTTP request to the engine: transport setup, body in and out, error mapping. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "docker-internal.h"
#include "sbx/cleanup.h"
#include "sbx/log.h"

#define DEFAULT_MAX_BODY (16u << 20)

void sbx_docker__resp_done(docker_resp *r)
{
	if (!r)
		return;
	sbx_buf_free(&r->body);
	sbx_free_all(r->content_type, r->api_version, r->path_stat);
	r->content_type = r->api_version = r->path_stat = NULL;
}

int sbx_docker__status_errno(long status)
{
	if (status >= 200 && status < 300)
		return 0;
	switch (status) {
	case 304:
		return -EALREADY;
	case 400:
		return -EINVAL;
	case 401:
	case 403:
		return -EACCES;
	case 404:
		return -ENOENT;
	case 409:
		return -EBUSY;
	default:
		return -EIO;
	}
}

char *sbx_docker__error_message(const char *body, size_t len)
{
	_cleanup_json_ cJSON *root = NULL;
	const char *msg;

	while (len > 0 && isspace((unsigned char)body[len - 1]))
		len--;
	if (len == 0)
		return strdup("(no message)");
	if (sbx_json_parse(body, len, &root, NULL) == 0) {
		msg = sbx_json_get_string(root, "message", NULL);
		if (msg)
			return strdup(msg);
	}
	/* Not JSON: quote the text itself, shortened. */
	return strndup(body, len > 300 ? 300 : len);
}

int sbx_docker__check(const docker_resp *resp, const char *what, sbx_error *err)
{
	_cleanup_free_ char *msg = NULL;
	int r = sbx_docker__status_errno(resp->status);

	if (r == 0)
		return 0;
	msg = sbx_docker__error_message(sbx_buf_str(&resp->body), resp->body.len);
	r = sbx_error_set(err, r, "%s failed: HTTP %ld: %s", what, resp->status,
			  msg ? msg : "out of memory");
	if (err && err->code == r)
		err->http_status = (int)resp->status;
	return r;
}

/* ----------------------------------------------------------- callbacks */

typedef struct xfer {
	CURL *c;
	const docker_req *req;
	docker_resp *resp;
	size_t max_body;
	int write_error;
} xfer;

static size_t write_cb(char *p, size_t size, size_t nmemb, void *userdata)
{
	xfer *x = userdata;
	size_t n = size * nmemb;
	long status = 0;
	int r;

	curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &status);
	if (x->req->on_data && status >= 200 && status < 300) {
		r = x->req->on_data(p, n, x->req->payload);
		if (r < 0) {
			x->resp->abort_code = r;
			return CURL_WRITEFUNC_ERROR;
		}
		return n;
	}
	/* Error bodies are kept small even when streaming. */
	if (x->req->on_data && x->resp->body.len + n > DOCKER_MAX_ERROR_BODY)
		return n;
	r = sbx_buf_append(&x->resp->body, p, n);
	if (r < 0) {
		x->write_error = r;
		return CURL_WRITEFUNC_ERROR;
	}
	return n;
}

static char *header_value(const char *p, size_t n, const char *name)
{
	size_t k = strlen(name);

	if (n <= k + 1 || strncasecmp(p, name, k) != 0 || p[k] != ':')
		return NULL;
	p += k + 1;
	n -= k + 1;
	while (n > 0 && (*p == ' ' || *p == '\t'))
		p++, n--;
	while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == '\n' || p[n - 1] == ' '))
		n--;
	return strndup(p, n);
}

static void set_header(char **slot, const char *p, size_t n, const char *name)
{
	char *v = header_value(p, n, name);

	if (v) {
		free(*slot);
		*slot = v;
	}
}

static size_t header_cb(char *p, size_t size, size_t nmemb, void *userdata)
{
	xfer *x = userdata;
	size_t n = size * nmemb;

	set_header(&x->resp->content_type, p, n, "Content-Type");
	set_header(&x->resp->api_version, p, n, "Api-Version");
	set_header(&x->resp->path_stat, p, n, "X-Docker-Container-Path-Stat");
	return n;
}

/* ----------------------------------------------------------- transport */

/*
 * libcurl opens its sockets without close-on-exec: an agent spawned while a
 * request was in flight would inherit a live connection to the engine.
 */
static curl_socket_t open_cloexec(void *userdata, curlsocktype purpose, struct curl_sockaddr *a)
{
	(void)userdata;
	(void)purpose;
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

void sbx_docker__setup_transport(sbx_docker *d, CURL *c, long timeout_ms)
{
	curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_cloexec);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, d->connect_timeout_ms);
	if (timeout_ms > 0)
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, d->curl_error);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	if (d->socket_path)
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, d->socket_path);
	if (d->tls) {
		_cleanup_free_ char *ca = NULL, *cert = NULL, *key = NULL;

		if (d->cert_path && asprintf(&ca, "%s/ca.pem", d->cert_path) >= 0 &&
		    asprintf(&cert, "%s/cert.pem", d->cert_path) >= 0 &&
		    asprintf(&key, "%s/key.pem", d->cert_path) >= 0) {
			/* curl copies the strings. */
			curl_easy_setopt(c, CURLOPT_CAINFO, ca);
			curl_easy_setopt(c, CURLOPT_SSLCERT, cert);
			curl_easy_setopt(c, CURLOPT_SSLKEY, key);
		}
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, d->tls_verify ? 1L : 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, d->tls_verify ? 2L : 0L);
	}
}

int sbx_docker__transport_error(sbx_docker *d, CURL *c, CURLcode rc, const char *what,
				long timeout_ms, sbx_error *err)
{
	long oserr = 0;

	curl_easy_getinfo(c, CURLINFO_OS_ERRNO, &oserr);
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		if (oserr == ENOENT)
			return sbx_error_set(err, -ENOENT,
					     "%s: no Docker engine at '%s' (socket not found; is "
					     "dockerd running? is DOCKER_HOST right?)",
					     what, d->host);
		if (oserr == EACCES || oserr == EPERM)
			return sbx_error_set(err, -EACCES,
					     "%s: permission denied on '%s' (run as root or join "
					     "the 'docker' group)",
					     what, d->host);
		return sbx_error_set(err, -ECONNREFUSED,
				     "%s: cannot connect to the Docker engine at '%s': %s (is "
				     "dockerd running?)",
				     what, d->host, oserr ? strerror((int)oserr) : d->curl_error);
	case CURLE_OPERATION_TIMEDOUT:
		return sbx_error_set(err, -ETIMEDOUT,
				     "%s: the Docker engine at '%s' did not answer within %ld ms",
				     what, d->host, timeout_ms);
	case CURLE_OUT_OF_MEMORY:
		return sbx_error_set(err, -ENOMEM, "%s: out of memory", what);
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CACERT_BADFILE:
		return sbx_error_set(err, -EACCES, "%s: TLS with '%s' failed: %s", what, d->host,
				     d->curl_error[0] ? d->curl_error : curl_easy_strerror(rc));
	default:
		return sbx_error_set(err, -EIO, "%s: talking to the Docker engine at '%s': %s",
				     what, d->host,
				     d->curl_error[0] ? d->curl_error : curl_easy_strerror(rc));
	}
}

static size_t file_read_cb(char *p, size_t size, size_t nmemb, void *userdata)
{
	FILE *f = userdata;
	size_t n = fread(p, size, nmemb, f);

	if (n == 0 && ferror(f))
		return CURL_READFUNC_ABORT;
	return n;
}

int sbx_docker__request(sbx_docker *d, const docker_req *req, docker_resp *resp, const char *what,
			sbx_error *err)
{
	_cleanup_free_ char *url = NULL;
	struct curl_slist *headers = NULL;
	long timeout = req->timeout_ms ? req->timeout_ms : d->request_timeout_ms;
	xfer x = {.c = d->curl, .req = req, .resp = resp};
	bool has_body = req->body || req->body_file;
	char ctype[128];
	CURLcode rc;
	int r = 0;

	memset(resp, 0, sizeof(*resp));
	sbx_buf_init(&resp->body, req->on_data
					  ? DOCKER_MAX_ERROR_BODY + 65536
					  : (req->max_body ? req->max_body : DEFAULT_MAX_BODY));
	if (req->unversioned)
		r = asprintf(&url, "%s%s", d->base_url, req->path);
	else
		r = asprintf(&url, "%s/v%s%s", d->base_url, d->api_version, req->path);
	if (r < 0) {
		url = NULL;
		return sbx_error_set(err, -ENOMEM, "%s: out of memory", what);
	}

	curl_easy_reset(d->curl);
	d->curl_error[0] = '\0';
	sbx_docker__setup_transport(d, d->curl, timeout);
	curl_easy_setopt(d->curl, CURLOPT_URL, url);
	curl_easy_setopt(d->curl, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(d->curl, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(d->curl, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(d->curl, CURLOPT_HEADERDATA, &x);

	if (strcmp(req->method, "GET") == 0) {
		curl_easy_setopt(d->curl, CURLOPT_HTTPGET, 1L);
	} else if (strcmp(req->method, "HEAD") == 0) {
		curl_easy_setopt(d->curl, CURLOPT_NOBODY, 1L);
	} else if (req->body_file) {
		curl_easy_setopt(d->curl, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(d->curl, CURLOPT_READFUNCTION, file_read_cb);
		curl_easy_setopt(d->curl, CURLOPT_READDATA, req->body_file);
		curl_easy_setopt(d->curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)req->body_len);
		curl_easy_setopt(d->curl, CURLOPT_CUSTOMREQUEST, req->method);
	} else {
		curl_easy_setopt(d->curl, CURLOPT_POST, 1L);
		curl_easy_setopt(d->curl, CURLOPT_POSTFIELDS, req->body ? req->body : "");
		curl_easy_setopt(d->curl, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)(req->body ? req->body_len : 0));
		if (strcmp(req->method, "POST") != 0)
			curl_easy_setopt(d->curl, CURLOPT_CUSTOMREQUEST, req->method);
	}
	if (has_body) {
		snprintf(ctype, sizeof(ctype), "Content-Type: %s",
			 req->content_type ? req->content_type : "application/json");
		headers = curl_slist_append(headers, ctype);
	} else {
		/* No form-urlencoded type on bodiless POSTs: the engine checks it. */
		headers = curl_slist_append(headers, "Content-Type:");
	}
	headers = curl_slist_append(headers, "Expect:");
	curl_easy_setopt(d->curl, CURLOPT_HTTPHEADER, headers);

	rc = curl_easy_perform(d->curl);
	curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, &resp->status);
	curl_easy_setopt(d->curl, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(headers);
	curl_easy_setopt(d->curl, CURLOPT_ERRORBUFFER, NULL);

	if (resp->abort_code < 0)
		return resp->abort_code;
	if (x.write_error < 0)
		return sbx_error_set(err, x.write_error,
				     "%s: the engine's answer is larger than %zu bytes", what,
				     resp->body.max);
	if (rc != CURLE_OK) {
		d->curl_error[CURL_ERROR_SIZE - 1] = '\0';
		return sbx_docker__transport_error(d, d->curl, rc, what, timeout, err);
	}
	sbx_log_debug("docker: %s %s -> %ld", req->method, req->path, resp->status);
	return 0;
}

/* ----------------------------------------------------------- URLs */

int sbx_docker__url_escape(sbx_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		int r;

		if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~')
			r = sbx_buf_putc(b, (char)c);
		else
			r = sbx_buf_printf(b, "%%%c%c", hex[c >> 4], hex[c & 15]);
		if (r < 0)
			return r;
	}
	return 0;
}

int sbx_docker__label_filters_json(const char *const *labels, char **out)
{
	_cleanup_json_ cJSON *root = cJSON_CreateObject();
	cJSON *arr;
	char *s;

	if (!root)
		return -ENOMEM;
	arr = cJSON_AddArrayToObject(root, "label");
	if (!arr)
		return -ENOMEM;
	for (; labels && *labels; labels++) {
		cJSON *v = cJSON_CreateString(*labels);
		if (!v || !cJSON_AddItemToArray(arr, v)) {
			cJSON_Delete(v);
			return -ENOMEM;
		}
	}
	s = sbx_json_print(root);
	if (!s)
		return -ENOMEM;
	*out = s;
	return 0;
}

int sbx_docker__api_number(const char *v)
{
	char *end;
	long major, minor;

	if (!v || !isdigit((unsigned char)*v))
		return -1;
	major = strtol(v, &end, 10);
	if (*end != '.' || !isdigit((unsigned char)end[1]))
		return -1;
	minor = strtol(end + 1, &end, 10);
	if (*end || major > 99 || minor > 999)
		return -1;
	return (int)(major * 1000 + minor);
}

int sbx_docker__check_name(const char *kind, const char *name, sbx_error *err)
{
	size_t len;

	if (!name || !*name)
		return sbx_error_set(err, -EINVAL, "%s name is empty", kind);
	len = strnlen(name, 513);
	if (len > 512)
		return sbx_error_set(err, -EINVAL, "%s name longer than 512 bytes", kind);
	if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:/@-") !=
	    len)
		return sbx_error_set(err, -EINVAL, "%s '%s': invalid characters in the name", kind,
				     name);
	for (const char *p = name; p;) {
		size_t n = strcspn(p, "/");

		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return sbx_error_set(err, -EINVAL, "%s '%s': '.' or '..' in the name", kind,
					     name);
		p = p[n] ? p + n + 1 : NULL;
	}
	return 0;
}

int sbx_docker__object_prepare(const char *kind, const char *name, const char *verb, char **what,
			       sbx_buf *path, sbx_error *err, const char *fmt, ...)
{
	va_list ap;
	int r;

	r = sbx_docker__check_name(kind, name, err);
	if (r < 0)
		return r;
	if (asprintf(what, "%s '%s': %s", kind, name, verb) < 0) {
		*what = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	r = sbx_buf_printf(path, "/%ss/", kind);
	if (r == 0)
		r = sbx_docker__url_escape(path, name);
	if (r == 0) {
		va_start(ap, fmt);
		r = sbx_buf_vprintf(path, fmt, ap);
		va_end(ap);
	}
	if (r < 0) {
		sbx_buf_free(path);
		return sbx_error_set(err, r, "out of memory");
	}
	return 0;
}

int64_t sbx_docker__parse_time(const char *s)
{
	struct tm tm;
	const char *end;

	if (!s || !*s)
		return 0;
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end)
		return 0;
	return (int64_t)timegm(&tm);
}

int sbx_docker__answer_json(docker_resp *resp, int r, const char *what, cJSON **out, sbx_error *err)
{
	if (r == 0)
		r = sbx_docker__check(resp, what, err);
	if (r == 0) {
		r = sbx_json_parse(resp->body.data, resp->body.len, out, err);
		if (r < 0)
			sbx_error_prefix(err, r, "%s: malformed answer from the engine", what);
	}
	sbx_docker__resp_done(resp);
	return r;
}

int sbx_docker__get_json(sbx_docker *d, const char *method, const char *path, const char *what,
			 cJSON **out, sbx_error *err)
{
	docker_req req = {.method = method, .path = path};
	docker_resp resp;
	int r;

	r = sbx_docker__request(d, &req, &resp, what, err);
	return sbx_docker__answer_json(&resp, r, what, out, err);
}

int sbx_docker__post_create(sbx_docker *d, const char *path, const char *body, const char *what,
			    char **id_out, cJSON **root_out, sbx_error *err)
{
	_cleanup_json_ cJSON *root = NULL;
	docker_req req = {.method = "POST", .path = path, .body = body, .body_len = strlen(body)};
	docker_resp resp;
	const char *id;
	char *copy;
	int r;

	r = sbx_docker__request(d, &req, &resp, what, err);
	r = sbx_docker__answer_json(&resp, r, what, &root, err);
	if (r < 0)
		return r;
	id = sbx_json_get_string(root, "Id", NULL);
	if (!id || !*id)
		return sbx_error_set(err, -EPROTO, "%s: the engine returned no id", what);
	copy = strdup(id);
	if (!copy)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	*id_out = copy;
	if (root_out)
		*root_out = TAKE_PTR(root);
	return 0;
}

int sbx_docker__simple(sbx_docker *d, const char *method, const char *path, const char *what,
		       long *status_out, sbx_error *err)
{
	docker_req req = {.method = method, .path = path};
	docker_resp resp;
	int r;

	r = sbx_docker__request(d, &req, &resp, what, err);
	if (r == 0) {
		if (status_out)
			*status_out = resp.status;
		if (resp.status != 304)
			r = sbx_docker__check(&resp, what, err);
	}
	sbx_docker__resp_done(&resp);
	return r;
}

/* "?filters=<escaped JSON>" for label filters, "" when there are none. */
int sbx_docker__filters_query(sbx_buf *b, const char *sep, const char *const *labels)
{
	_cleanup_free_ char *json = NULL;
	int r;

	if (!labels || !*labels)
		return 0;
	r = sbx_docker__label_filters_json(labels, &json);
	if (r == 0)
		r = sbx_buf_printf(b, "%sfilters=", sep);
	if (r == 0)
		r = sbx_docker__url_escape(b, json);
	return r;
}

/* SPDX-License-Identifier: MIT */
/* The client handle: DOCKER_HOST, TLS, API version negotiation, ping, system facts. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "docker-internal.h"
#include "sbx/cleanup.h"
#include "sbx/log.h"

#define DEFAULT_SOCKET		   "/var/run/docker.sock"
#define DEFAULT_CONNECT_TIMEOUT_MS 5000L
#define DEFAULT_REQUEST_TIMEOUT_MS 60000L

void sbx_docker__host_done(docker_host *h)
{
	sbx_free_all(h->normalised, h->socket_path, h->base_url);
	memset(h, 0, sizeof(*h));
}

int sbx_docker__parse_host(const char *host, bool tls, docker_host *out, sbx_error *err)
{
	docker_host h = {0};
	int r;

	if (!host || !*host)
		host = "unix://" DEFAULT_SOCKET;
	if (strncmp(host, "unix://", 7) == 0) {
		const char *path = host + 7;
		if (*path != '/')
			return sbx_error_set(
				err, -EINVAL,
				"DOCKER_HOST '%s': a unix socket path must be absolute", host);
		if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			return sbx_error_set(err, -ENAMETOOLONG,
					     "DOCKER_HOST '%s': socket path too long", host);
		h.socket_path = strdup(path);
		h.base_url = strdup("http://docker");
		r = asprintf(&h.normalised, "unix://%s", path);
	} else if (strncmp(host, "tcp://", 6) == 0) {
		const char *hp = host + 6;
		size_t n = strcspn(hp, "/");
		bool has_port = false;

		if (n == 0 || hp[n] != '\0')
			return sbx_error_set(err, -EINVAL,
					     "DOCKER_HOST '%s': expected tcp://HOST:PORT", host);
		/* A port is a ':' after the last ']' (IPv6 literals are bracketed). */
		{
			const char *colon = memrchr(hp, ':', n), *bracket = memrchr(hp, ']', n);
			has_port = colon && (!bracket || colon > bracket);
		}
		if (strspn(hp,
			   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") !=
		    n)
			return sbx_error_set(err, -EINVAL,
					     "DOCKER_HOST '%s': invalid characters in the address",
					     host);
		h.tcp = true;
		h.socket_path = NULL;
		if (has_port)
			r = asprintf(&h.base_url, "%s://%.*s", tls ? "https" : "http", (int)n, hp);
		else
			r = asprintf(&h.base_url, "%s://%.*s:%d", tls ? "https" : "http", (int)n,
				     hp, tls ? 2376 : 2375);
		if (r < 0)
			h.base_url = NULL;
		r = asprintf(&h.normalised, "tcp://%s",
			     h.base_url ? strstr(h.base_url, "//") + 2 : hp);
	} else {
		return sbx_error_set(err, -EINVAL,
				     "DOCKER_HOST '%s': unsupported scheme (use unix:///path or "
				     "tcp://HOST:PORT)",
				     host);
	}
	if (r < 0)
		h.normalised = NULL;
	if (!h.normalised || !h.base_url || (!h.tcp && !h.socket_path)) {
		sbx_docker__host_done(&h);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	*out = h;
	return 0;
}

void sbx_docker_free(sbx_docker *d)
{
	if (!d)
		return;
	curl_easy_cleanup(d->curl);
	sbx_strv_free(d->tar_prefix);
	sbx_strv_free(d->exec_env);
	sbx_free_all(d->host, d->socket_path, d->base_url, d->api_version, d->cert_path);
	free(d);
}

const char *sbx_docker_api_version(const sbx_docker *d)
{
	return d->api_version;
}

const char *sbx_docker_host(const sbx_docker *d)
{
	return d->host;
}

/* A clearer message than curl's for the usual unix-socket failures. */
static int check_socket(const sbx_docker *d, sbx_error *err)
{
	struct stat st;

	if (!d->socket_path)
		return 0;
	if (stat(d->socket_path, &st) < 0) {
		if (errno == ENOENT)
			return sbx_error_set(
				err, -ENOENT,
				"no Docker engine at '%s' (socket not found; is dockerd "
				"running? is DOCKER_HOST right?)",
				d->host);
		if (errno == EACCES)
			return sbx_error_set(err, -EACCES,
					     "permission denied on '%s' (run as root or join the "
					     "'docker' group)",
					     d->host);
		return sbx_error_set(err, -errno, "Docker socket '%s': %s", d->host,
				     strerror(errno));
	}
	if (!S_ISSOCK(st.st_mode))
		return sbx_error_set(err, -ENOTSOCK, "'%s' is not a socket (is DOCKER_HOST right?)",
				     d->host);
	if (access(d->socket_path, R_OK | W_OK) < 0 && errno == EACCES)
		return sbx_error_set(err, -EACCES,
				     "permission denied on '%s' (run as root or join the 'docker' "
				     "group)",
				     d->host);
	return 0;
}

int sbx_docker_ping(sbx_docker *d, sbx_error *err)
{
	docker_req req = {.method = "GET", .path = "/_ping", .unversioned = true};
	docker_resp resp;
	int r;

	r = sbx_docker__request(d, &req, &resp, "ping", err);
	if (r == 0)
		r = sbx_docker__check(&resp, "ping", err);
	sbx_docker__resp_done(&resp);
	return r;
}

/* The API version to speak: the engine's, clamped to what this client knows. */
static int negotiate(sbx_docker *d, sbx_error *err)
{
	docker_req req = {.method = "GET", .path = "/_ping", .unversioned = true};
	docker_resp resp;
	_cleanup_free_ char *server = NULL;
	int r, n;

	r = sbx_docker__request(d, &req, &resp, "ping", err);
	if (r == 0)
		r = sbx_docker__check(&resp, "ping", err);
	if (r == 0)
		server = TAKE_PTR(resp.api_version);
	sbx_docker__resp_done(&resp);
	if (r < 0)
		return r;
	if (!server) {
		/* Engines before 1.25 do not send Api-Version on /_ping: ask /version. */
		_cleanup_json_ cJSON *root = NULL;
		docker_req vreq = {.method = "GET", .path = "/version", .unversioned = true};

		r = sbx_docker__request(d, &vreq, &resp, "version", err);
		r = sbx_docker__answer_json(&resp, r, "version", &root, err);
		if (r < 0)
			return r;
		server = sbx_docker__strdup_json(root, "ApiVersion");
	}
	n = sbx_docker__api_number(server);
	if (n < 0)
		return sbx_error_set(err, -EPROTO,
				     "engine at '%s' reports no usable API version ('%s')", d->host,
				     server ? server : "");
	if (n < sbx_docker__api_number(SBX_DOCKER_API_MIN))
		return sbx_error_set(err, -EPROTO,
				     "engine at '%s' speaks API %s, older than %s which sandboxctl "
				     "needs (upgrade to Docker 19.03 or newer)",
				     d->host, server, SBX_DOCKER_API_MIN);
	free(d->api_version);
	d->api_version = strdup(n > sbx_docker__api_number(SBX_DOCKER_API_MAX) ? SBX_DOCKER_API_MAX
									       : server);
	if (!d->api_version)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	sbx_log_debug("docker: engine API %s, speaking %s", server, d->api_version);
	return 0;
}

int sbx_docker_open(sbx_docker **out, const sbx_docker_opts *opts, sbx_error *err)
{
	static const sbx_docker_opts defaults = SBX_DOCKER_OPTS_INIT;
	sbx_docker *d;
	docker_host h;
	const char *host, *cert, *verify_env;
	int r, verify;

	if (!opts)
		opts = &defaults;
	host = opts->host ? opts->host : getenv("DOCKER_HOST");
	cert = opts->cert_path ? opts->cert_path : getenv("DOCKER_CERT_PATH");
	verify_env = getenv("DOCKER_TLS_VERIFY");
	verify = opts->tls_verify >= 0 ? opts->tls_verify : (verify_env && *verify_env);
	if (cert && !*cert)
		cert = NULL;

	r = sbx_docker__parse_host(host, verify || cert, &h, err);
	if (r < 0)
		return r;
	d = calloc(1, sizeof(*d));
	if (!d) {
		sbx_docker__host_done(&h);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	d->host = TAKE_PTR(h.normalised);
	d->socket_path = TAKE_PTR(h.socket_path);
	d->base_url = TAKE_PTR(h.base_url);
	d->tls = h.tcp && (verify || cert);
	d->tls_verify = verify;
	d->cert_path = d->tls && cert ? strdup(cert) : NULL;
	d->connect_timeout_ms = opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms
							     : DEFAULT_CONNECT_TIMEOUT_MS;
	d->request_timeout_ms = opts->request_timeout_ms > 0 ? opts->request_timeout_ms
							     : DEFAULT_REQUEST_TIMEOUT_MS;
	d->api_version = strdup(opts->api_version ? opts->api_version : SBX_DOCKER_API_MIN);
	d->curl = curl_easy_init();
	if (!d->curl || !d->api_version || (d->tls && cert && !d->cert_path)) {
		sbx_docker_free(d);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	if (opts->api_version && sbx_docker__api_number(opts->api_version) < 0) {
		r = sbx_error_set(err, -EINVAL, "invalid API version '%s'", opts->api_version);
		sbx_docker_free(d);
		return r;
	}

	r = check_socket(d, err);
	if (r == 0)
		r = opts->api_version ? sbx_docker_ping(d, err) : negotiate(d, err);
	if (r < 0) {
		sbx_docker_free(d);
		return r;
	}
	*out = d;
	return 0;
}

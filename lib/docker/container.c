/* SPDX-License-Identifier: MIT */
/* Containers: create, start, stop, kill, wait, remove, inspect, list, logs. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "docker-internal.h"
#include "sbx/cleanup.h"
#include "sbx/log.h"

#define DEFAULT_LOG_MAX (16u << 20)

/* Runs a bodiless call on /containers/{id}<suffix>. */
static int container_call(sbx_docker *d, const char *method, const char *id, const char *verb,
			  long *status, sbx_error *err, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
static int container_call(sbx_docker *d, const char *method, const char *id, const char *verb,
			  long *status, sbx_error *err, const char *fmt, ...)
{
	_cleanup_free_ char *what = NULL, *suffix = NULL;
	sbx_buf path = SBX_BUF_INIT(8192);
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&suffix, fmt, ap);
	va_end(ap);
	if (r < 0) {
		suffix = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	r = sbx_docker__object_prepare("container", id, verb, &what, &path, err, "%s", suffix);
	if (r == 0)
		r = sbx_docker__simple(d, method, path.data, what, status, err);
	sbx_buf_free(&path);
	return r;
}

int sbx_docker_container_create(sbx_docker *d, const sbx_docker_container_opts *opts, char **id_out,
				sbx_error *err)
{
	_cleanup_free_ char *body = NULL, *what = NULL;
	_cleanup_json_ cJSON *root = NULL;
	sbx_buf path = SBX_BUF_INIT(4096);
	const cJSON *w;
	int r;

	r = sbx_docker__container_create_body(opts, &body, err);
	if (r < 0)
		return r;
	if (opts->name && (r = sbx_docker__check_name("container", opts->name, err)) < 0)
		return r;
	if (asprintf(&what, "container '%s': create from image '%s'",
		     opts->name ? opts->name : "(unnamed)", opts->image) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_buf_puts(&path, "/containers/create");
	if (r == 0 && opts->name) {
		r = sbx_buf_puts(&path, "?name=");
		if (r == 0)
			r = sbx_docker__url_escape(&path, opts->name);
	}
	if (r < 0)
		return sbx_error_set(err, r, "out of memory");
	r = sbx_docker__post_create(d, path.data, body, what, id_out, &root, err);
	sbx_buf_free(&path);
	if (r < 0)
		return r;
	cJSON_ArrayForEach (w, sbx_json_get(root, "Warnings"))
		if (cJSON_IsString(w))
			sbx_log_warning("container '%.12s': engine warning: %s", *id_out,
					w->valuestring);
	return 0;
}

int sbx_docker_container_start(sbx_docker *d, const char *id, sbx_error *err)
{
	return container_call(d, "POST", id, "start", NULL, err, "/start");
}

int sbx_docker_container_stop(sbx_docker *d, const char *id, int timeout_s, sbx_error *err)
{
	return container_call(d, "POST", id, "stop", NULL, err, "/stop?t=%d",
			      timeout_s < 0 ? 0 : timeout_s);
}

int sbx_docker_container_kill(sbx_docker *d, const char *id, const char *signal, sbx_error *err)
{
	sbx_buf sig = SBX_BUF_INIT(64);
	int r;

	r = sbx_docker__url_escape(&sig, signal ? signal : "SIGKILL");
	if (r < 0)
		return sbx_error_set(err, r, "container '%s': kill: signal name too long", id);
	r = container_call(d, "POST", id, "kill", NULL, err, "/kill?signal=%s", sig.data);
	sbx_buf_free(&sig);
	return r;
}

int sbx_docker_container_remove(sbx_docker *d, const char *id, bool force, bool volumes,
				sbx_error *err)
{
	return container_call(d, "DELETE", id, "remove", NULL, err, "?force=%d&v=%d", force ? 1 : 0,
			      volumes ? 1 : 0);
}

int sbx_docker_container_wait(sbx_docker *d, const char *id, long timeout_ms, int *exit_code,
			      sbx_error *err)
{
	_cleanup_free_ char *what = NULL;
	_cleanup_json_ cJSON *root = NULL;
	sbx_buf path = SBX_BUF_INIT(4096);
	docker_req req = {.method = "POST", .timeout_ms = timeout_ms};
	docker_resp resp;
	const char *msg;
	int r;

	r = sbx_docker__object_prepare("container", id, "wait", &what, &path, err,
				       "/wait?condition=not-running");
	if (r < 0)
		return r;
	req.path = path.data;
	{
		/* A timeout here is the caller's deadline, not a dead engine. */
		sbx_error local = SBX_ERROR_INIT;
		r = sbx_docker__request(d, &req, &resp, what, &local);
		if (r == -ETIMEDOUT) {
			sbx_buf_free(&path);
			sbx_docker__resp_done(&resp);
			return sbx_error_set(err, -ETIME,
					     "container '%s': still running after %ld ms", id,
					     timeout_ms ? timeout_ms : d->request_timeout_ms);
		}
		if (r < 0 && err && !err->msg[0])
			*err = local;
	}
	sbx_buf_free(&path);
	r = sbx_docker__answer_json(&resp, r, what, &root, err);
	if (r < 0)
		return r;
	msg = sbx_json_get_string(sbx_json_get(root, "Error"), "Message", NULL);
	if (msg && *msg)
		return sbx_error_set(err, -EIO, "%s failed: %s", what, msg);
	if (!cJSON_IsNumber(sbx_json_get(root, "StatusCode")))
		return sbx_error_set(err, -EPROTO, "%s: the engine returned no status code", what);
	if (exit_code)
		*exit_code = (int)sbx_json_get_number(root, "StatusCode", -1);
	return 0;
}

/* ------------------------------------------------------------ inspect/list */

static void container_clear(sbx_docker_container *c)
{
	sbx_free_all(c->id, c->name, c->image, c->image_id, c->state, c->status, c->started_at,
		     c->finished_at, c->error);
	sbx_docker__free_labels(c->labels, c->n_labels);
	free(c->raw_json);
	sbx_strv_free(c->volumes);
}

void sbx_docker_container_free(sbx_docker_container *c)
{
	if (!c)
		return;
	container_clear(c);
	free(c);
}

void sbx_docker_container_list_free(sbx_docker_container *cs, size_t n)
{
	if (!cs)
		return;
	for (size_t i = 0; i < n; i++)
		container_clear(&cs[i]);
	free(cs);
}

static char *strip_slash(const char *name)
{
	return strdup(name && name[0] == '/' ? name + 1 : name ? name : "");
}

static int from_inspect(const cJSON *j, sbx_docker_container *c)
{
	const cJSON *state = sbx_json_get(j, "State"), *config = sbx_json_get(j, "Config");

	c->id = sbx_docker__strdup_json(j, "Id");
	c->name = strip_slash(sbx_json_get_string(j, "Name", NULL));
	c->image = sbx_docker__strdup_json(config, "Image");
	c->image_id = sbx_docker__strdup_json(j, "Image");
	c->state = sbx_docker__strdup_json(state, "Status");
	c->running = sbx_json_get_bool(state, "Running", false);
	c->oom_killed = sbx_json_get_bool(state, "OOMKilled", false);
	c->exit_code = (int)sbx_json_get_number(state, "ExitCode", 0);
	c->pid = (int)sbx_json_get_number(state, "Pid", 0);
	c->tty = sbx_json_get_bool(config, "Tty", false);
	c->created = sbx_docker__parse_time(sbx_json_get_string(j, "Created", NULL));
	c->started_at = sbx_docker__strdup_json(state, "StartedAt");
	c->finished_at = sbx_docker__strdup_json(state, "FinishedAt");
	c->error = sbx_docker__strdup_json(state, "Error");
	c->raw_json = sbx_json_print(j);
	if (sbx_docker__parse_labels(sbx_json_get(config, "Labels"), &c->labels, &c->n_labels) <
		    0 ||
	    !c->id || !c->name || !c->image || !c->image_id || !c->state || !c->started_at ||
	    !c->finished_at || !c->error || !c->raw_json)
		return -ENOMEM;
	return 0;
}

/* The names of the volumes among a summary's Mounts (gc keeps what a container mounts). */
static int summary_volumes(const cJSON *mounts, char ***out)
{
	const cJSON *m;
	size_t n = 0;
	char **v;

	*out = NULL;
	if (!cJSON_IsArray(mounts) || cJSON_GetArraySize(mounts) == 0)
		return 0;
	v = calloc((size_t)cJSON_GetArraySize(mounts) + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	cJSON_ArrayForEach (m, mounts) {
		const char *name = sbx_json_get_string(m, "Name", "");

		if (strcmp(sbx_json_get_string(m, "Type", ""), "volume") != 0 || !name[0])
			continue;
		if (!(v[n++] = strdup(name))) {
			sbx_strv_free(v);
			return -ENOMEM;
		}
	}
	*out = v;
	return 0;
}

static int from_summary(const cJSON *j, sbx_docker_container *c)
{
	const cJSON *names = sbx_json_get(j, "Names");
	const char *image_id = sbx_json_get_string(j, "ImageID", NULL);

	c->id = sbx_docker__strdup_json(j, "Id");
	c->name = strip_slash(cJSON_IsArray(names) && cJSON_IsString(cJSON_GetArrayItem(names, 0))
				      ? cJSON_GetArrayItem(names, 0)->valuestring
				      : "");
	c->image = sbx_docker__strdup_json(j, "Image");
	c->state = sbx_docker__strdup_json(j, "State");
	c->status = sbx_docker__strdup_json(j, "Status");
	c->running = c->state && strcmp(c->state, "running") == 0;
	c->created = (int64_t)sbx_json_get_number(j, "Created", 0);
	c->image_id = image_id ? strdup(image_id) : NULL;
	if (sbx_docker__parse_labels(sbx_json_get(j, "Labels"), &c->labels, &c->n_labels) < 0 ||
	    summary_volumes(sbx_json_get(j, "Mounts"), &c->volumes) < 0 || !c->id || !c->name ||
	    !c->image || !c->state || !c->status || (image_id && !c->image_id))
		return -ENOMEM;
	return 0;
}

int sbx_docker_container_inspect(sbx_docker *d, const char *id, sbx_docker_container **out,
				 sbx_error *err)
{
	_cleanup_free_ char *what = NULL;
	_cleanup_json_ cJSON *root = NULL;
	sbx_buf path = SBX_BUF_INIT(4096);
	sbx_docker_container *c;
	int r;

	r = sbx_docker__object_prepare("container", id, "inspect", &what, &path, err, "/json");
	if (r == 0)
		r = sbx_docker__get_json(d, "GET", path.data, what, &root, err);
	sbx_buf_free(&path);
	if (r < 0)
		return r;
	c = calloc(1, sizeof(*c));
	if (!c || from_inspect(root, c) < 0) {
		sbx_docker_container_free(c);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	*out = c;
	return 0;
}

int sbx_docker_container_list(sbx_docker *d, const char *const *label_filters,
			      sbx_docker_container **out, size_t *n_out, sbx_error *err)
{
	_cleanup_json_ cJSON *root = NULL;
	sbx_buf path = SBX_BUF_INIT(65536);
	sbx_docker_container *cs;
	const cJSON *it;
	size_t n, i = 0;
	int r;

	r = sbx_buf_puts(&path, "/containers/json?all=1");
	if (r == 0)
		r = sbx_docker__filters_query(&path, "&", label_filters);
	if (r < 0)
		return sbx_error_set(err, r, "container list: filters too long");
	r = sbx_docker__get_json(d, "GET", path.data, "container list", &root, err);
	sbx_buf_free(&path);
	if (r < 0)
		return r;
	if (!cJSON_IsArray(root))
		return sbx_error_set(err, -EPROTO,
				     "container list: the engine did not answer a list");
	n = (size_t)cJSON_GetArraySize(root);
	cs = calloc(n ? n : 1, sizeof(*cs));
	if (!cs)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	cJSON_ArrayForEach (it, root) {
		if (from_summary(it, &cs[i++]) < 0) {
			sbx_docker_container_list_free(cs, i);
			return sbx_error_set(err, -ENOMEM, "out of memory");
		}
	}
	*out = cs;
	*n_out = i;
	return 0;
}

int sbx_docker_container_host_port(sbx_docker *d, const char *id, const char *container_port,
				   char **host_ip, int *host_port, sbx_error *err)
{
	_cleanup_(sbx_docker_container_freep) sbx_docker_container *c = NULL;
	_cleanup_json_ cJSON *root = NULL;
	const cJSON *list, *b;
	const char *port;
	int r;

	r = sbx_docker_container_inspect(d, id, &c, err);
	if (r < 0)
		return r;
	r = sbx_json_parse(c->raw_json, strlen(c->raw_json), &root, err);
	if (r < 0)
		return r;
	list = sbx_json_get(sbx_json_get(sbx_json_get(root, "NetworkSettings"), "Ports"),
			    container_port);
	b = cJSON_IsArray(list) ? cJSON_GetArrayItem(list, 0) : NULL;
	port = sbx_json_get_string(b, "HostPort", NULL);
	if (!port || atoi(port) <= 0 || atoi(port) > 65535)
		return sbx_error_set(err, -ENOENT, "container '%s': port '%s' is not published", id,
				     container_port);
	if (host_ip) {
		*host_ip = strdup(sbx_json_get_string(b, "HostIp", ""));
		if (!*host_ip)
			return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	*host_port = atoi(port);
	return 0;
}

/* ------------------------------------------------------------------ logs */

/*
 * GET /containers/{id}/logs into on_data(payload); demux is set up first
 * (whether the output is framed depends on the container's TTY). max: the
 * sink's cap, named when on_data answers -ENOBUFS (0: it never does).
 */
static int logs_request(sbx_docker *d, const char *id, docker_demux *demux,
			int (*on_data)(const char *, size_t, void *), void *payload, size_t max,
			sbx_error *err)
{
	_cleanup_(sbx_docker_container_freep) sbx_docker_container *c = NULL;
	_cleanup_free_ char *what = NULL;
	sbx_buf path = SBX_BUF_INIT(4096);
	docker_req req = {.method = "GET", .on_data = on_data, .payload = payload};
	docker_resp resp;
	int r;

	r = sbx_docker_container_inspect(d, id, &c, err);
	if (r < 0)
		return r;
	sbx_docker__demux_init(demux, c->tty);
	r = sbx_docker__object_prepare("container", id, "logs", &what, &path, err,
				       "/logs?stdout=1&stderr=1");
	if (r < 0)
		return r;
	req.path = path.data;
	r = sbx_docker__request(d, &req, &resp, what, err);
	sbx_buf_free(&path);
	if (r == -ENOBUFS && max)
		r = sbx_error_set(err, r, "%s: more than %zu bytes", what, max);
	else if (r == -EPROTO)
		r = sbx_error_set(err, r, "%s: malformed stream frame", what);
	else if (r < 0)
		sbx_error_set(err, r, "%s: %s", what, strerror(-r));
	if (r == 0)
		r = sbx_docker__check(&resp, what, err);
	sbx_docker__resp_done(&resp);
	return r;
}

int sbx_docker_container_logs(sbx_docker *d, const char *id, size_t max_bytes, sbx_buf *out,
			      sbx_buf *errout, sbx_error *err)
{
	docker_sink s = {
		.out = out, .errout = errout, .max = max_bytes ? max_bytes : DEFAULT_LOG_MAX};

	return logs_request(d, id, &s.demux, sbx_docker__sink_data, &s, s.max, err);
}

/* The bounded log: a head kept whole, then a tail that drops its oldest bytes. */
typedef struct tail_sink {
	sbx_buf *head, *tail;
	size_t head_max, tail_max;
	uint64_t cut;
	docker_demux demux;
} tail_sink;

static int tail_frame(int stream, const char *p, size_t n, void *payload)
{
	tail_sink *t = payload;
	sbx_buf *b = t->tail;
	int r;

	(void)stream;
	if (t->head->len < t->head_max) {
		size_t take = n < t->head_max - t->head->len ? n : t->head_max - t->head->len;

		r = sbx_buf_append(t->head, p, take);
		if (r < 0)
			return r;
		p += take;
		n -= take;
	}
	if (n == 0)
		return 0;
	if (n >= t->tail_max) {
		t->cut += b->len + (n - t->tail_max);
		sbx_buf_reset(b);
		p += n - t->tail_max;
		n = t->tail_max;
	}
	/* Up to twice the tail is held, so each byte is moved at most once. */
	if (b->len + n > 2 * t->tail_max) {
		size_t drop = b->len + n - t->tail_max;

		memmove(b->data, b->data + drop, b->len - drop);
		b->len -= drop;
		t->cut += drop;
	}
	return sbx_buf_append(b, p, n);
}

static int tail_data(const char *p, size_t n, void *payload)
{
	tail_sink *t = payload;

	return sbx_docker__demux_feed(&t->demux, p, n, tail_frame, t);
}

int sbx_docker_container_logs_bounded(sbx_docker *d, const char *id, size_t head_max,
				      size_t tail_max, sbx_buf *head, sbx_buf *tail, uint64_t *cut,
				      sbx_error *err)
{
	tail_sink t = {.head = head, .tail = tail, .head_max = head_max, .tail_max = tail_max};
	int r;

	*cut = 0;
	if (!tail_max || head->max < head_max || tail->max < 2 * tail_max)
		return sbx_error_set(err, -EINVAL, "container logs: buffers smaller than the caps");
	r = logs_request(d, id, &t.demux, tail_data, &t, 0, err);
	if (tail->len > tail_max) {
		size_t drop = tail->len - tail_max;

		memmove(tail->data, tail->data + drop, tail_max + 1);
		tail->len = tail_max;
		t.cut += drop;
	}
	*cut = t.cut;
	return r;
}

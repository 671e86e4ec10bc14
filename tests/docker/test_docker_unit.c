/* SPDX-License-Identifier: MIT */
/* Docker client, no engine: request encoding, URLs, frames, errors, progress, labels. */
#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "docker-internal.h"
#include "sbx/labels.h"

START_TEST(url_escape_keeps_unreserved_only)
{
	sbx_buf b = SBX_BUF_INIT(1024);

	ck_assert_int_eq(sbx_docker__url_escape(&b, "a-Z_0.9~/b c?&=#%\xff"), 0);
	ck_assert_str_eq(sbx_buf_str(&b), "a-Z_0.9~%2Fb%20c%3F%26%3D%23%25%FF");
	sbx_buf_free(&b);
}
END_TEST

START_TEST(label_filters_are_json_then_escaped)
{
	sbx_buf b = SBX_BUF_INIT(1024);
	const char *labels[] = {SBX_LABEL_TEST, "sandboxctl.task=a b", NULL};
	char *json = NULL;

	ck_assert_int_eq(sbx_docker__label_filters_json(labels, &json), 0);
	ck_assert_str_eq(json, "{\"label\":[\"sandboxctl.test\",\"sandboxctl.task=a b\"]}");
	free(json);
	ck_assert_int_eq(sbx_docker__filters_query(&b, "&", labels), 0);
	ck_assert_str_eq(sbx_buf_str(&b), "&filters=%7B%22label%22%3A%5B%22sandboxctl.test%22%2C%"
					  "22sandboxctl.task%3Da%20b%22%5D%7D");
	sbx_buf_reset(&b);
	ck_assert_int_eq(sbx_docker__filters_query(&b, "?", NULL), 0);
	ck_assert_str_eq(sbx_buf_str(&b), "");
	sbx_buf_free(&b);
}
END_TEST

START_TEST(names_that_could_reroute_a_url_are_refused)
{
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_eq(sbx_docker__check_name("image", "sandboxctl/sandbox:latest", NULL), 0);
	ck_assert_int_eq(sbx_docker__check_name("image", "reg:5000/a/b@sha256:00ff", NULL), 0);
	ck_assert_int_eq(sbx_docker__check_name("container", "0123abc", NULL), 0);
	ck_assert_int_eq(sbx_docker__check_name("image", "../containers/x", &err), -EINVAL);
	ck_assert_str_eq(err.msg, "image '../containers/x': '.' or '..' in the name");
	ck_assert_int_eq(sbx_docker__check_name("image", "a/./b", NULL), -EINVAL);
	ck_assert_int_eq(sbx_docker__check_name("container", "a?b", NULL), -EINVAL);
	ck_assert_int_eq(sbx_docker__check_name("container", "a b", NULL), -EINVAL);
	ck_assert_int_eq(sbx_docker__check_name("container", "", NULL), -EINVAL);
	ck_assert_int_eq(sbx_docker__check_name("container", NULL, NULL), -EINVAL);
}
END_TEST

START_TEST(docker_host_parsing)
{
	docker_host h;
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_eq(sbx_docker__parse_host(NULL, false, &h, NULL), 0);
	ck_assert_str_eq(h.normalised, "unix:///var/run/docker.sock");
	ck_assert_str_eq(h.socket_path, "/var/run/docker.sock");
	ck_assert(!h.tcp);
	sbx_docker__host_done(&h);
	ck_assert_int_eq(sbx_docker__parse_host("unix:///tmp/d.sock", false, &h, NULL), 0);
	ck_assert_str_eq(h.socket_path, "/tmp/d.sock");
	sbx_docker__host_done(&h);
	ck_assert_int_eq(sbx_docker__parse_host("tcp://10.0.0.2", false, &h, NULL), 0);
	ck_assert_str_eq(h.base_url, "http://10.0.0.2:2375");
	ck_assert_ptr_null(h.socket_path);
	sbx_docker__host_done(&h);
	ck_assert_int_eq(sbx_docker__parse_host("tcp://engine.lan", true, &h, NULL), 0);
	ck_assert_str_eq(h.base_url, "https://engine.lan:2376");
	ck_assert_str_eq(h.normalised, "tcp://engine.lan:2376");
	sbx_docker__host_done(&h);
	ck_assert_int_eq(sbx_docker__parse_host("tcp://[::1]:9999", true, &h, NULL), 0);
	ck_assert_str_eq(h.base_url, "https://[::1]:9999");
	sbx_docker__host_done(&h);
	ck_assert_int_eq(sbx_docker__parse_host("ssh://me@host", false, &h, &err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "unsupported scheme"));
	ck_assert_int_eq(sbx_docker__parse_host("unix://relative.sock", false, &h, NULL), -EINVAL);
	ck_assert_int_eq(sbx_docker__parse_host("tcp://h:1/path", false, &h, NULL), -EINVAL);
	ck_assert_int_eq(sbx_docker__parse_host("tcp://h@x:1", false, &h, NULL), -EINVAL);
}
END_TEST

START_TEST(api_versions_compare)
{
	ck_assert_int_eq(sbx_docker__api_number("1.41"), 1041);
	ck_assert_int_gt(sbx_docker__api_number("1.100"), sbx_docker__api_number("1.43"));
	ck_assert_int_lt(sbx_docker__api_number("1.9"), sbx_docker__api_number("1.40"));
	ck_assert_int_eq(sbx_docker__api_number("1"), -1);
	ck_assert_int_eq(sbx_docker__api_number("v1.41"), -1);
	ck_assert_int_eq(sbx_docker__api_number("1.41x"), -1);
	ck_assert_int_eq(sbx_docker__api_number(NULL), -1);
}
END_TEST

/* Parses a body the encoder produced, failing the test when it is not JSON. */
static cJSON *parse(const char *s)
{
	cJSON *j = NULL;

	ck_assert_int_eq(sbx_json_parse(s, strlen(s), &j, NULL), 0);
	return j;
}

START_TEST(create_body_carries_every_hardening_field)
{
	const char *cmd[] = {"sandbox-mcp", "--stdio", NULL};
	const char *drop[] = {"ALL", NULL};
	const char *sec[] = {"no-new-privileges:true", NULL};
	const char *dns[] = {"127.0.0.1", NULL};
	sbx_docker_kv labels[] = {{SBX_LABEL_RUN_ID, "r1"}, {SBX_LABEL_TASK, "banking"}};
	sbx_docker_kv tmpfs[] = {{"/work", "rw,nosuid,size=64m,mode=1777"}, {"/tmp", "rw"}};
	sbx_docker_port ports[] = {{"8080/tcp", "127.0.0.1", "0"}};
	sbx_docker_ulimit ulimits[] = {{"nofile", 1024, 2048}};
	sbx_docker_kv log_opts[] = {{"max-size", "8m"}, {"max-file", "3"}};
	sbx_docker_container_opts o = SBX_DOCKER_CONTAINER_OPTS_INIT;
	_cleanup_json_ cJSON *j = NULL;
	_cleanup_free_ char *body = NULL;
	const cJSON *h;

	o.image = SBX_IMAGE_FULL;
	o.cmd = cmd;
	o.user = "1000:1000";
	o.labels = labels;
	o.n_labels = 2;
	o.cap_drop = drop;
	o.security_opt = sec;
	o.readonly_rootfs = true;
	o.tmpfs = tmpfs;
	o.n_tmpfs = 2;
	o.memory = 2LL << 30;
	o.memory_swap = 2LL << 30;
	o.nano_cpus = 2000000000;
	o.pids_limit = 256;
	o.network_mode = "none";
	o.network_disabled = true;
	o.dns = dns;
	o.ports = ports;
	o.n_ports = 1;
	o.ulimits = ulimits;
	o.n_ulimits = 1;
	o.runtime = "runsc";
	o.init = true;
	o.open_stdin = true;
	o.log_driver = "local";
	o.log_opts = log_opts;
	o.n_log_opts = 2;
	o.no_healthcheck = true;
	ck_assert_int_eq(sbx_docker__container_create_body(&o, &body, NULL), 0);
	j = parse(body);
	/* The image's HEALTHCHECK would run as the container's user: none. */
	ck_assert_str_eq(cJSON_GetArrayItem(sbx_json_get(sbx_json_get(j, "Healthcheck"), "Test"), 0)
				 ->valuestring,
			 "NONE");
	ck_assert_str_eq(sbx_json_get_string(j, "Image", ""), SBX_IMAGE_FULL);
	ck_assert_str_eq(sbx_json_get_string(j, "User", ""), "1000:1000");
	ck_assert_str_eq(cJSON_GetArrayItem(sbx_json_get(j, "Cmd"), 1)->valuestring, "--stdio");
	ck_assert_str_eq(sbx_json_get_string(sbx_json_get(j, "Labels"), SBX_LABEL_TASK, ""),
			 "banking");
	ck_assert(sbx_json_get_bool(j, "OpenStdin", false));
	ck_assert(sbx_json_get_bool(j, "AttachStdin", false));
	ck_assert(sbx_json_get_bool(j, "NetworkDisabled", false));
	ck_assert_ptr_nonnull(sbx_json_get(sbx_json_get(j, "ExposedPorts"), "8080/tcp"));
	h = sbx_json_get(j, "HostConfig");
	ck_assert_str_eq(cJSON_GetArrayItem(sbx_json_get(h, "CapDrop"), 0)->valuestring, "ALL");
	ck_assert_ptr_null(sbx_json_get(h, "CapAdd"));
	ck_assert_str_eq(cJSON_GetArrayItem(sbx_json_get(h, "SecurityOpt"), 0)->valuestring,
			 "no-new-privileges:true");
	ck_assert(sbx_json_get_bool(h, "ReadonlyRootfs", false));
	ck_assert_str_eq(sbx_json_get_string(sbx_json_get(h, "Tmpfs"), "/work", ""),
			 "rw,nosuid,size=64m,mode=1777");
	ck_assert_double_eq(sbx_json_get_number(h, "PidsLimit", 0), 256);
	ck_assert_double_eq(sbx_json_get_number(h, "NanoCpus", 0), 2e9);
	ck_assert_str_eq(sbx_json_get_string(h, "NetworkMode", ""), "none");
	ck_assert_str_eq(cJSON_GetArrayItem(sbx_json_get(h, "Dns"), 0)->valuestring, "127.0.0.1");
	ck_assert_str_eq(sbx_json_get_string(h, "Runtime", ""), "runsc");
	ck_assert(sbx_json_get_bool(h, "Init", false));
	ck_assert_str_eq(sbx_json_get_string(sbx_json_get(h, "LogConfig"), "Type", ""), "local");
	ck_assert_str_eq(sbx_json_get_string(sbx_json_get(sbx_json_get(h, "LogConfig"), "Config"),
					     "max-size", ""),
			 "8m");
	ck_assert_str_eq(
		sbx_json_get_string(
			cJSON_GetArrayItem(
				sbx_json_get(sbx_json_get(h, "PortBindings"), "8080/tcp"), 0),
			"HostIp", ""),
		"127.0.0.1");
	ck_assert_double_eq(
		sbx_json_get_number(cJSON_GetArrayItem(sbx_json_get(h, "Ulimits"), 0), "Hard", 0),
		2048);
	/* Integers are printed exactly, not as doubles. */
	ck_assert_ptr_nonnull(strstr(body, "\"Memory\":2147483648,"));
	ck_assert_ptr_null(strstr(body, "e+"));
}
END_TEST

START_TEST(create_body_exact_int64_and_validation)
{
	sbx_docker_container_opts o = SBX_DOCKER_CONTAINER_OPTS_INIT;
	sbx_docker_kv bad_tmpfs[] = {{"work", "rw"}};
	sbx_error err = SBX_ERROR_INIT;
	char *body = NULL;

	o.image = "x";
	o.memory = 9007199254740993LL; /* 2^53 + 1: a double would round it */
	ck_assert_int_eq(sbx_docker__container_create_body(&o, &body, NULL), 0);
	ck_assert_ptr_nonnull(strstr(body, "\"Memory\":9007199254740993"));
	/* Zero means "engine default": absent from the body. */
	ck_assert_ptr_null(strstr(body, "PidsLimit"));
	ck_assert_ptr_null(strstr(body, "Healthcheck"));
	ck_assert_ptr_null(strstr(body, "ReadonlyRootfs"));
	free(body);
	body = NULL;
	o.memory = -5;
	ck_assert_int_eq(sbx_docker__container_create_body(&o, &body, &err), -EINVAL);
	ck_assert_str_eq(err.msg, "container options: negative limit");
	o.memory = 0;
	o.tmpfs = bad_tmpfs;
	o.n_tmpfs = 1;
	ck_assert_int_eq(sbx_docker__container_create_body(&o, &body, NULL), -EINVAL);
	o.n_tmpfs = 0;
	o.image = NULL;
	ck_assert_int_eq(sbx_docker__container_create_body(&o, &body, NULL), -EINVAL);
	o.image = "x";
	o.version = 99;
	ck_assert_int_eq(sbx_docker__container_create_body(&o, &body, NULL), -EINVAL);
	ck_assert_ptr_null(body);
}
END_TEST

START_TEST(exec_body)
{
	const char *cmd[] = {"tar", "-xf", "-", NULL};
	sbx_docker_exec_opts o = SBX_DOCKER_EXEC_OPTS_INIT;
	_cleanup_json_ cJSON *j = NULL;
	_cleanup_free_ char *body = NULL;

	ck_assert_int_eq(sbx_docker__exec_create_body(&o, &body, NULL), -EINVAL);
	o.cmd = cmd;
	o.attach_stdin = true;
	o.user = "1000";
	ck_assert_int_eq(sbx_docker__exec_create_body(&o, &body, NULL), 0);
	j = parse(body);
	ck_assert_int_eq(cJSON_GetArraySize(sbx_json_get(j, "Cmd")), 3);
	ck_assert(sbx_json_get_bool(j, "AttachStdin", false));
	ck_assert(sbx_json_get_bool(j, "AttachStdout", false));
	ck_assert(!sbx_json_get_bool(j, "Tty", true));
	ck_assert(!sbx_json_get_bool(j, "Privileged", true));
	ck_assert_str_eq(sbx_json_get_string(j, "User", ""), "1000");
}
END_TEST

/* ---------------------------------------------------------------- frames */

typedef struct collected {
	sbx_buf out, err;
	int calls;
} collected;

static int collect(int stream, const char *p, size_t n, void *payload)
{
	collected *c = payload;

	c->calls++;
	return sbx_buf_append(stream == SBX_DOCKER_STDERR ? &c->err : &c->out, p, n);
}

static size_t frame(unsigned char *dst, int stream, const char *payload)
{
	size_t n = strlen(payload);

	dst[0] = (unsigned char)stream;
	dst[1] = dst[2] = dst[3] = 0;
	dst[4] = (unsigned char)(n >> 24);
	dst[5] = (unsigned char)(n >> 16);
	dst[6] = (unsigned char)(n >> 8);
	dst[7] = (unsigned char)n;
	memcpy(dst + 8, payload, n);
	return n + 8;
}

START_TEST(demux_any_split)
{
	unsigned char wire[256];
	size_t len = 0;

	len += frame(wire + len, 1, "hello ");
	len += frame(wire + len, 2, "oops\n");
	len += frame(wire + len, 1, "");
	len += frame(wire + len, 1, "world");
	/* Every split point, including one byte at a time. */
	for (size_t step = 1; step <= len; step++) {
		collected c = {SBX_BUF_INIT(1024), SBX_BUF_INIT(1024), 0};
		docker_demux m;

		sbx_docker__demux_init(&m, false);
		for (size_t off = 0; off < len; off += step) {
			size_t n = off + step > len ? len - off : step;
			ck_assert_int_eq(
				sbx_docker__demux_feed(&m, (char *)wire + off, n, collect, &c), 0);
		}
		ck_assert(sbx_docker__demux_idle(&m));
		ck_assert_str_eq(sbx_buf_str(&c.out), "hello world");
		ck_assert_str_eq(sbx_buf_str(&c.err), "oops\n");
		sbx_buf_free(&c.out);
		sbx_buf_free(&c.err);
	}
}
END_TEST

START_TEST(demux_pull_takes_a_little_at_a_time)
{
	unsigned char wire[256];
	char out[2][64] = {{0}};
	size_t len = 0, got[2] = {0, 0};
	const char *p = (const char *)wire;
	size_t n;

	len += frame(wire + len, 1, "hel");
	len += frame(wire + len, 1, "");
	len += frame(wire + len, 2, "err");
	len += frame(wire + len, 1, "lo");
	n = len;
	/* The stream reader's way: a small buffer, one payload byte per call. */
	docker_demux m;
	sbx_docker__demux_init(&m, false);
	for (;;) {
		ssize_t k = sbx_docker__demux_payload(&m, &p, &n);
		int i = m.stream == SBX_DOCKER_STDERR;

		ck_assert_int_ge(k, 0);
		if (k == 0)
			break;
		ck_assert_int_le(k, (ssize_t)n);
		out[i][got[i]++] = *p++;
		n--;
		sbx_docker__demux_consumed(&m, 1);
	}
	ck_assert_uint_eq(n, 0);
	ck_assert(sbx_docker__demux_idle(&m));
	ck_assert_str_eq(out[0], "hello");
	ck_assert_str_eq(out[1], "err");
}
END_TEST

START_TEST(demux_refuses_garbage_and_reports_partial)
{
	collected c = {SBX_BUF_INIT(1024), SBX_BUF_INIT(1024), 0};
	unsigned char wire[64];
	docker_demux m;
	size_t len = frame(wire, 1, "abcdef");

	sbx_docker__demux_init(&m, false);
	ck_assert_int_eq(sbx_docker__demux_feed(&m, (char *)wire, len - 2, collect, &c), 0);
	ck_assert(!sbx_docker__demux_idle(&m)); /* cut inside a frame */
	sbx_docker__demux_init(&m, false);
	ck_assert_int_eq(sbx_docker__demux_feed(&m, "\x07\0\0\0\0\0\0\1x", 9, collect, &c),
			 -EPROTO);
	sbx_docker__demux_init(&m, false);
	ck_assert_int_eq(sbx_docker__demux_feed(&m, "HTTP/1.1 200", 12, collect, &c), -EPROTO);
	/* TTY: no frames, all stdout. */
	sbx_buf_reset(&c.out);
	sbx_docker__demux_init(&m, true);
	ck_assert_int_eq(sbx_docker__demux_feed(&m, "\x07raw", 4, collect, &c), 0);
	ck_assert_str_eq(sbx_buf_str(&c.out), "\x07raw");
	sbx_buf_free(&c.out);
	sbx_buf_free(&c.err);
}
END_TEST

/* ---------------------------------------------------------------- errors */

START_TEST(engine_errors_become_one_line)
{
	docker_resp resp = {.status = 409};
	sbx_error err = SBX_ERROR_INIT;
	char *m;

	sbx_buf_init(&resp.body, 4096);
	sbx_buf_puts(&resp.body, "{\"message\":\"Conflict. The container name \\\"/x\\\" is "
				 "already in use\\nby container\"}\n");
	ck_assert_int_eq(sbx_docker__check(&resp, "container 'x': create", &err), -EBUSY);
	ck_assert_str_eq(err.msg, "container 'x': create failed: HTTP 409: Conflict. The "
				  "container name \"/x\" is already in use by container");
	ck_assert_int_eq(err.http_status, 409);
	sbx_buf_free(&resp.body);

	m = sbx_docker__error_message("page not found\n", 15);
	ck_assert_str_eq(m, "page not found");
	free(m);
	m = sbx_docker__error_message("", 0);
	ck_assert_str_eq(m, "(no message)");
	free(m);
	ck_assert_int_eq(sbx_docker__status_errno(204), 0);
	ck_assert_int_eq(sbx_docker__status_errno(304), -EALREADY);
	ck_assert_int_eq(sbx_docker__status_errno(400), -EINVAL);
	ck_assert_int_eq(sbx_docker__status_errno(403), -EACCES);
	ck_assert_int_eq(sbx_docker__status_errno(404), -ENOENT);
	ck_assert_int_eq(sbx_docker__status_errno(500), -EIO);
	resp.status = 200;
	ck_assert_int_eq(sbx_docker__check(&resp, "x", NULL), 0);
}
END_TEST

START_TEST(open_fails_fast_without_engine)
{
	sbx_docker_opts o = SBX_DOCKER_OPTS_INIT;
	sbx_error err = SBX_ERROR_INIT;
	sbx_docker *d = NULL;

	o.host = "unix:///nonexistent/docker.sock";
	ck_assert_int_eq(sbx_docker_open(&d, &o, &err), -ENOENT);
	ck_assert_ptr_null(d);
	ck_assert_ptr_nonnull(strstr(err.msg, "no Docker engine at 'unix:///nonexistent"));
	ck_assert_ptr_null(strchr(err.msg, '\n'));
	sbx_error_clear(&err);
	o.host = "unix:///dev/null";
	ck_assert_int_eq(sbx_docker_open(&d, &o, &err), -ENOTSOCK);
	sbx_error_clear(&err);
	o.host = "ftp://x";
	ck_assert_int_eq(sbx_docker_open(&d, &o, &err), -EINVAL);
}
END_TEST

/* ---------------------------------------------------------------- progress */

typedef struct seen {
	sbx_buf text;
	int n;
} seen;

static int on_progress(const sbx_docker_progress *p, void *payload)
{
	seen *s = payload;

	s->n++;
	if (p->stream)
		sbx_buf_puts(&s->text, p->stream);
	if (p->status)
		sbx_buf_printf(&s->text, "[%s]", p->status);
	return 0;
}

START_TEST(progress_lines_split_and_errors)
{
	const char *wire = "{\"stream\":\"Step 1/2 : FROM scratch\\n\"}\r\n"
			   "not json\n"
			   "{\"aux\":{\"ID\":\"sha256:abc\"}}\n"
			   "{\"status\":\"sha256:def\"}\n"
			   "{\"errorDetail\":{\"message\":\"COPY failed: no such file\"},"
			   "\"error\":\"COPY failed\"}";
	seen s = {SBX_BUF_INIT(4096), 0};
	docker_lines l;

	sbx_docker__lines_init(&l, on_progress, &s);
	for (size_t i = 0; wire[i]; i++)
		ck_assert_int_eq(sbx_docker__lines_feed(&l, wire + i, 1), 0);
	ck_assert_ptr_null(l.error);
	ck_assert_int_eq(sbx_docker__lines_finish(&l), 0);
	ck_assert_str_eq(sbx_buf_str(&s.text), "Step 1/2 : FROM scratch\n[sha256:def]");
	ck_assert_int_eq(s.n, 3);
	ck_assert_str_eq(l.aux_id, "sha256:abc");
	ck_assert_str_eq(l.last_status, "sha256:def");
	ck_assert_str_eq(l.error, "COPY failed: no such file");
	sbx_docker__lines_done(&l);
	sbx_buf_free(&s.text);
}
END_TEST

static int abort_progress(const sbx_docker_progress *p, void *payload)
{
	return -ECANCELED;
}

START_TEST(progress_callback_can_abort)
{
	docker_lines l;

	sbx_docker__lines_init(&l, abort_progress, NULL);
	ck_assert_int_eq(sbx_docker__lines_feed(&l, "{\"stream\":\"x\"}\n", 15), -ECANCELED);
	sbx_docker__lines_done(&l);
}
END_TEST

/* ---------------------------------------------------------------- labels */

START_TEST(owner_strings)
{
	_cleanup_free_ char *self = NULL, *fake = NULL, *other = NULL;
	char host[256];
	bool gone = true;

	ck_assert_int_eq(sbx_label_owner_self(&self, NULL), 0);
	ck_assert_int_eq(sbx_label_owner_gone(self, &gone, NULL), 0);
	ck_assert(!gone);
	gethostname(host, sizeof(host));
	/* Same pid, another start time: the pid was reused. */
	ck_assert_int_ge(asprintf(&fake, "%s:%d:1", host, (int)getpid()), 0);
	ck_assert_int_eq(sbx_label_owner_gone(fake, &gone, NULL), 0);
	ck_assert(gone);
	free(fake);
	ck_assert_int_ge(asprintf(&fake, "%s:4194300:99", host), 0);
	ck_assert_int_eq(sbx_label_owner_gone(fake, &gone, NULL), 0);
	ck_assert(gone);
	/* Another host, garbage, NULL: never "gone". */
	ck_assert_int_ge(asprintf(&other, "not-%s:1:1", host), 0);
	ck_assert_int_eq(sbx_label_owner_gone(other, &gone, NULL), 0);
	ck_assert(!gone);
	ck_assert_int_eq(sbx_label_owner_gone("garbage", &gone, NULL), 0);
	ck_assert(!gone);
	ck_assert_int_eq(sbx_label_owner_gone(NULL, &gone, NULL), 0);
	ck_assert(!gone);
	ck_assert_int_eq(sbx_label_owner_of_pid(4194300, &fake, NULL), -ESRCH);
}
END_TEST

/* A zombie owner (exited, not reaped: a killed service whose parent died
 * too, before init reaps it) is gone, or gc would keep its sandboxes. */
START_TEST(owner_zombie_is_gone)
{
	_cleanup_free_ char *owner = NULL;
	int fds[2], status;
	bool gone = false, zombie = false;
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[1]);
		_exit(read(fds[0], &c, 1) < 0);
	}
	close(fds[0]);
	ck_assert_int_eq(sbx_label_owner_of_pid(pid, &owner, NULL), 0);
	ck_assert_int_eq(sbx_label_owner_gone(owner, &gone, NULL), 0);
	ck_assert(!gone);
	close(fds[1]); /* the child exits; it stays a zombie until waitpid */
	for (int i = 0; i < 500 && !zombie; i++) {
		char path[64], line[512] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		f = fopen(path, "re");
		ck_assert_ptr_nonnull(f);
		ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
		fclose(f);
		zombie = strstr(line, ") Z ") != NULL;
		if (!zombie)
			usleep(10000);
	}
	ck_assert(zombie);
	ck_assert_int_eq(sbx_label_owner_gone(owner, &gone, NULL), 0);
	ck_assert(gone);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
}
END_TEST

START_TEST(label_lookup_and_time)
{
	sbx_docker_kv kv[] = {{"a", "1"}, {SBX_LABEL_OWNER, "h:1:2"}};

	ck_assert_str_eq(sbx_docker_label_get(kv, 2, SBX_LABEL_OWNER), "h:1:2");
	ck_assert_ptr_null(sbx_docker_label_get(kv, 2, "b"));
	ck_assert_int_eq(sbx_docker__parse_time("1970-01-02T00:00:01.5Z"), 86401);
	ck_assert_int_eq(sbx_docker__parse_time("garbage"), 0);
	ck_assert_int_eq(sbx_docker__parse_time(NULL), 0);
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "encode", NULL, NULL, 0, url_escape_keeps_unreserved_only,
		      label_filters_are_json_then_escaped,
		      names_that_could_reroute_a_url_are_refused, docker_host_parsing,
		      api_versions_compare, create_body_carries_every_hardening_field,
		      create_body_exact_int64_and_validation, exec_body, demux_any_split,
		      demux_pull_takes_a_little_at_a_time,
		      demux_refuses_garbage_and_reports_partial, engine_errors_become_one_line,
		      open_fails_fast_without_engine, progress_lines_split_and_errors,
		      progress_callback_can_abort, owner_strings, owner_zombie_is_gone,
		      label_lookup_and_time);
}

SBX_TEST_MAIN("docker", add_cases)

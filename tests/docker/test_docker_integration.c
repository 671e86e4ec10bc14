/* SPDX-License-Identifier: MIT */
/*
 * The Docker client against the machine's REAL engine. The tests make their
 * own tiny image (Debian's static busybox imported through the client) when
 * it is missing, label everything sandboxctl.test=1 plus a per-run id, and an
 * unchecked fixture (in the parent process, so it runs even when a test
 * fails or times out) removes every container of the run.
 *
 * This file: the runner, the fixture, the helpers the tests share and the
 * container lifecycle's tests; the rest is in
 * test_docker_integration_{io,build}.c.
 */
#include "test_docker_integration.h"

static char run_id[64];
static char run_label[128];

sbx_docker *connect_engine(void)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_docker *d = NULL;

	ck_assert_msg(sbx_docker_open(&d, NULL, &err) == 0, "%s", err.msg);
	return d;
}

/* Parent-side cleanup: every container of this run, whatever happened. */
static void remove_run_containers(void)
{
	test_remove_labelled(run_label);
}

static void global_setup(void)
{
	sbx_docker *d = connect_engine();

	test_image_ensure(d);
	sbx_docker_free(d);
}

/* A labelled container from the test image; cmd NULL-terminated. */
char *make_container(sbx_docker *d, sbx_docker_container_opts *o, const char **cmd)
{
	sbx_docker_kv labels[] = {{SBX_LABEL_TEST, "1"}, {SBX_LABEL_RUN_ID, run_id}};
	sbx_error err = SBX_ERROR_INIT;
	char *id = NULL;

	o->image = SBX_TEST_IMAGE;
	o->cmd = cmd;
	o->labels = labels;
	o->n_labels = 2;
	ck_assert_msg(sbx_docker_container_create(d, o, &id, &err) == 0, "%s", err.msg);
	return id;
}

/*
 * Hardens o as sandboxes are: no capabilities, no new privileges, uid 1000, a
 * read-only root with a tmpfs /work, half a CPU, memory bytes and pids processes.
 */
static void harden(sbx_docker_container_opts *o, int64_t memory, int64_t pids)
{
	static const char *drop[] = {"ALL", NULL};
	static const char *sec[] = {"no-new-privileges:true", NULL};
	static sbx_docker_kv tmpfs[] = {{"/work", "rw,nosuid,size=16m,mode=1777"}};

	o->cap_drop = drop;
	o->security_opt = sec;
	o->user = "1000:1000";
	o->readonly_rootfs = true;
	o->tmpfs = tmpfs;
	o->n_tmpfs = 1;
	o->memory = memory;
	o->nano_cpus = 500000000;
	o->pids_limit = pids;
}

char *running_sleeper(sbx_docker *d, bool hardened)
{
	static const char *cmd[] = {"sleep", "120", NULL};
	sbx_docker_container_opts o = SBX_DOCKER_CONTAINER_OPTS_INIT;
	sbx_error err = SBX_ERROR_INIT;
	char *id;

	o.network_mode = "none";
	o.stop_signal = "SIGKILL";
	if (hardened)
		harden(&o, 128LL << 20, 32);
	id = make_container(d, &o, cmd);
	ck_assert_msg(sbx_docker_container_start(d, id, &err) == 0, "%s", err.msg);
	return id;
}

long ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

void run_in(sbx_docker *d, const char *id, const char *script, int want_code, sbx_buf *out)
{
	const char *cmd[] = {"sh", "-c", script, NULL};
	sbx_docker_exec_opts o = SBX_DOCKER_EXEC_OPTS_INIT;
	sbx_buf errout = SBX_BUF_INIT(65536);
	sbx_error err = SBX_ERROR_INIT;
	int code = -1;

	o.cmd = cmd;
	ck_assert_msg(sbx_docker_exec_run(d, id, &o, 30000, out, &errout, &code, &err) == 0, "%s",
		      err.msg);
	ck_assert_msg(code == want_code, "'%s' exited %d: %s", script, code, sbx_buf_str(&errout));
	sbx_buf_free(&errout);
}

/* ------------------------------------------------------------------ tests */

START_TEST(engine_facts)
{
	sbx_docker *d = connect_engine();
	sbx_docker_system *s = NULL;
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_ge(strlen(sbx_docker_api_version(d)), 4);
	ck_assert_int_eq(sbx_docker_ping(d, &err), 0);
	ck_assert_msg(sbx_docker_system_get(d, &s, &err) == 0, "%s", err.msg);
	ck_assert_str_ne(s->server_version, "");
	ck_assert_str_eq(s->os, "linux");
	ck_assert_str_ne(s->storage_driver, "");
	ck_assert(sbx_docker_system_has_runtime(s, s->default_runtime));
	ck_assert(!sbx_docker_system_has_runtime(s, "no-such-runtime"));
	sbx_docker_system_free(s);
	sbx_docker_free(d);
}
END_TEST

START_TEST(create_start_wait_logs_remove)
{
	const char *cmd[] = {"sh", "-c", "echo out; echo err >&2; id -u; exit 7", NULL};
	sbx_docker_container_opts o = SBX_DOCKER_CONTAINER_OPTS_INIT;
	sbx_docker *d = connect_engine();
	sbx_docker_container *c = NULL;
	sbx_buf out = SBX_BUF_INIT(4096), errout = SBX_BUF_INIT(4096);
	sbx_buf head = SBX_BUF_INIT(3), tail = SBX_BUF_INIT(8);
	sbx_docker_kv log_opts[] = {{"max-size", "1m"}, {"max-file", "2"}};
	uint64_t cut = 0;
	sbx_error err = SBX_ERROR_INIT;
	char *id;
	int code = -1;

	harden(&o, 64LL << 20, 16);
	o.network_mode = "none";
	o.init = true;
	o.log_driver = "local";
	o.log_opts = log_opts;
	o.n_log_opts = 2;
	id = make_container(d, &o, cmd);
	ck_assert_msg(sbx_docker_container_start(d, id, &err) == 0, "%s", err.msg);
	ck_assert_msg(sbx_docker_container_wait(d, id, 20000, &code, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(code, 7);
	ck_assert_msg(sbx_docker_container_logs(d, id, 0, &out, &errout, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(sbx_buf_str(&out), "out\n1000\n");
	ck_assert_str_eq(sbx_buf_str(&errout), "err\n");
	/* 13 bytes in all, both streams: 3 kept at the start, 4 at the end, 6 cut. */
	ck_assert_msg(sbx_docker_container_logs_bounded(d, id, 3, 4, &head, &tail, &cut, &err) == 0,
		      "%s", err.msg);
	ck_assert_uint_eq(head.len, 3);
	ck_assert_uint_eq(tail.len, 4);
	ck_assert_uint_eq(cut, 6);
	ck_assert_int_eq(sbx_docker_container_inspect(d, id, &c, &err), 0);
	ck_assert_ptr_nonnull(strstr(c->raw_json, "\"Type\":\"local\""));
	ck_assert_ptr_nonnull(strstr(c->raw_json, "\"max-size\":\"1m\""));
	ck_assert_str_eq(c->state, "exited");
	ck_assert_int_eq(c->exit_code, 7);
	ck_assert(!c->running);
	ck_assert_str_eq(sbx_docker_label_get(c->labels, c->n_labels, SBX_LABEL_RUN_ID), run_id);
	ck_assert_ptr_nonnull(strstr(c->raw_json, "\"ReadonlyRootfs\":true"));
	ck_assert_ptr_nonnull(strstr(c->raw_json, "\"CapDrop\":[\"ALL\"]"));
	ck_assert_ptr_nonnull(strstr(c->raw_json, "\"PidsLimit\":16"));
	sbx_docker_container_free(c);
	ck_assert_int_eq(sbx_docker_container_remove(d, id, false, true, &err), 0);
	ck_assert_int_eq(sbx_docker_container_remove(d, id, true, true, &err), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err.msg, "HTTP 404"));
	ck_assert_int_eq(sbx_docker_container_inspect(d, id, &c, NULL), -ENOENT);
	sbx_buf_free(&out);
	sbx_buf_free(&errout);
	sbx_buf_free(&head);
	sbx_buf_free(&tail);
	free(id);
	sbx_docker_free(d);
}
END_TEST

START_TEST(wait_deadline_then_kill)
{
	sbx_docker *d = connect_engine();
	sbx_error err = SBX_ERROR_INIT;
	struct timespec t0;
	char *id = running_sleeper(d, true);
	int code = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(sbx_docker_container_wait(d, id, 500, &code, &err), -ETIME);
	ck_assert_int_lt(ms_since(&t0), 3000);
	ck_assert_ptr_nonnull(strstr(err.msg, "still running after 500 ms"));
	/* The handle is still usable after a timed-out request. */
	ck_assert_int_eq(sbx_docker_container_kill(d, id, NULL, &err), 0);
	sbx_error_clear(&err);
	ck_assert_msg(sbx_docker_container_wait(d, id, 10000, &code, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(code, 137);
	ck_assert_int_eq(sbx_docker_container_kill(d, id, NULL, &err), -EBUSY);
	ck_assert_int_eq(sbx_docker_container_remove(d, id, true, true, NULL), 0);
	free(id);
	sbx_docker_free(d);
}
END_TEST

START_TEST(exec_attached_output_and_exit_code)
{
	sbx_docker *d = connect_engine();
	sbx_buf out = SBX_BUF_INIT(1 << 20);
	char *id = running_sleeper(d, true);

	run_in(d, id, "echo hi; echo e >&2; exit 3", 3, &out);
	ck_assert_str_eq(sbx_buf_str(&out), "hi\n");
	sbx_buf_reset(&out);
	/* More output than one frame or one read. */
	run_in(d, id, "dd if=/dev/zero bs=1024 count=300 2>/dev/null | wc -c", 0, &out);
	ck_assert_str_eq(sbx_buf_str(&out), "307200\n");
	sbx_buf_free(&out);
	free(id);
	sbx_docker_free(d);
}
END_TEST

static void add_cases(Suite *s)
{
	TCase *tc = SBX_TEST_CASE(s, "engine", NULL, NULL, 120, engine_facts,
				  create_start_wait_logs_remove, wait_deadline_then_kill,
				  exec_attached_output_and_exit_code);

	docker_io_tests(tc);
	docker_build_tests(tc);
	tcase_add_unchecked_fixture(tc, global_setup, remove_run_containers);
}

/* After the run: nothing of ours may be left. */
static int leftovers(void)
{
	const char *filters[] = {run_label, NULL};
	sbx_docker_container *cs = NULL;
	sbx_error err = SBX_ERROR_INIT;
	sbx_docker *d = NULL;
	size_t n = 0;

	if (sbx_docker_open(&d, NULL, &err) < 0 ||
	    sbx_docker_container_list(d, filters, &cs, &n, &err) < 0) {
		fprintf(stderr, "leftover check failed: %s\n", err.msg);
		sbx_docker_free(d);
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "left behind: container %s\n", cs[i].id);
	sbx_docker_container_list_free(cs, n);
	sbx_docker_free(d);
	return n ? 1 : 0;
}

int main(void)
{
	int rc;

	snprintf(run_id, sizeof(run_id), "itest-%d-%ld", (int)getpid(), (long)time(NULL));
	snprintf(run_label, sizeof(run_label), "%s=%s", SBX_LABEL_RUN_ID, run_id);
	rc = sbx_test_run(sbx_test_suite("docker-integration", add_cases));
	return rc != EXIT_SUCCESS || leftovers() ? EXIT_FAILURE : EXIT_SUCCESS;
}

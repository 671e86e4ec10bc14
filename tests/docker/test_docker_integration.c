/* SPDX-License-Identifier: MIT */
/*
 * The Docker client against the machine's REAL engine. The tests make their
 * own tiny image (Debian's static busybox imported through the client) when
 * it is missing, label everything sandboxctl.test=1 plus a per-run id, and an
 * unchecked fixture (in the parent process, so it runs even when a test
 * fails or times out) removes every container of the run.
 */
#include "check_main.h"
#include "test_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sbx/sbx.h"
#include "sbx/docker_stream.h"
#include "testimage.h"

static char run_id[64];
static char run_label[128];

static sbx_docker *connect_engine(void)
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
static char *make_container(sbx_docker *d, sbx_docker_container_opts *o, const char **cmd)
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

static char *running_sleeper(sbx_docker *d, bool hardened)
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

static long ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

static void run_in(sbx_docker *d, const char *id, const char *script, int want_code, sbx_buf *out)
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

START_TEST(archive_put_and_get)
{
	sbx_docker *d = connect_engine();
	sbx_docker_tar *t = NULL;
	sbx_error err = SBX_ERROR_INIT;
	sbx_buf out = SBX_BUF_INIT(4096);
	char dir[] = "/tmp/sbx-itest-get.XXXXXX", path[128];
	const void *data;
	void *raw = NULL;
	size_t len, raw_len = 0;
	char *id = running_sleeper(d, false);

	ck_assert_int_eq(sbx_docker_tar_new(&t, 0, &err), 0);
	ck_assert_int_eq(sbx_docker_tar_add_dir(t, "in", 0755, 1000, 1000, &err), 0);
	ck_assert_int_eq(sbx_docker_tar_add_file(t, "in/a.csv", "1,2\n", 4, 0644, 1000, 1000, &err),
			 0);
	ck_assert_int_eq(sbx_docker_tar_finish(t, &data, &len, &err), 0);
	ck_assert_msg(sbx_docker_archive_put(d, id, "/work", data, len, &err) == 0, "%s", err.msg);
	sbx_docker_tar_free(t);
	ck_assert_int_eq(sbx_docker_archive_put(d, id, "/nope", "", 0, &err), -ENOENT);
	sbx_error_clear(&err);
	run_in(d, id, "cat /work/in/a.csv; stat -c %u /work/in/a.csv", 0, &out);
	ck_assert_str_eq(sbx_buf_str(&out), "1,2\n1000\n");

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_msg(sbx_docker_archive_get(d, id, "/work/in", dir, NULL, NULL, &err) == 0, "%s",
		      err.msg);
	sbx_test_assert_file(dir, "in/a.csv", "1,2\n");
	snprintf(path, sizeof(path), "%s/in/a.csv", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/in", dir);
	rmdir(path);
	rmdir(dir);
	ck_assert_int_eq(sbx_docker_archive_get(d, id, "/no/such", "/tmp", NULL, NULL, &err),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(err.msg, "HTTP 404"));
	ck_assert_int_eq(
		sbx_docker_archive_get_raw(d, id, "/work/in/a.csv", 0, &raw, &raw_len, NULL), 0);
	ck_assert_uint_eq(raw_len % 512, 0);
	ck_assert_ptr_nonnull(memmem(raw, raw_len, "1,2\n", 4));
	free(raw);
	sbx_buf_free(&out);
	free(id);
	sbx_docker_free(d);
}
END_TEST

START_TEST(copy_through_exec_on_readonly_rootfs_and_tmpfs)
{
	sbx_docker *d = connect_engine();
	sbx_docker_tar *t = NULL;
	sbx_error err = SBX_ERROR_INIT;
	sbx_buf out = SBX_BUF_INIT(4096);
	sbx_docker_extract_stats st;
	char dir[] = "/tmp/sbx-itest-cp.XXXXXX", path[128];
	const void *data;
	size_t len;
	char *id = running_sleeper(d, true);
	int r;

	ck_assert_int_eq(sbx_docker_tar_new(&t, 0, &err), 0);
	ck_assert_int_eq(sbx_docker_tar_add_file(t, "task.csv", "x,y\n", 4, 0644, 1000, 1000, &err),
			 0);
	ck_assert_int_eq(sbx_docker_tar_finish(t, &data, &len, &err), 0);
	/* The archive endpoint cannot write there (read-only rootfs, tmpfs unseen) ... */
	ck_assert_int_lt(sbx_docker_archive_put(d, id, "/work", data, len, &err), 0);
	sbx_error_clear(&err);
	/* ... the exec'd tar can. */
	ck_assert_msg(sbx_docker_exec_copy_in(d, id, "/work", NULL, data, len, 20000, &err) == 0,
		      "%s", err.msg);
	sbx_docker_tar_free(t);
	run_in(d, id, "cat /work/task.csv && echo result > /work/out.txt", 0, &out);
	ck_assert_str_eq(sbx_buf_str(&out), "x,y\n");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_msg(sbx_docker_exec_copy_out(d, id, "/work/out.txt", NULL, dir, NULL, &st, 20000,
					       &err) == 0,
		      "%s", err.msg);
	ck_assert_uint_eq(st.extracted, 1);
	sbx_test_assert_file(dir, "out.txt", "result\n");
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	unlink(path);
	sbx_error_clear(&err);
	r = sbx_docker_exec_copy_out(d, id, "/work/none", NULL, dir, NULL, NULL, 20000, &err);
	ck_assert_msg(r == -EIO && strstr(err.msg, "tar exited with") &&
			      strstr(err.msg, "No such file"),
		      "%d %s", r, err.msg);
	rmdir(dir);
	sbx_buf_free(&out);
	free(id);
	sbx_docker_free(d);
}
END_TEST

/* The exec'd copies through a tar the handle names (the any-image bundle's), and named volumes. */
START_TEST(a_tar_of_our_own_and_volumes)
{
	sbx_docker *d = connect_engine();
	sbx_docker_tar *t = NULL;
	sbx_error err = SBX_ERROR_INIT;
	sbx_buf out = SBX_BUF_INIT(4096);
	sbx_docker_kv label = {"sandboxctl.test", "volume"}, *labels = NULL;
	char vol[64], **names = NULL;
	const void *data;
	size_t len, n = 0;
	bool listed = false;
	char *id = running_sleeper(d, true);

	ck_assert_int_eq(sbx_docker_set_tar(d,
					    (const char *const[]){"1", "2", "3", "4", "5", "6", "7",
								  "8", NULL},
					    &err),
			 -E2BIG);
	ck_assert_int_eq(sbx_docker_tar_new(&t, 0, &err), 0);
	ck_assert_int_eq(sbx_docker_tar_add_file(t, "in.txt", "own\n", 4, 0644, 1000, 1000, &err),
			 0);
	ck_assert_int_eq(sbx_docker_tar_finish(t, &data, &len, &err), 0);
	/* A tar that is not there: the copy fails, it does not fall back to the image's. */
	ck_assert_int_eq(
		sbx_docker_set_tar(d, (const char *const[]){"/nonexistent/tar", NULL}, &err), 0);
	ck_assert_int_lt(sbx_docker_exec_copy_in(d, id, "/work", NULL, data, len, 20000, &err), 0);
	sbx_error_clear(&err);
	ck_assert_int_eq(
		sbx_docker_set_tar(d, (const char *const[]){"/bin/busybox", "tar", NULL}, &err), 0);
	ck_assert_msg(sbx_docker_exec_copy_in(d, id, "/work", NULL, data, len, 20000, &err) == 0,
		      "%s", err.msg);
	sbx_docker_tar_free(t);
	run_in(d, id, "cat /work/in.txt", 0, &out);
	ck_assert_str_eq(sbx_buf_str(&out), "own\n");
	ck_assert_int_eq(sbx_docker_set_tar(d, NULL, &err), 0);

	snprintf(vol, sizeof(vol), "sbx-itest-vol-%d", (int)getpid());
	ck_assert_msg(sbx_docker_volume_create(d, vol, &label, 1, &err) == 0, "%s", err.msg);
	ck_assert_msg(sbx_docker_volume_labels(d, vol, &labels, &n, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(sbx_docker_label_get(labels, n, "sandboxctl.test"), "volume");
	sbx_docker_volume_labels_free(labels, n);
	ck_assert_msg(sbx_docker_volume_names(d, "sbx-itest-vol-", &names, &err) == 0, "%s",
		      err.msg);
	for (char **v = names; *v; v++) {
		ck_assert_int_eq(strncmp(*v, "sbx-itest-vol-", 14), 0);
		listed |= strcmp(*v, vol) == 0;
	}
	sbx_strv_free(names);
	ck_assert(listed);
	ck_assert_msg(sbx_docker_volume_remove(d, vol, false, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(sbx_docker_volume_labels(d, vol, &labels, &n, NULL), -ENOENT);
	ck_assert_int_lt(sbx_docker_volume_create(d, "../containers/x", NULL, 0, &err), 0);
	sbx_buf_free(&out);
	free(id);
	sbx_docker_free(d);
}
END_TEST

/* Reads s to its end, stdout into out and stderr into errs (timeout_ms a read). */
static void read_to_end(sbx_docker_stream *s, sbx_buf *out, sbx_buf *errs, int timeout_ms)
{
	sbx_error err = SBX_ERROR_INIT;
	char buf[256];
	int which;
	ssize_t n;

	while ((n = sbx_docker_stream_read(s, buf, sizeof(buf), &which, timeout_ms, &err)) > 0)
		sbx_buf_append(which == SBX_DOCKER_STDERR ? errs : out, buf, (size_t)n);
	ck_assert_msg(n == 0, "%s", err.msg);
}

START_TEST(hijacked_stream_both_ways)
{
	const char *cmd[] = {"sh", "-c", "cat; echo bye >&2", NULL};
	sbx_docker_exec_opts o = SBX_DOCKER_EXEC_OPTS_INIT;
	sbx_docker *d = connect_engine();
	sbx_docker_stream *s = NULL;
	sbx_error err = SBX_ERROR_INIT;
	sbx_buf got = SBX_BUF_INIT(4096), errs = SBX_BUF_INIT(4096);
	char *id = running_sleeper(d, true), *exec_id = NULL, buf[256];
	struct timespec t0;
	int which, code = -1;
	ssize_t n;

	o.cmd = cmd;
	o.attach_stdin = true;
	ck_assert_int_eq(sbx_docker_exec_create(d, id, &o, &exec_id, &err), 0);
	ck_assert_msg(sbx_docker_stream_open_exec(d, exec_id, false, &s, &err) == 0, "%s", err.msg);
	ck_assert_int_ge(sbx_docker_stream_fd(s), 0);
	/* Nothing yet: a zero timeout does not block. */
	ck_assert_int_eq(sbx_docker_stream_read(s, buf, sizeof(buf), &which, 0, &err), -EAGAIN);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(sbx_docker_stream_read(s, buf, sizeof(buf), &which, 200, &err),
			 -ETIMEDOUT);
	ck_assert_int_lt(ms_since(&t0), 1500);
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_docker_stream_write(s, "{\"jsonrpc\":\"2.0\"}\n", 18, 2000, &err), 0);
	while (got.len < 18) {
		n = sbx_docker_stream_read(s, buf, sizeof(buf), &which, 5000, &err);
		ck_assert_msg(n > 0, "read: %zd %s", n, err.msg);
		ck_assert_int_eq(which, SBX_DOCKER_STDOUT);
		sbx_buf_append(&got, buf, (size_t)n);
	}
	ck_assert_str_eq(sbx_buf_str(&got), "{\"jsonrpc\":\"2.0\"}\n");
	ck_assert_int_eq(sbx_docker_stream_write(s, "second\n", 7, 2000, &err), 0);
	ck_assert_int_eq(sbx_docker_stream_close_write(s, &err), 0);
	read_to_end(s, &got, &errs, 5000);
	ck_assert_str_eq(sbx_buf_str(&got), "{\"jsonrpc\":\"2.0\"}\nsecond\n");
	ck_assert_str_eq(sbx_buf_str(&errs), "bye\n");
	sbx_docker_stream_free(s);
	for (int i = 0; i < 50; i++) {
		bool running = true;
		ck_assert_int_eq(sbx_docker_exec_inspect(d, exec_id, &running, &code, &err), 0);
		if (!running)
			break;
		usleep(20000);
	}
	ck_assert_int_eq(code, 0);
	sbx_buf_free(&got);
	sbx_buf_free(&errs);
	free(exec_id);
	free(id);
	sbx_docker_free(d);
}
END_TEST

/* The container's own stdio (attach before start), as a relay to PID 1 would use it. */
START_TEST(attach_to_the_main_process)
{
	const char *cmd[] = {"sh", "-c", "read line; echo \"got $line\"; echo done >&2", NULL};
	sbx_docker_container_opts o = SBX_DOCKER_CONTAINER_OPTS_INIT;
	sbx_docker *d = connect_engine();
	sbx_docker_stream *s = NULL;
	sbx_error err = SBX_ERROR_INIT;
	sbx_buf out = SBX_BUF_INIT(4096), errs = SBX_BUF_INIT(4096);
	int code = -1;
	char *id;

	o.open_stdin = true;
	o.stdin_once = true;
	o.network_mode = "none";
	o.user = "1000:1000";
	id = make_container(d, &o, cmd);
	ck_assert_msg(sbx_docker_stream_open_attach(d, id, false, &s, &err) == 0, "%s", err.msg);
	ck_assert_msg(sbx_docker_container_start(d, id, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(sbx_docker_stream_write(s, "ping\n", 5, 2000, &err), 0);
	read_to_end(s, &out, &errs, 10000);
	ck_assert_str_eq(sbx_buf_str(&out), "got ping\n");
	ck_assert_str_eq(sbx_buf_str(&errs), "done\n");
	sbx_docker_stream_free(s);
	ck_assert_int_eq(sbx_docker_container_wait(d, id, 10000, &code, &err), 0);
	ck_assert_int_eq(code, 0);
	ck_assert_int_eq(sbx_docker_container_remove(d, id, true, true, &err), 0);
	sbx_buf_free(&out);
	sbx_buf_free(&errs);
	free(id);
	sbx_docker_free(d);
}
END_TEST

typedef struct names {
	char list[2048];
} names;

static void note_refused(const char *entry, const char *reason, void *payload)
{
	names *nm = payload;
	size_t l = strlen(nm->list);

	snprintf(nm->list + l, sizeof(nm->list) - l, "%s|", entry);
}

static void rm_tree(const char *path)
{
	/* Test-only cleanup of a directory the test made under /tmp. */
	ck_assert(strncmp(path, "/tmp/sbx-itest-", 15) == 0);
	ck_assert_int_eq(sbx_path_remove_tree_at(AT_FDCWD, path), 0);
}

START_TEST(hostile_tar_from_a_container_is_refused)
{
	sbx_docker *d = connect_engine();
	sbx_docker_extract_opts o = SBX_DOCKER_EXTRACT_OPTS_INIT;
	sbx_docker_extract_stats st;
	sbx_error err = SBX_ERROR_INIT;
	char tmp[] = "/tmp/sbx-itest-hostile.XXXXXX", target[128], path[192];
	char *id = running_sleeper(d, false);
	names nm = {{0}};
	struct timespec t0;
	struct stat s;

	/* Things the engine itself will serve: built in the container. */
	run_in(d, id,
	       "mkdir -p /out/sub && echo good > /out/good.txt && ln -s /etc/passwd /out/abs && "
	       "ln -s ../../../../../etc /out/up && mknod /out/null c 1 3 && mkfifo /out/fifo && "
	       "ln /out/good.txt /out/hard && echo s > /out/sub/s && truncate -s 2G /out/zz-big",
	       0, NULL);
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(target, sizeof(target), "%s/target", tmp);
	ck_assert_int_eq(mkdir(target, 0755), 0);
	o.strip_components = 1;
	o.refused = note_refused;
	o.refused_payload = &nm;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(sbx_docker_archive_get(d, id, "/out", target, &o, &st, &err), -EFBIG);
	/* Stopped at the 2 GB entry's header, not after downloading it. */
	ck_assert_int_lt(ms_since(&t0), 10000);
	ck_assert_msg(strstr(err.msg, "'zz-big': 2147483648 bytes"), "%s", err.msg);
	ck_assert_msg(strstr(nm.list, "abs|") && strstr(nm.list, "up|") &&
			      strstr(nm.list, "null|") && strstr(nm.list, "fifo|"),
		      "refused: %s", nm.list);
	snprintf(path, sizeof(path), "%s/good.txt", target);
	ck_assert_int_eq(stat(path, &s), 0);
	snprintf(path, sizeof(path), "%s/hard", target);
	ck_assert_int_eq(lstat(path, &s), 0);
	ck_assert(S_ISREG(s.st_mode));
	snprintf(path, sizeof(path), "%s/sub/s", target);
	ck_assert_int_eq(stat(path, &s), 0);
	snprintf(path, sizeof(path), "%s/abs", target);
	ck_assert_int_ne(lstat(path, &s), 0);
	snprintf(path, sizeof(path), "%s/null", target);
	ck_assert_int_ne(lstat(path, &s), 0);
	snprintf(path, sizeof(path), "%s/zz-big", target);
	ck_assert_int_ne(lstat(path, &s), 0);
	sbx_test_assert_only(tmp, "target");
	rm_tree(tmp);
	sbx_docker_container_remove(d, id, true, true, NULL);
	free(id);
	sbx_docker_free(d);
}
END_TEST

/* A tar no engine would make (crafted names), copied in and served back by the container. */
START_TEST(crafted_tar_served_back_by_a_container)
{
	const char *cat[] = {"cat", "/work/evil.tar", NULL};
	sbx_docker_exec_opts eo = SBX_DOCKER_EXEC_OPTS_INIT;
	sbx_docker *d = connect_engine();
	sbx_docker_tar *outer = NULL;
	sbx_error err = SBX_ERROR_INIT;
	sbx_buf evil = SBX_BUF_INIT(1 << 20), back = SBX_BUF_INIT(1 << 20);
	char tmp[] = "/tmp/sbx-itest-crafted.XXXXXX", target[128];
	char *id = running_sleeper(d, false);
	names nm = {{0}};
	sbx_docker_extract_opts o = SBX_DOCKER_EXTRACT_OPTS_INIT;
	sbx_docker_extract_stats st;
	const void *data;
	size_t len;
	int code = -1, tfd;

	/* A raw ustar: the tar writer (rightly) refuses such names. */
	{
		struct {
			const char *name, *link;
			char type;
			const char *data;
		} spec[] = {
			{"../../x", NULL, '0', "escape"},
			{"/tmp/sbx-itest-abs", NULL, '0', "absolute"},
			{"l", "/tmp", '2', NULL},
			{"l/through", NULL, '0', "via link"},
			{"dev", NULL, '3', NULL},
			{"fine.txt", NULL, '0', "fine"},
		};
		const void *idata;
		size_t ilen;

		for (size_t i = 0; i < SBX_ELEMENTSOF(spec); i++) {
			unsigned char h[512] = {0};
			size_t dl = spec[i].data ? strlen(spec[i].data) : 0;
			unsigned sum = 0;
			char tmpf[32];

			memcpy(h, spec[i].name, strlen(spec[i].name));
			memcpy(h + 100, "0000644", 7);
			memcpy(h + 108, "0000000", 7);
			memcpy(h + 116, "0000000", 7);
			snprintf(tmpf, sizeof(tmpf), "%011zo", dl);
			memcpy(h + 124, tmpf, 11);
			memcpy(h + 136, "14000000000", 11);
			memset(h + 148, ' ', 8);
			h[156] = (unsigned char)spec[i].type;
			if (spec[i].link)
				memcpy(h + 157, spec[i].link, strlen(spec[i].link));
			memcpy(h + 257, "ustar", 6);
			memcpy(h + 263, "00", 2);
			for (size_t k = 0; k < 512; k++)
				sum += h[k];
			snprintf(tmpf, sizeof(tmpf), "%06o", sum);
			memcpy(h + 148, tmpf, 7);
			sbx_buf_append(&evil, h, 512);
			if (dl) {
				static const char zeros[512];
				sbx_buf_append(&evil, spec[i].data, dl);
				sbx_buf_append(&evil, zeros, 512 - dl);
			}
		}
		{
			static const char zeros[1024];
			sbx_buf_append(&evil, zeros, sizeof(zeros));
		}
		idata = evil.data;
		ilen = evil.len;
		ck_assert_int_eq(sbx_docker_tar_new(&outer, 0, &err), 0);
		ck_assert_int_eq(
			sbx_docker_tar_add_file(outer, "evil.tar", idata, ilen, 0644, 0, 0, &err),
			0);
		ck_assert_int_eq(sbx_docker_tar_finish(outer, &data, &len, &err), 0);
	}
	ck_assert_msg(sbx_docker_archive_put(d, id, "/work", data, len, &err) == 0, "%s", err.msg);
	sbx_docker_tar_free(outer);
	eo.cmd = cat;
	ck_assert_msg(sbx_docker_exec_run(d, id, &eo, 20000, &back, NULL, &code, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(code, 0);
	ck_assert_uint_eq(back.len, evil.len);

	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(target, sizeof(target), "%s/target", tmp);
	ck_assert_int_eq(mkdir(target, 0755), 0);
	tfd = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	o.refused = note_refused;
	o.refused_payload = &nm;
	ck_assert_int_eq(sbx_docker_tar_extract(back.data, back.len, tfd, &o, &st, &err), -EPERM);
	close(tfd);
	ck_assert_str_eq(nm.list, "../../x|/tmp/sbx-itest-abs|l|l/through|dev|");
	ck_assert_ptr_nonnull(strstr(err.msg, "5 of 6 entries refused"));
	ck_assert_uint_eq(st.extracted, 1);
	ck_assert_int_ne(access("/tmp/sbx-itest-abs", F_OK), 0);
	ck_assert_int_ne(access("/tmp/through", F_OK), 0);
	sbx_test_assert_only(tmp, "target");
	rm_tree(tmp);
	sbx_buf_free(&evil);
	sbx_buf_free(&back);
	free(id);
	sbx_docker_free(d);
}
END_TEST

/* A build context holding only dockerfile, set as b's; free it once built. */
static sbx_docker_tar *dockerfile_context(const char *dockerfile, sbx_docker_build_opts *b)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_docker_tar *ctx = NULL;

	ck_assert_int_eq(sbx_docker_tar_new(&ctx, 0, &err), 0);
	ck_assert_int_eq(sbx_docker_tar_add_file(ctx, "Dockerfile", dockerfile, strlen(dockerfile),
						 0644, 0, 0, &err),
			 0);
	ck_assert_int_eq(sbx_docker_tar_finish(ctx, &b->context_tar, &b->context_tar_len, &err), 0);
	return ctx;
}

START_TEST(images_tag_list_remove_build)
{
	const char *filters[] = {SBX_LABEL_TEST "=1", NULL};
	const char *tags[] = {"sandboxctl-test/built:"
			      "latest",
			      NULL};
	sbx_docker_kv labels[] = {{SBX_LABEL_TEST, "1"}};
	sbx_docker_build_opts b = SBX_DOCKER_BUILD_OPTS_INIT;
	sbx_docker *d = connect_engine();
	sbx_docker_image *imgs = NULL, *img = NULL;
	sbx_docker_tar *ctx = NULL;
	sbx_error err = SBX_ERROR_INIT;
	char tag[64], *built = NULL;
	const char *df;
	size_t n = 0;
	bool found = false;

	snprintf(tag, sizeof(tag), "t%d", (int)getpid());
	ck_assert_int_eq(
		sbx_docker_image_tag(d, SBX_TEST_IMAGE, "sandboxctl-test/busybox", tag, &err), 0);
	ck_assert_int_eq(sbx_docker_image_list(d, filters, &imgs, &n, &err), 0);
	for (size_t i = 0; i < n; i++)
		for (char **t = imgs[i].repo_tags; *t; t++)
			if (strstr(*t, tag))
				found = true;
	ck_assert(found);
	sbx_docker_image_list_free(imgs, n);
	{
		char full[128];
		snprintf(full, sizeof(full), "sandboxctl-test/busybox:%s", tag);
		ck_assert_int_eq(sbx_docker_image_remove(d, full, false, &err), 0);
		ck_assert_int_eq(sbx_docker_image_inspect(d, full, &img, NULL), -ENOENT);
	}

	/* Build from an in-memory context, with streamed progress. */
	df = "FROM " SBX_TEST_IMAGE "\nRUN echo built > /built\n";
	ctx = dockerfile_context(df, &b);
	b.tags = tags;
	b.labels = labels;
	b.n_labels = 1;
	b.network_mode = "none";
	ck_assert_msg(sbx_docker_image_build(d, &b, &built, &err) == 0, "%s", err.msg);
	ck_assert(strncmp(built, "sha256:", 7) == 0);
	ck_assert_int_eq(sbx_docker_image_inspect(d, tags[0], &img, &err), 0);
	ck_assert_str_eq(img->id, built);
	ck_assert_str_eq(sbx_docker_label_get(img->labels, img->n_labels, SBX_LABEL_TEST), "1");
	sbx_docker_image_free(img);
	ck_assert_int_eq(sbx_docker_image_remove(d, tags[0], true, &err), 0);
	sbx_docker_tar_free(ctx);
	free(built);
	built = NULL;

	/* A failing step surfaces the engine's errorDetail. */
	df = "FROM " SBX_TEST_IMAGE "\nRUN exit 3\n";
	ctx = dockerfile_context(df, &b);
	b.tags = NULL;
	ck_assert_int_eq(sbx_docker_image_build(d, &b, &built, &err), -EIO);
	ck_assert_msg(strstr(err.msg, "returned a non-zero code: 3"), "%s", err.msg);
	ck_assert_ptr_null(built);
	sbx_docker_tar_free(ctx);
	sbx_docker_free(d);
}
END_TEST

/* Progress callbacks see the build output. */
static int count_lines(const sbx_docker_progress *p, void *payload)
{
	if (p->stream)
		(*(int *)payload)++;
	return 0;
}

START_TEST(build_progress_from_a_directory)
{
	const char *tags[] = {"sandboxctl-test/ctxdir:latest", NULL};
	sbx_docker_kv labels[] = {{SBX_LABEL_TEST, "1"}};
	sbx_docker_build_opts b = SBX_DOCKER_BUILD_OPTS_INIT;
	sbx_docker *d = connect_engine();
	sbx_error err = SBX_ERROR_INIT;
	char dir[] = "/tmp/sbx-itest-ctx.XXXXXX", path[128];
	const char *df = "FROM " SBX_TEST_IMAGE "\nCOPY hello.txt /hello.txt\n";
	int lines = 0;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/Dockerfile", dir);
	f = fopen(path, "we");
	fputs(df, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/hello.txt", dir);
	f = fopen(path, "we");
	fputs("hello\n", f);
	fclose(f);
	b.context_dir = dir;
	b.tags = tags;
	b.labels = labels;
	b.n_labels = 1;
	b.progress = count_lines;
	b.progress_payload = &lines;
	ck_assert_msg(sbx_docker_image_build(d, &b, NULL, &err) == 0, "%s", err.msg);
	ck_assert_int_ge(lines, 2);
	ck_assert_int_eq(sbx_docker_image_remove(d, tags[0], true, &err), 0);
	rm_tree(dir);
	sbx_docker_free(d);
}
END_TEST

static void add_cases(Suite *s)
{
	TCase *tc = SBX_TEST_CASE(
		s, "engine", NULL, NULL, 120, engine_facts, create_start_wait_logs_remove,
		wait_deadline_then_kill, exec_attached_output_and_exit_code, archive_put_and_get,
		copy_through_exec_on_readonly_rootfs_and_tmpfs, a_tar_of_our_own_and_volumes,
		hijacked_stream_both_ways, attach_to_the_main_process,
		hostile_tar_from_a_container_is_refused, crafted_tar_served_back_by_a_container,
		images_tag_list_remove_build, build_progress_from_a_directory);

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

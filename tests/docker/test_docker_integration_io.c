/* SPDX-License-Identifier: MIT */
/* Files in and out of containers (archives, exec on a read-only root, tars of our own) and attached
 * streams. */
#include "test_docker_integration.h"

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

void docker_io_tests(TCase *tc)
{
	SBX_TEST_ADD(tc, archive_put_and_get, copy_through_exec_on_readonly_rootfs_and_tmpfs,
		     a_tar_of_our_own_and_volumes, hijacked_stream_both_ways,
		     attach_to_the_main_process);
}

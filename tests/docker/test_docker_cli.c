/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl doctor / ps / gc, run as a user would. argv[1] is the
 * sandboxctl binary, argv[2] "unit" (no engine needed) or "integration".
 */
#include "check_main.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sbx/sbx.h"
#include "testimage.h"

static const char *sandboxctl;
static char run_id[64];

typedef struct result {
	int status;
	sbx_buf out, err;
	long ms;
} result;

static void result_free(result *r)
{
	sbx_buf_free(&r->out);
	sbx_buf_free(&r->err);
}

static void drain(int fd, sbx_buf *b)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(sbx_buf_append(b, buf, (size_t)n), 0);
}

/*
 * Runs sandboxctl with args (NULL-terminated), behind wrapper (a NULL-terminated
 * command prefix such as setpriv, or NULL); docker_host NULL keeps the environment's.
 */
static result run_as(const char *const *wrapper, const char *docker_host, const char *const *args)
{
	result r = {0, SBX_BUF_INIT(1 << 20), SBX_BUF_INIT(1 << 20), 0};
	char outp[] = "/tmp/sbx-cli-out.XXXXXX", errp[] = "/tmp/sbx-cli-err.XXXXXX";
	int out = mkostemp(outp, O_CLOEXEC), err = mkostemp(errp, O_CLOEXEC);
	struct timespec t0, t1;
	const char *argv[24];
	size_t n = 0;
	pid_t pid;

	ck_assert(out >= 0 && err >= 0);
	unlink(outp);
	unlink(errp);
	for (; wrapper && *wrapper && n < 8; wrapper++)
		argv[n++] = *wrapper;
	argv[n++] = sandboxctl;
	for (; *args && n < 23; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(out, 1);
		dup2(err, 2);
		if (docker_host)
			setenv("DOCKER_HOST", docker_host, 1);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &r.status, 0), pid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r.ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	ck_assert(WIFEXITED(r.status));
	r.status = WEXITSTATUS(r.status);
	lseek(out, 0, SEEK_SET);
	lseek(err, 0, SEEK_SET);
	drain(out, &r.out);
	drain(err, &r.err);
	close(out);
	close(err);
	return r;
}

static result run(const char *docker_host, const char *const *args)
{
	return run_as(NULL, docker_host, args);
}

static int count_lines(const sbx_buf *b)
{
	int n = 0;

	for (size_t i = 0; i < b->len; i++)
		n += b->data[i] == '\n';
	return n;
}

/* ------------------------------------------------------------ unit: no engine */

START_TEST(doctor_without_engine_is_one_line_exit_3)
{
	static const char *const hosts[] = {"unix:///nonexistent/docker.sock", "unix:///dev/null",
					    "tcp://127.0.0.1:1"};
	const char *args[] = {"doctor", NULL};
	const char *json_args[] = {"doctor", "--json", NULL};

	for (size_t i = 0; i < SBX_ELEMENTSOF(hosts); i++) {
		result r = run(hosts[i], args);
		ck_assert_msg(r.status == 3, "%s: exit %d", hosts[i], r.status);
		ck_assert_int_eq(count_lines(&r.err), 1);
		ck_assert_uint_eq(r.out.len, 0);
		ck_assert_ptr_nonnull(strstr(sbx_buf_str(&r.err), "sandboxctl: doctor: engine: "));
		ck_assert_int_lt(r.ms, 5000);
		result_free(&r);
	}
	{
		result r = run(hosts[0], json_args);
		_cleanup_json_ cJSON *j = NULL;

		ck_assert_int_eq(r.status, 3);
		ck_assert_int_eq(count_lines(&r.out), 1);
		ck_assert_int_eq(sbx_json_parse(r.out.data, r.out.len, &j, NULL), 0);
		ck_assert(!sbx_json_get_bool(j, "ok", true));
		ck_assert_str_eq(
			sbx_json_get_string(cJSON_GetArrayItem(sbx_json_get(j, "checks"), 0),
					    "status", ""),
			"fail");
		result_free(&r);
	}
}
END_TEST

/* A socket the caller may not open: as root, drop to nobody with setpriv. */
START_TEST(doctor_on_a_forbidden_socket)
{
	const char *wrapper[] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
				 NULL};
	const char *args[] = {"doctor", NULL};
	char dir[] = "/tmp/sbx-cli-perm.XXXXXX", host[128];
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd;
	result r;

	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0)
		return; /* needs root to drop privileges; nothing to prove otherwise */
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0755), 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/docker.sock", dir);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(chmod(a.sun_path, 0600), 0);
	ck_assert_int_eq(listen(fd, 1), 0);
	snprintf(host, sizeof(host), "unix://%s", a.sun_path);
	r = run_as(wrapper, host, args);
	close(fd);
	unlink(a.sun_path);
	rmdir(dir);
	ck_assert_msg(r.status == 3, "exit %d: %s", r.status, sbx_buf_str(&r.err));
	ck_assert_int_eq(count_lines(&r.err), 1);
	ck_assert_ptr_nonnull(strstr(sbx_buf_str(&r.err), "permission denied on 'unix://"));
	ck_assert_ptr_nonnull(strstr(sbx_buf_str(&r.err), "'docker' group"));
	result_free(&r);
}
END_TEST

START_TEST(help_and_usage_errors)
{
	static const char *const cmds[] = {"doctor", "ps", "gc"};

	for (size_t i = 0; i < SBX_ELEMENTSOF(cmds); i++) {
		const char *args[] = {cmds[i], "--help", NULL};
		const char *bad[] = {cmds[i], "--no-such-option", NULL};
		result r = run("unix:///nonexistent", args);
		ck_assert_int_eq(r.status, 0);
		ck_assert_ptr_nonnull(strstr(sbx_buf_str(&r.out), "Usage: sandboxctl"));
		ck_assert_ptr_nonnull(strstr(sbx_buf_str(&r.out), "Exit status"));
		result_free(&r);
		r = run("unix:///nonexistent", bad);
		ck_assert_int_eq(r.status, 2);
		result_free(&r);
	}
	{
		const char *args[] = {"gc", "--older-than", "5 minutes", NULL};
		result r = run("unix:///nonexistent", args);
		ck_assert_int_eq(r.status, 2);
		ck_assert_ptr_nonnull(strstr(sbx_buf_str(&r.err), "invalid duration '5 minutes'"));
		result_free(&r);
	}
	{
		const char *args[] = {"ps", NULL};
		result r = run("unix:///nonexistent", args);
		ck_assert_int_eq(r.status, 3);
		ck_assert_int_eq(count_lines(&r.err), 1);
		result_free(&r);
	}
}
END_TEST

/* ------------------------------------------------------------ integration */

static void remove_run(void)
{
	char filter[128];

	snprintf(filter, sizeof(filter), "%s=%s", SBX_LABEL_RUN_ID, run_id);
	test_remove_labelled(filter);
}

/* A container that is never started (gc removes created ones too). */
static char *sandbox(sbx_docker *d, const char *owner, const char *task)
{
	char created[32];
	sbx_docker_kv labels[] = {
		{SBX_LABEL_TEST, "1"},	      {SBX_LABEL_RUN_ID, run_id}, {SBX_LABEL_TASK, task},
		{SBX_LABEL_CREATED, created}, {SBX_LABEL_OWNER, owner},
	};
	const char *cmd[] = {"true", NULL};
	sbx_docker_container_opts o = SBX_DOCKER_CONTAINER_OPTS_INIT;
	sbx_error err = SBX_ERROR_INIT;
	char *id = NULL;

	snprintf(created, sizeof(created), "%lld", (long long)time(NULL));
	o.image = SBX_TEST_IMAGE;
	o.cmd = cmd;
	o.labels = labels;
	o.n_labels = SBX_ELEMENTSOF(labels);
	o.network_mode = "none";
	ck_assert_msg(sbx_docker_container_create(d, &o, &id, &err) == 0,
		      "%s (the docker-integration test imports %s)", err.msg, SBX_TEST_IMAGE);
	return id;
}

static bool exists(sbx_docker *d, const char *id)
{
	sbx_docker_container *c = NULL;
	int r = sbx_docker_container_inspect(d, id, &c, NULL);

	sbx_docker_container_free(c);
	ck_assert(r == 0 || r == -ENOENT);
	return r == 0;
}

START_TEST(gc_removes_orphans_and_is_idempotent)
{
	_cleanup_free_ char *self = NULL, *dead = NULL, *elsewhere = NULL;
	const char *dry[] = {"gc", "--run-id", run_id, "--dry-run", NULL};
	const char *gc[] = {"gc", "--run-id", run_id, NULL};
	const char *ps[] = {"ps", "--run-id", run_id, "--json", NULL};
	const char *old[] = {"gc", "--run-id", run_id, "--older-than", "0s", "--json", NULL};
	sbx_docker *d = NULL;
	char host[256], *orphan, *alive, *remote;
	_cleanup_json_ cJSON *j = NULL;
	result r;
	pid_t pid;

	ck_assert_int_eq(sbx_docker_open(&d, NULL, NULL), 0);
	test_image_ensure(d);
	/* A pid that just died: its owner string names a gone process. */
	pid = fork();
	if (pid == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	gethostname(host, sizeof(host));
	ck_assert_int_ge(asprintf(&dead, "%s:%d:12345", host, (int)pid), 0);
	ck_assert_int_eq(sbx_label_owner_self(&self, NULL), 0);
	ck_assert_int_ge(asprintf(&elsewhere, "not-%s:1:1", host), 0);
	orphan = sandbox(d, dead, "orphan_task");
	alive = sandbox(d, self, "alive_task");
	remote = sandbox(d, elsewhere, "remote_task");

	r = run(NULL, dry);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(count_lines(&r.out), 1);
	ck_assert_msg(strstr(sbx_buf_str(&r.out), "would remove") &&
			      strstr(sbx_buf_str(&r.out), "orphan_task") &&
			      strstr(sbx_buf_str(&r.out), "(owner gone)"),
		      "%s", sbx_buf_str(&r.out));
	result_free(&r);
	ck_assert(exists(d, orphan));

	r = run(NULL, gc);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(sbx_buf_str(&r.out), "removed"));
	result_free(&r);
	ck_assert(!exists(d, orphan));
	ck_assert(exists(d, alive));
	ck_assert(exists(d, remote));
	/* Again: nothing to do, still success. */
	r = run(NULL, gc);
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(r.out.len, 0);
	result_free(&r);

	r = run(NULL, ps);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(sbx_json_parse(r.out.data, r.out.len, &j, NULL), 0);
	ck_assert_int_eq(cJSON_GetArraySize(j), 2);
	for (int i = 0; i < 2; i++) {
		const cJSON *o = cJSON_GetArrayItem(j, i);
		const char *task = sbx_json_get_string(o, "task", "");
		ck_assert_str_eq(sbx_json_get_string(o, "run_id", ""), run_id);
		ck_assert_str_eq(sbx_json_get_string(o, "state", ""), "created");
		ck_assert_str_eq(sbx_json_get_string(o, "owner_state", ""),
				 strcmp(task, "alive_task") == 0 ? "alive" : "other host");
		ck_assert_double_le(sbx_json_get_number(o, "age_seconds", -1), 60);
	}
	cJSON_Delete(j);
	j = NULL;
	result_free(&r);

	r = run(NULL, old);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(sbx_json_parse(r.out.data, r.out.len, &j, NULL), 0);
	ck_assert_int_eq(cJSON_GetArraySize(j), 2);
	ck_assert(sbx_json_get_bool(cJSON_GetArrayItem(j, 0), "removed", false));
	ck_assert_str_eq(sbx_json_get_string(cJSON_GetArrayItem(j, 0), "reason", ""),
			 "older than the limit");
	result_free(&r);
	ck_assert(!exists(d, alive));
	ck_assert(!exists(d, remote));
	free(orphan);
	free(alive);
	free(remote);
	sbx_docker_free(d);
}
END_TEST

START_TEST(doctor_on_the_real_engine)
{
	const char *args[] = {"doctor", "--json", NULL};
	_cleanup_json_ cJSON *j = NULL;
	const cJSON *c;
	result r = run(NULL, args);
	bool engine_ok = false;

	ck_assert_msg(r.status == 0 || r.status == 3, "exit %d", r.status);
	ck_assert_int_eq(sbx_json_parse(r.out.data, r.out.len, &j, NULL), 0);
	ck_assert_str_ne(sbx_json_get_string(sbx_json_get(j, "engine"), "api_version", ""), "");
	ck_assert_str_ne(sbx_json_get_string(sbx_json_get(j, "engine"), "storage_driver", ""), "");
	cJSON_ArrayForEach (c, sbx_json_get(j, "checks")) {
		const char *status = sbx_json_get_string(c, "status", "");
		if (strcmp(sbx_json_get_string(c, "name", ""), "engine") == 0)
			engine_ok = strcmp(status, "ok") == 0;
		/* Every failed check says how to fix it. */
		if (strcmp(status, "ok") != 0)
			ck_assert_str_ne(sbx_json_get_string(c, "fix", ""), "");
	}
	ck_assert(engine_ok);
	ck_assert_int_eq(sbx_json_get_bool(j, "ok", false), r.status == 0);
	result_free(&r);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s;
	TCase *tc;

	if (argc < 3) {
		fprintf(stderr, "usage: %s SANDBOXCTL unit|integration\n", argv[0]);
		return 2;
	}
	sandboxctl = argv[1];
	snprintf(run_id, sizeof(run_id), "clitest-%d-%ld", (int)getpid(), (long)time(NULL));
	s = suite_create("docker-cli");
	if (strcmp(argv[2], "unit") == 0) {
		SBX_TEST_CASE(s, argv[2], NULL, NULL, 60, doctor_without_engine_is_one_line_exit_3,
			      doctor_on_a_forbidden_socket, help_and_usage_errors);
	} else {
		tc = SBX_TEST_CASE(s, argv[2], NULL, NULL, 60, gc_removes_orphans_and_is_idempotent,
				   doctor_on_the_real_engine);
		tcase_add_unchecked_fixture(tc, NULL, remove_run);
	}
	return sbx_test_run(s);
}

/* SPDX-License-Identifier: MIT */
/*
 * Integration: `sandboxctl build` on the machine's real engine, then
 * containers from the image, hardened as the lifecycle runs them.
 * The built images stay (other suites need them, and they are rebuilt when
 * missing); every container carries sandboxctl.test=1 and is removed.
 *
 * Usage: test-image-build SANDBOXCTL
 */
#include "check_main.h"
#include "test_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sbx/docker.h"
#include "sbx/image.h"
#include "sbx/json.h"
#include "sbx/labels.h"
#include "testimage.h"

static const char *sandboxctl;
static char snapshot[] = "/tmp/sbx-image-src-XXXXXX";
static sbx_docker *d;
static char *containers[8];
static size_t n_containers;
/* The suite's own label value: a failed assertion ends the test before its
 * checked teardown, so the parent removes what carries it (unchecked teardown). */
static char owner[32];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void setup(void)
{
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_msg(sbx_docker_open(&d, NULL, &err) == 0, "%s", err.msg);
}

static void owner_setup(void)
{
	snprintf(owner, sizeof(owner), "%d", (int)getpid());
}

static void owner_teardown(void)
{
	char filter[64];

	snprintf(filter, sizeof(filter), "sandboxctl.test-owner=%s", owner);
	test_remove_labelled(filter);
}

static void teardown(void)
{
	for (size_t i = 0; i < n_containers; i++) {
		sbx_docker_container_remove(d, containers[i], true, true, NULL);
		free(containers[i]);
	}
	n_containers = 0;
	sbx_docker_free(d);
	d = NULL;
}

/* Runs `sandboxctl build ARGS --json` and returns its result line (cJSON_Delete it). */
static cJSON *build(const char *args, double *seconds)
{
	char cmd[1024], line[65536];
	cJSON *result = NULL;
	double t0 = now();
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' build %s --source-dir '%s' --json", sandboxctl, args,
		 snapshot);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		cJSON *j = NULL;

		ck_assert_msg(sbx_json_parse(line, strlen(line), &j, NULL) == 0, "not JSON: %s",
			      line);
		if (strcmp(sbx_json_get_string(j, "event", ""), "result") == 0) {
			cJSON_Delete(result);
			result = j;
		} else {
			cJSON_Delete(j);
		}
	}
	int status = pclose(p);

	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "'%s' failed (%d)", cmd,
		      status);
	ck_assert_ptr_nonnull(result);
	*seconds = now() - t0;
	return result;
}

static void check_image(const cJSON *res, const char *variant, const char *repo)
{
	const char *ref = sbx_json_get_string(res, "ref", "");
	const char *hash = sbx_json_get_string(res, "inputs_hash", "");
	sbx_docker_image *img = NULL, *latest = NULL;
	sbx_error err = SBX_ERROR_INIT;
	char want[256];

	ck_assert_uint_eq(strlen(hash), 64);
	snprintf(want, sizeof(want), "%s:%.12s", repo, hash);
	ck_assert_str_eq(ref, want);
	ck_assert_msg(sbx_docker_image_inspect(d, ref, &img, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(sbx_docker_label_get(img->labels, img->n_labels, SBX_LABEL_IMAGE),
			 variant);
	ck_assert_str_eq(sbx_docker_label_get(img->labels, img->n_labels, SBX_LABEL_INPUTS_HASH),
			 hash);
	ck_assert_str_eq(img->id, sbx_json_get_string(res, "id", ""));
	snprintf(want, sizeof(want), "%s:latest", repo);
	ck_assert_msg(sbx_docker_image_inspect(d, want, &latest, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(latest->id, img->id);
	sbx_docker_image_free(img);
	sbx_docker_image_free(latest);
}

/* A container hardened as the lifecycle makes them; started; its id is returned. */
static const char *start_sandbox(const char *image, const char *const *cmd, const char *const *env)
{
	static const char *const cap_drop[] = {"ALL", NULL};
	static const char *const secopt[] = {"no-new-privileges:true", NULL};
	static const sbx_docker_kv tmpfs[] = {
		{"/tmp", "rw,nosuid,nodev,size=64m,mode=1777"},
		{"/workspace", "rw,nosuid,nodev,size=64m,uid=1000,gid=1000,mode=0755"},
	};
	const sbx_docker_kv labels[] = {{SBX_LABEL_TEST, "1"}, {"sandboxctl.test-owner", owner}};
	sbx_docker_container_opts o = SBX_DOCKER_CONTAINER_OPTS_INIT;
	sbx_error err = SBX_ERROR_INIT;
	char *id = NULL;

	o.image = image;
	o.cmd = cmd;
	o.env = env;
	o.user = "1000:1000";
	o.labels = labels;
	o.n_labels = 2;
	o.cap_drop = cap_drop;
	o.security_opt = secopt;
	o.readonly_rootfs = true;
	o.tmpfs = tmpfs;
	o.n_tmpfs = 2;
	o.network_mode = "none";
	o.memory = 1LL << 30;
	o.pids_limit = 256;
	ck_assert_msg(sbx_docker_container_create(d, &o, &id, &err) == 0, "%s", err.msg);
	ck_assert_uint_lt(n_containers, SBX_ELEMENTSOF(containers));
	containers[n_containers++] = id;
	ck_assert_msg(sbx_docker_container_start(d, id, &err) == 0, "%s", err.msg);
	return id;
}

START_TEST(slim_build_skip_and_run)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_buf out = SBX_BUF_INIT(1 << 20), errout = SBX_BUF_INIT(1 << 20);
	double t_first, t_second, t0;
	cJSON *first, *second;
	int code = -1;

	first = build("--slim", &t_first);
	check_image(first, "slim", SBX_IMAGE_REPO_SLIM);
	fprintf(stderr, "slim: %s %s in %.1f s, %.0f MB\n", sbx_json_get_string(first, "ref", ""),
		sbx_json_get_bool(first, "built", false) ? "built" : "up to date", t_first,
		sbx_json_get_number(first, "size", 0) / 1e6);

	/* Nothing changed: skipped, and fast. */
	second = build("--slim", &t_second);
	ck_assert(!sbx_json_get_bool(second, "built", true));
	ck_assert_int_eq(sbx_json_get_number(second, "bases_built", -1), 0);
	ck_assert_str_eq(sbx_json_get_string(second, "ref", "a"),
			 sbx_json_get_string(first, "ref", "b"));
	ck_assert_msg(t_second < 10, "an up-to-date build took %.1f s", t_second);

	/* sandbox-mcp --help, as uid 1000, on a read-only root, under the init. */
	const char *const help_cmd[] = {"sh", "-c",
					"id -u; sandbox-mcp --help | head -1; touch /usr/x "
					"2>/dev/null && echo rw || echo ro",
					NULL};
	const char *id = start_sandbox(sbx_json_get_string(first, "ref", ""), help_cmd, NULL);

	ck_assert_msg(sbx_docker_container_wait(d, id, 60000, &code, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(sbx_docker_container_logs(d, id, 0, &out, &errout, &err), 0);
	ck_assert_msg(code == 0, "exit %d: %s %s", code, sbx_buf_str(&out), sbx_buf_str(&errout));
	ck_assert_msg(strncmp(sbx_buf_str(&out), "1000\nUsage: sandbox-mcp", 23) == 0, "%s",
		      sbx_buf_str(&out));
	ck_assert_ptr_nonnull(strstr(sbx_buf_str(&out), "\nro\n"));

	/* The init stops the container itself once the deadline and grace pass. */
	const char *const sleep_cmd[] = {"sleep", "300", NULL};
	const char *const env[] = {"SANDBOX_TIMEOUT=2", "SANDBOX_GRACE=1", NULL};

	t0 = now();
	id = start_sandbox(sbx_json_get_string(first, "ref", ""), sleep_cmd, env);
	ck_assert_msg(sbx_docker_container_wait(d, id, 30000, &code, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(code, 124);
	ck_assert_msg(now() - t0 >= 2.5 && now() - t0 < 15, "stopped after %.1f s", now() - t0);

	sbx_buf_free(&out);
	sbx_buf_free(&errout);
	cJSON_Delete(first);
	cJSON_Delete(second);
}
END_TEST

/* The default command: the server on its unix socket, reached through sandbox-bridge. */
START_TEST(slim_server_through_bridge)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_buf out = SBX_BUF_INIT(1 << 20), errout = SBX_BUF_INIT(1 << 20);
	sbx_docker_exec_opts eo = SBX_DOCKER_EXEC_OPTS_INIT;
	const char *const probe[] = {
		"sh", "-c",
		"i=0; while [ ! -e /tmp/sandbox/ready ] && [ $i -lt 200 ]; do sleep 0.05; "
		"i=$((i+1)); done; printf 'GET /health HTTP/1.1\\r\\nHost: localhost\\r\\n"
		"Connection: close\\r\\n\\r\\n' | sandbox-bridge /tmp/sandbox/mcp.sock",
		NULL};
	int code = -1;

	const char *id = start_sandbox(SBX_IMAGE_SLIM, NULL, NULL);

	eo.cmd = probe;
	ck_assert_msg(sbx_docker_exec_run(d, id, &eo, 30000, &out, &errout, &code, &err) == 0, "%s",
		      err.msg);
	ck_assert_msg(code == 0 && strncmp(sbx_buf_str(&out), "HTTP/1.1 200", 12) == 0,
		      "exit %d: %s %s", code, sbx_buf_str(&out), sbx_buf_str(&errout));
	sbx_buf_free(&out);
	sbx_buf_free(&errout);
}
END_TEST

/* The full image: Xvfb and LibreOffice Calc start unprivileged on a file that arrives late. */
START_TEST(full_build_and_office)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_buf out = SBX_BUF_INIT(1 << 20), errout = SBX_BUF_INIT(1 << 20);
	sbx_docker_exec_opts eo = SBX_DOCKER_EXEC_OPTS_INIT;
	const char *const env[] = {"SANDBOX_OPEN=/workspace/t.csv", NULL};
	const char *const probe[] = {
		"sh", "-c",
		"printf 'a,b\\n1,2\\n' > /workspace/t.csv; i=0; while [ $i -lt 600 ]; do "
		"for c in /proc/[0-9]*/comm; do grep -qx soffice.bin $c 2>/dev/null && "
		"{ stat -c %u ${c%/comm}; exit 0; }; done; sleep 0.1; i=$((i+1)); done; exit 1",
		NULL};
	double t;
	int code = -1;
	cJSON *res = build("--full", &t);

	check_image(res, "full", SBX_IMAGE_REPO_FULL);
	fprintf(stderr, "full: %s %s in %.1f s, %.0f MB\n", sbx_json_get_string(res, "ref", ""),
		sbx_json_get_bool(res, "built", false) ? "built" : "up to date", t,
		sbx_json_get_number(res, "size", 0) / 1e6);

	const char *id = start_sandbox(sbx_json_get_string(res, "ref", ""), NULL, env);

	eo.cmd = probe;
	ck_assert_msg(sbx_docker_exec_run(d, id, &eo, 90000, &out, &errout, &code, &err) == 0, "%s",
		      err.msg);
	ck_assert_msg(code == 0, "LibreOffice did not start: %s %s", sbx_buf_str(&out),
		      sbx_buf_str(&errout));
	ck_assert_str_eq(sbx_buf_str(&out), "1000\n");
	sbx_buf_free(&out);
	sbx_buf_free(&errout);
	cJSON_Delete(res);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s;
	TCase *tc;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s SANDBOXCTL\n", argv[0]);
		return 2;
	}
	sandboxctl = argv[1];
	/*
	 * A snapshot of the context's paths, so edits in the tree during the test
	 * (others at work) cannot turn "up to date" into "rebuilt". It also
	 * exercises --source-dir.
	 */
	char cmd[1024];

	if (!getenv("SBX_SOURCE_ROOT") || !mkdtemp(snapshot)) {
		fprintf(stderr, "needs SBX_SOURCE_ROOT and a writable /tmp\n");
		return 2;
	}
	snprintf(cmd, sizeof(cmd),
		 "cd \"$SBX_SOURCE_ROOT\" && cp -r --parents $(sed -e 's/#.*//' %s) '%s'",
		 SBX_IMAGE_CONTEXT_LIST, snapshot);
	if (system(cmd) != 0) {
		fprintf(stderr, "cannot snapshot the source tree\n");
		return 2;
	}
	s = suite_create("image-build");

	tc = SBX_TEST_CASE(s, "engine", setup, teardown, 1800, slim_build_skip_and_run,
			   slim_server_through_bridge, full_build_and_office);
	tcase_add_unchecked_fixture(tc, owner_setup, owner_teardown);
	rc = sbx_test_run(s);
	if (sbx_path_remove_tree_at(AT_FDCWD, snapshot) < 0)
		fprintf(stderr, "cannot remove '%s'\n", snapshot);
	return rc;
}

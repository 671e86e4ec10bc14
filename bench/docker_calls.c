/* SPDX-License-Identifier: MIT */
/*
 * bench-docker [ITERATIONS]: the cost of each Docker Engine API call made
 * through lib/docker (kept-alive connection), against the same calls made
 * with `curl --unix-socket` in the same run: curl's wall time (process
 * start included, what a shell script pays) and curl's own %{time_total}
 * (the transfer alone). Figures, not a test. Needs a unix:// engine.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "docker-internal.h" /* the create body, so curl sends the same */
#include "bench_median.h"
#include "sbx/sbx.h"

#define BENCH_IMAGE "sandboxctl-bench/busybox:latest"
#define MAX_ITER    1000

enum { PING, CREATE, START, WAIT, REMOVE, NCALLS };
static const char *const call_names[NCALLS] = {"ping", "create", "start", "wait", "remove"};

static double client_ms[NCALLS][MAX_ITER], curl_wall[NCALLS][MAX_ITER],
	curl_total[NCALLS][MAX_ITER];
static const char *socket_path = "/var/run/docker.sock";
static char run_label[64];

static void die(const char *what, const sbx_error *err)
{
	fprintf(stderr, "bench-docker: %s: %s\n", what, sbx_error_message(err));
	exit(3);
}

/* A tiny image so create/start measure the engine, not the image. */
static void ensure_image(sbx_docker *d)
{
	const char *changes[] = {"LABEL " SBX_LABEL_TEST "=1", "CMD [\"/bin/true\"]", NULL};
	sbx_docker_import_opts o = SBX_DOCKER_IMPORT_OPTS_INIT;
	sbx_error err = SBX_ERROR_INIT;
	sbx_docker_image *img = NULL;
	sbx_docker_tar *t = NULL;
	struct stat st;
	char *bb;
	int fd;

	if (sbx_docker_image_inspect(d, BENCH_IMAGE, &img, NULL) == 0) {
		sbx_docker_image_free(img);
		return;
	}
	fd = open("/bin/busybox", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !(bb = malloc((size_t)st.st_size)) ||
	    read(fd, bb, (size_t)st.st_size) != st.st_size) {
		fprintf(stderr, "bench-docker: needs /bin/busybox (busybox-static)\n");
		exit(2);
	}
	close(fd);
	if (sbx_docker_tar_new(&t, 0, &err) < 0 ||
	    sbx_docker_tar_add_dir(t, "bin", 0755, 0, 0, &err) < 0 ||
	    sbx_docker_tar_add_file(t, "bin/busybox", bb, (size_t)st.st_size, 0755, 0, 0, &err) <
		    0 ||
	    sbx_docker_tar_add_symlink(t, "bin/true", "busybox", &err) < 0 ||
	    sbx_docker_tar_finish(t, &o.tar_data, &o.tar_len, &err) < 0)
		die("rootfs", &err);
	free(bb);
	o.repo = "sandboxctl-bench/busybox";
	o.changes = changes;
	if (sbx_docker_image_import(d, &o, NULL, &err) < 0)
		die("import", &err);
	sbx_docker_tar_free(t);
}

/*
 * Runs curl for one call; returns its wall time in ms and writes curl's
 * time_total (ms) and the body (first line) to body when not NULL.
 */
static double run_curl(const char *method, const char *path, const char *json, double *total,
		       char *body, size_t body_len)
{
	char url[512], out_path[] = "/tmp/bench-docker-curl.XXXXXX", buf[8192];
	int out = mkostemp(out_path, O_CLOEXEC), status;
	double t0, t1;
	ssize_t n;
	pid_t pid;
	char *nl;

	if (out < 0) {
		perror("mkostemp");
		exit(3);
	}
	unlink(out_path);
	snprintf(url, sizeof(url), "http://docker%s", path);
	t0 = sbx_now_msf();
	pid = fork();
	if (pid == 0) {
		const char *argv[] = {"curl",
				      "-sS",
				      "--unix-socket",
				      socket_path,
				      "-X",
				      method,
				      "-w",
				      "\n%{time_total}",
				      url,
				      NULL,
				      NULL,
				      NULL,
				      NULL,
				      NULL};
		if (json) {
			argv[9] = "-H";
			argv[10] = "Content-Type: application/json";
			argv[11] = "-d";
			argv[12] = json;
		}
		dup2(out, 1);
		execvp("curl", (char *const *)argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	t1 = sbx_now_msf();
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench-docker: curl %s %s failed\n", method, path);
		exit(3);
	}
	lseek(out, 0, SEEK_SET);
	n = read(out, buf, sizeof(buf) - 1);
	close(out);
	buf[n > 0 ? n : 0] = '\0';
	nl = strrchr(buf, '\n');
	*total = nl ? atof(nl + 1) * 1e3 : 0;
	if (body) {
		if (nl)
			*nl = '\0';
		size_t k = strlen(buf) < body_len - 1 ? strlen(buf) : body_len - 1;
		memcpy(body, buf, k);
		body[k] = '\0';
	}
	return t1 - t0;
}

/* The container id from a create answer {"Id":"...","Warnings":[]}. */
static void id_from(const char *body, char *id, size_t len)
{
	const char *p = strstr(body, "\"Id\":\"");

	if (!p) {
		fprintf(stderr, "bench-docker: unexpected create answer: %s\n", body);
		exit(3);
	}
	p += 6;
	snprintf(id, len, "%.*s", (int)strcspn(p, "\""), p);
}

int main(int argc, char **argv)
{
	const char *cmd[] = {"true", NULL};
	sbx_docker_kv labels[] = {{SBX_LABEL_TEST, "1"}, {SBX_LABEL_RUN_ID, run_label}};
	sbx_docker_container_opts o = SBX_DOCKER_CONTAINER_OPTS_INIT;
	sbx_error err = SBX_ERROR_INIT;
	sbx_docker *d = NULL;
	char *body = NULL, path[256], answer[4096], cid[128], ver[16];
	int iter = argc > 1 ? atoi(argv[1]) : 20;
	const char *host = getenv("DOCKER_HOST");

	if (iter < 1 || iter > MAX_ITER) {
		fprintf(stderr, "usage: bench-docker [ITERATIONS 1..%d]\n", MAX_ITER);
		return 2;
	}
	if (host && *host) {
		if (strncmp(host, "unix://", 7) != 0) {
			fprintf(stderr, "bench-docker: compares with curl --unix-socket: needs a "
					"unix:// DOCKER_HOST\n");
			return 2;
		}
		socket_path = host + 7;
	}
	snprintf(run_label, sizeof(run_label), "bench-%d", (int)getpid());
	if (sbx_docker_open(&d, NULL, &err) < 0)
		die("open", &err);
	snprintf(ver, sizeof(ver), "%s", sbx_docker_api_version(d));
	ensure_image(d);
	o.image = BENCH_IMAGE;
	o.cmd = cmd;
	o.labels = labels;
	o.n_labels = 2;
	o.network_mode = "none";
	/* curl sends the very body the client sends. */
	if (sbx_docker_container_create(d, &o, &body, &err) < 0)
		die("warm-up create", &err);
	sbx_docker_container_remove(d, body, true, true, NULL);
	free(body);
	if (sbx_docker__container_create_body(&o, &body, &err) < 0)
		die("encode", &err);

	for (int i = 0; i < iter; i++) {
		char *id = NULL;
		int code = -1;
		double t;

		t = sbx_now_msf();
		if (sbx_docker_ping(d, &err) < 0)
			die("ping", &err);
		client_ms[PING][i] = sbx_now_msf() - t;
		t = sbx_now_msf();
		if (sbx_docker_container_create(d, &o, &id, &err) < 0)
			die("create", &err);
		client_ms[CREATE][i] = sbx_now_msf() - t;
		t = sbx_now_msf();
		if (sbx_docker_container_start(d, id, &err) < 0)
			die("start", &err);
		client_ms[START][i] = sbx_now_msf() - t;
		t = sbx_now_msf();
		if (sbx_docker_container_wait(d, id, 30000, &code, &err) < 0)
			die("wait", &err);
		client_ms[WAIT][i] = sbx_now_msf() - t;
		t = sbx_now_msf();
		if (sbx_docker_container_remove(d, id, true, true, &err) < 0)
			die("remove", &err);
		client_ms[REMOVE][i] = sbx_now_msf() - t;
		free(id);

		curl_wall[PING][i] = run_curl("GET", "/_ping", NULL, &curl_total[PING][i], NULL, 0);
		snprintf(path, sizeof(path), "/v%s/containers/create", ver);
		curl_wall[CREATE][i] = run_curl("POST", path, body, &curl_total[CREATE][i], answer,
						sizeof(answer));
		id_from(answer, cid, sizeof(cid));
		snprintf(path, sizeof(path), "/v%s/containers/%s/start", ver, cid);
		curl_wall[START][i] = run_curl("POST", path, NULL, &curl_total[START][i], NULL, 0);
		snprintf(path, sizeof(path), "/v%s/containers/%s/wait?condition=not-running", ver,
			 cid);
		curl_wall[WAIT][i] = run_curl("POST", path, NULL, &curl_total[WAIT][i], NULL, 0);
		snprintf(path, sizeof(path), "/v%s/containers/%s?force=1&v=1", ver, cid);
		curl_wall[REMOVE][i] =
			run_curl("DELETE", path, NULL, &curl_total[REMOVE][i], NULL, 0);
	}
	free(body);
	sbx_docker_free(d);

	printf("bench-docker: %d iterations, engine API %s at unix://%s, medians in ms\n", iter,
	       ver, socket_path);
	printf("%-8s %12s %14s %16s %14s %14s\n", "call", "lib/docker", "curl (wall)",
	       "curl time_total", "lib/curl-wall", "lib/curl-total");
	{
		double sum_lib = 0, sum_wall = 0, sum_total = 0;
		for (int c = 0; c < NCALLS; c++) {
			double a = bench_median(client_ms[c], iter),
			       b = bench_median(curl_wall[c], iter),
			       e = bench_median(curl_total[c], iter);
			sum_lib += a;
			sum_wall += b;
			sum_total += e;
			printf("%-8s %12.2f %14.2f %16.2f %14.2f %14.2f\n", call_names[c], a, b, e,
			       a / b, a / e);
		}
		printf("%-8s %12.2f %14.2f %16.2f %14.2f %14.2f\n", "total", sum_lib, sum_wall,
		       sum_total, sum_lib / sum_wall, sum_lib / sum_total);
	}
	return 0;
}

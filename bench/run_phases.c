/* SPDX-License-Identifier: MIT */
/*
 * bench-run-phases: where the time of one `sandboxctl run --agent oracle`
 * goes, beside the engine's floor for the same image measured in the same
 * run: create + start + wait + remove of a container that does nothing.
 *
 *   bench-run-phases SANDBOXCTL TASK IMAGE [N [RUNTIME...]]
 *
 * A GUI task (with the full image) also reports when Calc showed its file.
 *
 * Prints the median of N runs (default 5) per phase, the sandbox overhead
 * (total minus the agent's own time) and its ratio to the floor. With
 * RUNTIMEs (e.g. runc runsc) each round measures every one in turn, so a
 * loaded machine weighs on all alike, and the last lines give each one's
 * episode total, ready time and floor against the first's. Figures, not
 * pass/fail.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_median.h"
#include "sbx/clock.h"
#include "sbx/docker.h"
#include "sbx/json.h"
#include "sbx/labels.h"

#define MAX_N	     50
#define MAX_RUNTIMES 4

static const char *const phases[] = {
	"create",   "start", "copy_in", "ready", "agent",
	"copy_out", "grade", "remove",	"total", "gui_ready_after_start"};
#define N_PHASES (sizeof(phases) / sizeof(phases[0]))

/* create + start + wait + remove of a container running `true` (runtime "": the default). */
static int floor_once(sbx_docker *d, const char *image, const char *runtime, double *ms,
		      sbx_error *err)
{
	sbx_docker_container_opts o = SBX_DOCKER_CONTAINER_OPTS_INIT;
	sbx_docker_kv label = {SBX_LABEL_TEST, "1"};
	char *id = NULL;
	double t0 = sbx_now_msf();
	int r, code;

	o.image = image;
	o.entrypoint = (const char *const[]){"true", NULL};
	o.labels = &label;
	o.n_labels = 1;
	o.network_mode = "none";
	o.runtime = runtime[0] ? runtime : NULL;
	r = sbx_docker_container_create(d, &o, &id, err);
	if (r < 0)
		return r;
	r = sbx_docker_container_start(d, id, err);
	if (r >= 0)
		r = sbx_docker_container_wait(d, id, 30000, &code, err);
	sbx_docker_container_remove(d, id, true, true, NULL);
	*ms = sbx_now_msf() - t0;
	free(id);
	return r;
}

/* Runs sandboxctl once; fills the phase timings and the wall time. */
static int run_once(const char *sandboxctl, const char *task, const char *image,
		    const char *runtime, const char *runs, double *ph, double *wall)
{
	int p[2], st;
	pid_t pid;
	char buf[65536];
	size_t len = 0;
	double t0 = sbx_now_msf();
	cJSON *j = NULL;
	const cJSON *t;

	if (pipe(p) < 0)
		return -errno;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		if (runtime[0])
			execl(sandboxctl, sandboxctl, "run", "--task", task, "--image", image,
			      "--agent", "oracle", "--json", "--runs-dir", runs, "--test-label",
			      "--runtime", runtime, (char *)NULL);
		else
			execl(sandboxctl, sandboxctl, "run", "--task", task, "--image", image,
			      "--agent", "oracle", "--json", "--runs-dir", runs, "--test-label",
			      (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	for (ssize_t n; (n = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0;)
		len += (size_t)n;
	close(p[0]);
	waitpid(pid, &st, 0);
	*wall = sbx_now_msf() - t0;
	buf[len] = '\0';
	if (sbx_json_parse(buf, len, &j, NULL) < 0)
		return -EPROTO;
	t = sbx_json_get(j, "timings_ms");
	for (size_t i = 0; i < N_PHASES; i++)
		ph[i] = sbx_json_get_number(t, phases[i], -1);
	if (strcmp(sbx_json_get_string(j, "status", ""), "pass") != 0)
		fprintf(stderr, "warning: run status %s\n", sbx_json_get_string(j, "status", "?"));
	cJSON_Delete(j);
	return 0;
}

/* One runtime's samples ("" for the engine's default); bench_median sorts them in place. */
typedef struct runtime_samples {
	const char *name;
	double ph[N_PHASES][MAX_N], wall[MAX_N], fl[MAX_N], overhead[MAX_N];
} runtime_samples;

static void report(runtime_samples *s, const char *task, const char *image, int n)
{
	double floor_ms = bench_median(s->fl, n), over_ms = bench_median(s->overhead, n);

	printf("sandboxctl run --agent oracle --task %s --image %s%s%s   (median of %d)\n", task,
	       image, s->name[0] ? " --runtime " : "", s->name, n);
	for (size_t k = 0; k < 9; k++)
		printf("  %-9s %8.1f ms\n", phases[k], bench_median(s->ph[k], n));
	printf("  wall      %8.1f ms  (process start to exit)\n", bench_median(s->wall, n));
	printf("engine floor (create+start+wait+remove, `true`, same image%s%s): %.1f ms\n",
	       s->name[0] ? ", runtime " : "", s->name, floor_ms);
	printf("sandbox overhead (total - agent): %.1f ms = %.2fx floor (target < 1.5x)\n", over_ms,
	       over_ms / floor_ms);
	if (bench_median(s->ph[9], n) > 0)
		printf("GUI ready after start (Calc shows the file, drawn): %.1f ms (target < 3 "
		       "s)\n",
		       bench_median(s->ph[9], n));
	else
		printf("server ready after start: %.1f ms (target < 100 ms)\n",
		       bench_median(s->ph[3], n));
}

/* Each runtime against the first: the ratios of what the issue asks. */
static void compare(runtime_samples *base, runtime_samples *s, int n)
{
	printf("%s / %s: episode total %.2fx (%.1f / %.1f ms), ready %.2fx (%.1f / %.1f ms), "
	       "engine floor %.2fx (%.1f / %.1f ms)\n",
	       s->name, base->name[0] ? base->name : "default",
	       bench_median(s->ph[8], n) / bench_median(base->ph[8], n), bench_median(s->ph[8], n),
	       bench_median(base->ph[8], n),
	       bench_median(s->ph[3], n) / bench_median(base->ph[3], n), bench_median(s->ph[3], n),
	       bench_median(base->ph[3], n), bench_median(s->fl, n) / bench_median(base->fl, n),
	       bench_median(s->fl, n), bench_median(base->fl, n));
}

int main(int argc, char **argv)
{
	static runtime_samples rt[MAX_RUNTIMES];
	char runs[] = "/tmp/sbx-bench-runs-XXXXXX";
	sbx_error err = SBX_ERROR_INIT;
	sbx_docker *d = NULL;
	int n = argc > 4 ? atoi(argv[4]) : 5, n_rt = argc > 5 ? argc - 5 : 1;
	double floor_ms;
	char cmd[128];

	if (argc < 4 || n < 1 || n > MAX_N || n_rt > MAX_RUNTIMES) {
		fprintf(stderr,
			"Usage: bench-run-phases SANDBOXCTL TASK IMAGE [N<=%d [RUNTIME...]]\n"
			"  RUNTIME: e.g. runc runsc, measured in turn in every round (at most "
			"%d)\n",
			MAX_N, MAX_RUNTIMES);
		return 2;
	}
	for (int r = 0; r < n_rt; r++)
		rt[r].name = argc > 5 ? argv[5 + r] : "";
	if (!mkdtemp(runs) || sbx_docker_open(&d, NULL, &err) < 0) {
		fprintf(stderr, "bench: %s\n", sbx_error_message(&err));
		return 1;
	}
	/* Warm the image's layers and the engine once per runtime, unmeasured. */
	for (int r = 0; r < n_rt; r++)
		floor_once(d, argv[3], rt[r].name, &floor_ms, &err);
	for (int i = 0; i < n; i++) {
		for (int r = 0; r < n_rt; r++) {
			runtime_samples *s = &rt[r];
			double row[N_PHASES];

			if (floor_once(d, argv[3], s->name, &s->fl[i], &err) < 0) {
				fprintf(stderr, "bench: floor: %s\n", sbx_error_message(&err));
				return 1;
			}
			if (run_once(argv[1], argv[2], argv[3], s->name, runs, row, &s->wall[i]) <
			    0) {
				fprintf(stderr, "bench: sandboxctl run failed\n");
				return 1;
			}
			for (size_t k = 0; k < N_PHASES; k++)
				s->ph[k][i] = row[k];
			/* The sandbox's cost: everything but the agent's own work. */
			s->overhead[i] = row[8] - row[4];
		}
	}
	for (int r = 0; r < n_rt; r++)
		report(&rt[r], argv[2], argv[3], n);
	for (int r = 1; r < n_rt; r++)
		compare(&rt[0], &rt[r], n);
	sbx_docker_free(d);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", runs);
	return system(cmd) == 0 ? 0 : 1;
}

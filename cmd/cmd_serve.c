/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl serve: the episode service (lib/serve) in the foreground until
 * SIGINT/SIGTERM, which drains it: no new episodes, a grace for the live
 * ones, then every sandbox removed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "engines.h"
#include "sbx/labels.h"
#include "sbx/log.h"
#include "sbx/serve.h"

int cmd_run__grade(const sbx_task *task, const char *outputs_dir, sbx_run_grade *out,
		   void *userdata, sbx_error *err);

#define MAX_POOLS 8

static volatile sig_atomic_t arg_signals, arg_hurry;

static void on_signal(int sig)
{
	static const char msg[] =
		"\nsandboxctl: serve: draining: no new episodes; live ones "
		"get --stop-grace to be finished (a second signal aborts them now)\n";
	static const char again[] = "\nsandboxctl: serve: aborting the live episodes\n";

	(void)sig;
	if (arg_signals < 2)
		arg_signals++;
	/* write(2) is async-signal-safe; stdio is not. */
	if (arg_signals == 1) {
		(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	} else if (!arg_hurry) {
		arg_hurry = 1;
		(void)!write(STDERR_FILENO, again, sizeof(again) - 1);
	}
}

static void help(void)
{
	printf("Usage: sandboxctl serve [options]\n\n"
	       "An episode service for RL training loops: a JSON API that hands out\n"
	       "episodes (one sandbox each, through the same lifecycle as 'run') and\n"
	       "grades them when the client finishes. Prints its URL, with the token, on\n"
	       "stdout. Every request needs the token: in the path (URL/v1/...) or as\n"
	       "'Authorization: Bearer TOKEN'; without it: 401.\n\n"
	       "  POST   /v1/episodes {\"task\", \"seed\", \"timeout\", \"tags\"}  claim: answers\n"
	       "         {id, mcp_url, sse_url, rest_url, prompt, deadline} once the\n"
	       "         sandbox's server is ready\n"
	       "  GET    /v1/episodes[/ID]        state (and the result once finished)\n"
	       "  POST   /v1/episodes/ID/finish   collect, grade, remove: {reward, status,\n"
	       "         passed, grade, run_dir, timings_ms}\n"
	       "  DELETE /v1/episodes/ID          abort (status interrupted, not graded)\n"
	       "  GET    /v1/health, /metrics (Prometheus text)\n"
	       "An episode past its deadline is finished by the service (status timeout,\n"
	       "graded); a later finish answers that result. See docs/serve.md.\n\n"
	       "Options:\n"
	       "  --listen ADDR       127.0.0.1:PORT (default 127.0.0.1:0, any free port)\n"
	       "                      or unix:PATH (a socket of mode 0600)\n"
	       "  --pool N            keep N slim sandboxes started and ready (default 0)\n"
	       "  --pool-image IMG=N  keep N of IMG ready: slim, full or an image reference;\n"
	       "                      may repeat. A claim whose task fits (same image and\n"
	       "                      limits, not a GUI task) takes one; else it starts\n"
	       "                      cold (counted in /metrics)\n"
	       "  --fill-jobs N       warm sandboxes started at once (default 2)\n"
	       "  --idle-ttl S        a warm sandbox unclaimed S seconds is replaced\n"
	       "                      (default 600); its PID 1 ends it by itself after\n"
	       "                      S + --max-timeout + 60 s, so a killed service leaves\n"
	       "                      nothing running\n"
	       "  --max-episodes N    episodes live at once; more get 429 (default 64)\n"
	       "  --max-timeout S     the longest \"timeout\" a claim may ask (default 3600)\n"
	       "  --stop-grace S      on SIGINT/SIGTERM, seconds live episodes get to be\n"
	       "                      finished by their clients before they are aborted\n"
	       "                      (default 10; a second signal aborts them at once)\n"
	       "  --engine URL        a Docker engine (unix:///path or tcp://host:port); repeat\n"
	       "                      for several: each keeps the pools, a claim takes a\n"
	       "                      warm sandbox from whichever has one (cold starts go\n"
	       "                      to the least busy), and one that fails 3 times in a\n"
	       "                      row is drained while another is left\n"
	       "  --tasks-dir DIR     where task names are looked up\n"
	       "  --runs-dir DIR      where run directories go (default runs)\n"
	       "  --token TOKEN       use this token (16..64 of A-Z a-z 0-9 _ -) instead of a\n"
	       "                      random one ($SANDBOXCTL_SERVE_TOKEN works too)\n"
	       "  --test-label        label sandboxes as test objects\n"
	       "  -h, --help          show this help\n\n"
	       "Exit status: 0 after a drain, 2 usage, 3 the service could not start.\n");
}

/* "slim=2", "full=1", "repo/img:tag=3". */
static int parse_pool_image(const char *arg, sbx_serve_pool_spec *out)
{
	const char *eq = strrchr(arg, '=');
	static char names[MAX_POOLS][256];
	static size_t used;
	long n;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(names[0]) || used >= MAX_POOLS)
		return -1;
	n = cli_parse_long(eq + 1, 0, 256);
	if (n < 0)
		return -1;
	snprintf(names[used], sizeof(names[0]), "%.*s", (int)(eq - arg), arg);
	out->image = strcmp(names[used], "slim") == 0	? SBX_IMAGE_SLIM
		     : strcmp(names[used], "full") == 0 ? SBX_IMAGE_FULL
							: names[used];
	out->target = (unsigned)n;
	used++;
	return 0;
}

static void sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

int cmd_serve(int argc, char **argv)
{
	enum { OPT_LONG = 0x100 };
	static const struct option opts[] = {
		{"listen", required_argument, NULL, OPT_LONG},
		{"pool", required_argument, NULL, OPT_LONG},
		{"pool-image", required_argument, NULL, OPT_LONG},
		{"fill-jobs", required_argument, NULL, OPT_LONG},
		{"idle-ttl", required_argument, NULL, OPT_LONG},
		{"max-episodes", required_argument, NULL, OPT_LONG},
		{"max-timeout", required_argument, NULL, OPT_LONG},
		{"stop-grace", required_argument, NULL, OPT_LONG},
		{"engine", required_argument, NULL, OPT_LONG},
		{"tasks-dir", required_argument, NULL, OPT_LONG},
		{"runs-dir", required_argument, NULL, OPT_LONG},
		{"token", required_argument, NULL, OPT_LONG},
		{"test-label", no_argument, NULL, OPT_LONG},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	sbx_serve_opts so = SBX_SERVE_OPTS_INIT;
	sbx_serve_pool_spec pools[MAX_POOLS + 1];
	size_t n_pools = 0;
	long pool_slim = -1, stop_grace = 10;
	sbx_error err = SBX_ERROR_INIT;
	sbx_serve *s = NULL;
	cli_engine_arg eargs[CLI_MAX_ENGINES];
	const char *engines[CLI_MAX_ENGINES];
	size_t n_eargs = 0;
	unsigned aborted;
	int c, idx, rc = EXIT_USAGE;

	optind = 1;
	while ((c = cli_getopt("serve", argc, argv, "h", opts, &idx)) != -1) {
		const char *name = c == OPT_LONG ? opts[idx].name : "";
		long v = 0;

		if (c == CLI_OPT_ERROR)
			goto done;
		if (c == 'h') {
			help();
			rc = EXIT_PASS;
			goto done;
		}
		if (strcmp(name, "listen") == 0) {
			so.listen = optarg;
			continue;
		} else if (strcmp(name, "pool-image") == 0) {
			if (n_pools >= MAX_POOLS || parse_pool_image(optarg, &pools[n_pools]) < 0) {
				cli_error("serve: --pool-image '%s': IMAGE=N (slim, full or a "
					  "reference; N 0..256; at most %d)",
					  optarg, MAX_POOLS);
				goto done;
			}
			n_pools++;
			continue;
		} else if (strcmp(name, "engine") == 0) {
			if (n_eargs >= CLI_MAX_ENGINES) {
				cli_error("serve: --engine: at most %d", CLI_MAX_ENGINES);
				goto done;
			}
			if (cli_parse_engine("serve", optarg, false, &eargs[n_eargs]) < 0)
				goto done;
			engines[n_eargs] = eargs[n_eargs].url;
			n_eargs++;
			continue;
		} else if (strcmp(name, "tasks-dir") == 0) {
			so.tasks_dir = optarg;
			continue;
		} else if (strcmp(name, "runs-dir") == 0) {
			so.runs_dir = optarg;
			continue;
		} else if (strcmp(name, "token") == 0) {
			so.token = optarg;
			continue;
		} else if (strcmp(name, "test-label") == 0) {
			so.test = true;
			continue;
		}
		/* The rest are numbers. */
		v = cli_parse_long(optarg,
				   strcmp(name, "pool") == 0 || strcmp(name, "stop-grace") == 0 ? 0
												: 1,
				   strcmp(name, "pool") == 0 ? 256 : 86400 * 7);
		if (v < 0) {
			cli_error("serve: --%s '%s': not a number in range", name, optarg);
			goto done;
		}
		if (strcmp(name, "pool") == 0)
			pool_slim = v;
		else if (strcmp(name, "fill-jobs") == 0)
			so.fill_concurrency = (unsigned)v;
		else if (strcmp(name, "idle-ttl") == 0)
			so.idle_ttl_s = (uint32_t)v;
		else if (strcmp(name, "max-episodes") == 0)
			so.max_episodes = (unsigned)v;
		else if (strcmp(name, "max-timeout") == 0)
			so.max_timeout_s = (uint32_t)v;
		else if (strcmp(name, "stop-grace") == 0)
			stop_grace = v;
	}
	if (cli_no_arguments("serve", argc, argv) < 0)
		goto done;
	if (pool_slim > 0)
		pools[n_pools++] = (sbx_serve_pool_spec){SBX_IMAGE_SLIM, (unsigned)pool_slim};
	if (!so.token && getenv("SANDBOXCTL_SERVE_TOKEN") && getenv("SANDBOXCTL_SERVE_TOKEN")[0])
		so.token = getenv("SANDBOXCTL_SERVE_TOKEN");
	so.pools = pools;
	so.n_pools = n_pools;
	so.engines = engines;
	so.n_engines = n_eargs;
	if (n_eargs > 0) {
		/* Every engine answers and holds the pools' images now: one clear error,
		 * not a pool that never fills. */
		char *images[MAX_POOLS + 2] = {0};

		for (size_t i = 0; i < n_pools; i++)
			images[i] = (char *)pools[i].image;
		if (cli_check_engines("serve", eargs, n_eargs, images, NULL, NULL, NULL, NULL) <
		    0) {
			rc = EXIT_ENGINE;
			goto done;
		}
	}
	so.grade = cmd_run__grade;
	so.hurry = &arg_hurry;

	{
		struct sigaction sa = {.sa_handler = on_signal};

		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		signal(SIGPIPE, SIG_IGN);
	}
	if (sbx_serve_start(&s, &so, &err) < 0) {
		cli_error("serve: %s", sbx_error_message(&err));
		rc = err.code == -EINVAL ? EXIT_USAGE : EXIT_ENGINE;
		goto done;
	}
	/* stdout: the URL alone, for scripts; the rest on stderr. */
	printf("%s\n", sbx_serve_url(s));
	fflush(stdout);
	if (strncmp(sbx_serve_url(s), "unix:", 5) == 0)
		/* No path to carry the token on a socket URL: the client sends it as Bearer. */
		printf("token %s\n", sbx_serve_token(s));
	fflush(stdout);
	fprintf(stderr, "serve: %s listening on %s\n", sbx_serve_id(s), sbx_serve_url(s));
	while (!arg_signals)
		sleep_ms(100);
	aborted = sbx_serve_drain(s, (uint32_t)stop_grace);
	sbx_serve_free(s);
	fprintf(stderr, "serve: drained (%u episode(s) aborted), every sandbox removed\n", aborted);
	rc = EXIT_PASS;
done:
	for (size_t i = 0; i < n_eargs; i++)
		free(eargs[i].url);
	return rc;
}

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
#include <sys/resource.h>
#include <time.h>

#include "cli.h"
#include "cmd_run.h"
#include "engines.h"
#include "sbx/labels.h"
#include "sbx/log.h"
#include "sbx/serve.h"

#define MAX_POOLS 8

static volatile sig_atomic_t arg_signals, arg_hurry;

static void on_signal(int sig)
{
	(void)sig;
	cli_count_stop_signal(&arg_signals,
			      "\nsandboxctl: serve: draining: no new episodes; live ones "
			      "get --stop-grace to be finished (a second signal aborts them now)\n",
			      "\nsandboxctl: serve: aborting the live episodes\n");
	if (arg_signals == 2)
		arg_hurry = 1;
}

/* Options with state of their own; the plain ones land in arg_so. */
static sbx_serve_opts arg_so = SBX_SERVE_OPTS_INIT;
static sbx_serve_pool_spec arg_pools[MAX_POOLS + 1];
static size_t arg_n_pools;
static cli_engine_arg arg_eargs[CLI_MAX_ENGINES];
static const char *arg_engines[CLI_MAX_ENGINES];
static size_t arg_n_eargs;
static long arg_stop_grace_s;
static const char *arg_reuse;
static const char *arg_pool, *arg_fill_jobs, *arg_idle_ttl, *arg_max_episodes, *arg_max_timeout,
	*arg_stop_grace, *arg_max_sandboxes;

/* "slim=2", "full=1", "repo/img:tag=3". */
static int parse_pool_image(const char *arg)
{
	const char *eq = strrchr(arg, '=');
	static char names[MAX_POOLS][256];
	sbx_serve_pool_spec *out = &arg_pools[arg_n_pools];
	long n = -1;

	if (eq && eq != arg && (size_t)(eq - arg) < sizeof(names[0]) && arg_n_pools < MAX_POOLS)
		n = cli_parse_long(eq + 1, 0, 256);
	if (n < 0) {
		cli_error("serve: --pool-image '%s': IMAGE=N (slim, full or a reference; N "
			  "0..256; at most %d)",
			  arg, MAX_POOLS);
		return -EINVAL;
	}
	snprintf(names[arg_n_pools], sizeof(names[0]), "%.*s", (int)(eq - arg), arg);
	out->image = strcmp(names[arg_n_pools], "slim") == 0   ? SBX_IMAGE_SLIM
		     : strcmp(names[arg_n_pools], "full") == 0 ? SBX_IMAGE_FULL
							       : names[arg_n_pools];
	out->target = (unsigned)n;
	arg_n_pools++;
	return 0;
}

static int parse_engine(const char *arg)
{
	if (arg_n_eargs >= CLI_MAX_ENGINES) {
		cli_error("serve: --engine: at most %d", CLI_MAX_ENGINES);
		return -EINVAL;
	}
	if (cli_parse_engine("serve", arg, false, &arg_eargs[arg_n_eargs]) < 0)
		return -EINVAL;
	arg_engines[arg_n_eargs] = arg_eargs[arg_n_eargs].url;
	arg_n_eargs++;
	return 0;
}

/* A numeric option's value: dflt when not given, -1 (said) when out of [min, max]. */
static long number(const char *name, const char *text, long min, long max, long dflt)
{
	long v;

	if (!text)
		return dflt;
	v = cli_parse_long(text, min, max);
	if (v < 0)
		cli_error("serve: --%s '%s': not a number in range", name, text);
	return v;
}

static const cli_option serve_options[] = {
	{.text = "Usage: sandboxctl serve [options]\n\n"
		 "An episode service for RL training loops: a JSON API that hands out\n"
		 "episodes (one sandbox each, through the same lifecycle as 'run') and\n"
		 "grades them when the client finishes. Prints its URL, with the token, on\n"
		 "stdout. Every request needs the token: in the path (URL/v1/...) or as\n"
		 "'Authorization: Bearer TOKEN'; without it: 401.\n\n"
		 "  POST   /v1/episodes {\"task\", \"seed\", \"timeout\", \"tags\"}  claim: "
		 "answers\n"
		 "         {id, mcp_url, sse_url, rest_url, prompt, deadline} once the\n"
		 "         sandbox's server is ready\n"
		 "  GET    /v1/episodes[/ID]        state (and the result once finished)\n"
		 "  POST   /v1/episodes/ID/finish   collect, grade, remove: {reward, status,\n"
		 "         passed, grade, run_dir, timings_ms}\n"
		 "  DELETE /v1/episodes/ID          abort (status interrupted, not graded)\n"
		 "  GET    /v1/health, /metrics (Prometheus text)\n"
		 "  /openenv/TASK                  an OpenEnv environment (openenv-core's\n"
		 "         clients: base_url URL/openenv/TASK, WebSocket /ws; at most 64\n"
		 "         sessions)\n"
		 "An episode past its deadline is finished by the service (status timeout,\n"
		 "graded); a later finish answers that result. See docs/serve.md.\n"},
	{.heading = "Options:", .column = 22},
	{"listen", .value = &arg_so.listen, .usage = "--listen ADDR",
	 .help = "127.0.0.1:PORT (default 127.0.0.1:0, any free port)\n"
		 "or unix:PATH (a socket of mode 0600)"},
	{"pool", .value = &arg_pool, .usage = "--pool N",
	 .help = "keep N slim (or --image) sandboxes started and ready\n"
		 "(default 0)"},
	{"pool-image", .parse = parse_pool_image, .usage = "--pool-image IMG=N",
	 .help = "keep N of IMG ready: slim, full or an image reference;\n"
		 "may repeat. A claim whose task fits (same image and\n"
		 "limits, not a GUI task) takes one; else it starts\n"
		 "cold (counted in /metrics)"},
	{"image", .value = &arg_so.image, .usage = "--image REF",
	 .help = "every episode's image (default: each task's); any\n"
		 "linux/amd64 image, ours or not; --pool N keeps N of\n"
		 "it (or --pool-image REF=N)"},
	{"fill-jobs", .value = &arg_fill_jobs, .usage = "--fill-jobs N",
	 .help = "warm sandboxes started at once (default 2)"},
	{"reuse", .value = &arg_reuse, .usage = "--reuse N",
	 .help = "a warm sandbox serves up to N episodes or deleted\n"
		 "/v1/sandboxes sandboxes (default 1: single use),\n"
		 "reset in place between two by PID 1\n"
		 "and checked; one whose reset fails or finds\n"
		 "anything is removed (docs/serve.md, \"Reuse\")"},
	{"idle-ttl", .value = &arg_idle_ttl, .usage = "--idle-ttl S",
	 .help = "a warm sandbox unclaimed S seconds is replaced\n"
		 "(default 600); its PID 1 ends it by itself after\n"
		 "S + --max-timeout + 60 s, so a killed service leaves\n"
		 "nothing running"},
	{"max-episodes", .value = &arg_max_episodes, .usage = "--max-episodes N",
	 .help = "episodes live at once; more get 429 (default 64)"},
	{"max-sandboxes", .value = &arg_max_sandboxes, .usage = "--max-sandboxes N",
	 .help = "sandboxes without a task (/v1/sandboxes) at once; more\n"
		 "get 429 (default 64)"},
	{"max-timeout", .value = &arg_max_timeout, .usage = "--max-timeout S",
	 .help = "the longest \"timeout\" a claim may ask (default 3600)"},
	{"stop-grace", .value = &arg_stop_grace, .usage = "--stop-grace S",
	 .help = "on SIGINT/SIGTERM, seconds live episodes get to be\n"
		 "finished by their clients before they are aborted\n"
		 "(default 10; a second signal aborts them at once)"},
	{"engine", .parse = parse_engine, .usage = "--engine URL",
	 .help = "a Docker engine (unix:///path or tcp://host:port); repeat\n"
		 "for several: each keeps the pools, a claim takes a\n"
		 "warm sandbox from whichever has one (cold starts go\n"
		 "to the least busy), and one that fails 3 times in a\n"
		 "row is drained while another is left"},
	{"runtime", .value = &arg_so.runtime, .usage = "--runtime NAME",
	 .help = "OCI runtime of every sandbox, warm or cold, e.g. runsc\n"
		 "(default: the engine's); an engine without it is\n"
		 "refused at start (exit 3), as is runsc registered\n"
		 "without --oci-seccomp unless --allow-no-seccomp"},
	{"allow-no-seccomp", .flag = &cli_allow_no_seccomp},
	{"tasks-dir", .value = &arg_so.tasks_dir, .usage = "--tasks-dir DIR",
	 .help = "where task names are looked up"},
	{"runs-dir", .value = &arg_so.runs_dir, .usage = "--runs-dir DIR",
	 .help = "where run directories go (default runs)"},
	{"token", .value = &arg_so.token, .usage = "--token TOKEN",
	 .help = "use this token (16..64 of A-Z a-z 0-9 _ -) instead of a\n"
		 "random one ($SANDBOXCTL_SERVE_TOKEN works too)"},
	{"test-label", .flag = &arg_so.test, .help = "label sandboxes as test objects"},
	{.usage = "-h, --help", .help = "show this help"},
	{.text = "\nExit status: 0 after a drain, 2 usage, 3 the service could not start.\n"},
	{0},
};

static int parse_args(int argc, char **argv)
{
	const long week = 86400 * 7;
	long pool, fill, ttl, max_eps, max_sbs, max_timeout, reuse;
	int r = cli_parse_options_only("serve", argc, argv, serve_options, NULL);

	if (r <= 0)
		return r;
	pool = number("pool", arg_pool, 0, 256, 0);
	fill = number("fill-jobs", arg_fill_jobs, 1, week, 0);
	ttl = number("idle-ttl", arg_idle_ttl, 1, week, 0);
	max_eps = number("max-episodes", arg_max_episodes, 1, week, 0);
	max_sbs = number("max-sandboxes", arg_max_sandboxes, 1, 100000, 0);
	max_timeout = number("max-timeout", arg_max_timeout, 1, week, 0);
	arg_stop_grace_s = number("stop-grace", arg_stop_grace, 0, week, 10);
	reuse = number("reuse", arg_reuse, 1, 1000000, 1);
	if (reuse < 0 || pool < 0 || fill < 0 || ttl < 0 || max_eps < 0 || max_sbs < 0 ||
	    max_timeout < 0 || arg_stop_grace_s < 0)
		return -EXIT_USAGE;
	if (pool > 0)
		arg_pools[arg_n_pools++] = (sbx_serve_pool_spec){
			arg_so.image ? arg_so.image : SBX_IMAGE_SLIM, (unsigned)pool};
	arg_so.fill_concurrency = (unsigned)fill;
	arg_so.reuse = (uint32_t)reuse;
	arg_so.idle_ttl_s = (uint32_t)ttl;
	arg_so.max_episodes = (unsigned)max_eps;
	arg_so.max_sandboxes = (unsigned)max_sbs;
	arg_so.max_timeout_s = (uint32_t)max_timeout;
	return 1;
}

static void sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

/* Every engine (without --engine: the default one) answers, holds the pools'
 * images and has --runtime now: one clear error and exit 3, not a service whose
 * every claim fails. */
static int check_engines(void)
{
	char *images[MAX_POOLS + 2] = {0};

	for (size_t i = 0; i < arg_n_pools; i++)
		images[i] = (char *)arg_pools[i].image;
	if (arg_so.image)
		images[arg_n_pools] = (char *)arg_so.image;
	if (arg_n_eargs == 0)
		return cli_check_engines("serve", &(cli_engine_arg){0}, 1, images, arg_so.runtime,
					 NULL, NULL, NULL);
	return cli_check_engines("serve", arg_eargs, arg_n_eargs, images, arg_so.runtime, NULL,
				 NULL, NULL);
}

static int serve(void)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_serve *s = NULL;
	unsigned aborted;

	if (!arg_so.token && getenv("SANDBOXCTL_SERVE_TOKEN") &&
	    getenv("SANDBOXCTL_SERVE_TOKEN")[0])
		arg_so.token = getenv("SANDBOXCTL_SERVE_TOKEN");
	arg_so.pools = arg_pools;
	arg_so.n_pools = arg_n_pools;
	arg_so.engines = arg_engines;
	arg_so.n_engines = arg_n_eargs;
	if (check_engines() < 0)
		return EXIT_ENGINE;
	arg_so.grader = cmd_run__grader();
	arg_so.hurry = &arg_hurry;
	cli_on_stop_signals(on_signal);
	if (sbx_serve_start(&s, &arg_so, &err) < 0) {
		cli_error("serve: %s", sbx_error_message(&err));
		return err.code == -EINVAL ? EXIT_USAGE : EXIT_ENGINE;
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
	aborted = sbx_serve_drain(s, (uint32_t)arg_stop_grace_s);
	sbx_serve_free(s);
	fprintf(stderr, "serve: drained (%u episode(s) aborted), every sandbox removed\n", aborted);
	return EXIT_PASS;
}

/*
 * Every connection costs two descriptors (libmicrohttpd's and the slot
 * guard's copy): 512 tokenless clients alone would reach the usual soft limit
 * of 1024 and make the service's own engine, relay and run-directory opens
 * fail. The soft limit goes up to the hard one.
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int cmd_serve(int argc, char **argv)
{
	int r = parse_args(argc, argv);

	if (r > 0) {
		raise_nofile();
		r = -serve();
	}
	for (size_t i = 0; i < arg_n_eargs; i++)
		free(arg_eargs[i].url);
	return -r;
}

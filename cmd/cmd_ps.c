/* SPDX-License-Identifier: MIT */
/* sandboxctl ps [--run-id ID] [--json]: the sandboxes sandboxctl created. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "sandboxes.h"
#include "sbx/docker.h"
#include "sbx/json.h"
#include "sbx/labels.h"

static bool arg_json;
static const char *arg_run_id;

static const cli_option ps_options[] = {
	{.text = "Usage: sandboxctl ps [--run-id ID] [--json]\n"
		 "\n"
		 "Lists the sandboxes (containers labelled " SBX_LABEL_RUN_ID
		 ") that sandboxctl created,\n"
		 "running or not, newest first: container, run id, task, state, age, and\n"
		 "whether the process that owns it (label " SBX_LABEL_OWNER
		 ") is alive, gone, or on\n"
		 "another host.\n"},
	{.heading = "Options:", .column = 15},
	{"run-id", .value = &arg_run_id, .usage = "--run-id ID",
	 .help = "only the sandbox of that run"},
	{"json", .flag = &arg_json, .help = "one JSON array on stdout, one object per sandbox"},
	{.usage = "-h, --help", .help = "show this help"},
	{.text = "\nExit status: 0 success (also when there are none), 2 usage, 3 engine error.\n"},
	{0},
};

/* "45s", "12m", "3h", "5d". */
static void format_age(char *buf, size_t len, long long secs)
{
	if (secs < 0)
		secs = 0;
	if (secs < 120)
		snprintf(buf, len, "%llds", secs);
	else if (secs < 7200)
		snprintf(buf, len, "%lldm", secs / 60);
	else if (secs < 172800)
		snprintf(buf, len, "%lldh", secs / 3600);
	else
		snprintf(buf, len, "%lldd", secs / 86400);
}

static const char *owner_state(const sbx_docker_container *c)
{
	const char *owner = sbx_docker_label_get(c->labels, c->n_labels, SBX_LABEL_OWNER);
	char host[256];
	size_t n;
	bool gone = false;

	if (!owner || !*owner)
		return "-";
	if (gethostname(host, sizeof(host)) < 0)
		return "?";
	host[sizeof(host) - 1] = '\0';
	n = strlen(host);
	if (strncmp(owner, host, n) != 0 || owner[n] != ':')
		return "other host";
	if (sbx_label_owner_gone(owner, &gone, NULL) < 0)
		return "?";
	return gone ? "gone" : "alive";
}

static int by_created_desc(const void *a, const void *b)
{
	long long x = cli_sandbox_created(a), y = cli_sandbox_created(b);

	return x < y ? 1 : x > y ? -1 : 0;
}

static const char *label_or_dash(const sbx_docker_container *c, const char *key)
{
	const char *v = sbx_docker_label_get(c->labels, c->n_labels, key);

	return v && *v ? v : "-";
}

/* Columns as wide as their longest value (capped), so long run ids never shift the rest. */
static void print_table(const sbx_docker_container *cs, size_t n, long long now)
{
	int w_run = (int)strlen("RUN ID"), w_task = (int)strlen("TASK"), w_state = 7;

	for (size_t i = 0; i < n; i++) {
		int run = (int)strlen(label_or_dash(&cs[i], SBX_LABEL_RUN_ID));
		int task = (int)strlen(label_or_dash(&cs[i], SBX_LABEL_TASK));
		int state = cs[i].state ? (int)strlen(cs[i].state) : 1;

		w_run = run > w_run ? run : w_run;
		w_task = task > w_task ? task : w_task;
		w_state = state > w_state ? state : w_state;
	}
	w_run = w_run > 80 ? 80 : w_run;
	w_task = w_task > 64 ? 64 : w_task;
	w_state = w_state > 16 ? 16 : w_state;
	printf("%-12s  %-*s  %-*s  %-*s  %-5s  %s\n", "CONTAINER", w_run, "RUN ID", w_task, "TASK",
	       w_state, "STATE", "AGE", "OWNER");
	for (size_t i = 0; i < n; i++) {
		const sbx_docker_container *c = &cs[i];
		char age[32];

		format_age(age, sizeof(age), now - cli_sandbox_created(c));
		printf("%-12.12s  %-*.*s  %-*.*s  %-*.*s  %-5s  %s\n", c->id, w_run, w_run,
		       label_or_dash(c, SBX_LABEL_RUN_ID), w_task, w_task,
		       label_or_dash(c, SBX_LABEL_TASK), w_state, w_state,
		       c->state ? c->state : "-", age, owner_state(c));
	}
}

int cmd_ps(int argc, char **argv)
{
	_cleanup_(cli_sandboxes_clear) cli_sandboxes sb = {0};
	long long now = (long long)time(NULL);
	int r;

	r = cli_parse_options_only("ps", argc, argv, ps_options, NULL);
	if (r > 0)
		r = cli_sandboxes_list("ps", arg_run_id, &sb);
	if (r <= 0)
		return -r;
	qsort(sb.v, sb.n, sizeof(*sb.v), by_created_desc);
	if (arg_json) {
		_cleanup_json_ cJSON *arr = cJSON_CreateArray();
		_cleanup_free_ char *text = NULL;

		for (size_t i = 0; arr && i < sb.n; i++) {
			const sbx_docker_container *c = &sb.v[i];
			const char *deadline =
				sbx_docker_label_get(c->labels, c->n_labels, SBX_LABEL_DEADLINE);
			cJSON *o = cJSON_CreateObject();

			if (!o || !cJSON_AddItemToArray(arr, o))
				break;
			sbx_json_add_string(o, "id", c->id);
			sbx_json_add_string(o, "name", c->name);
			sbx_json_add_string(
				o, "run_id",
				sbx_docker_label_get(c->labels, c->n_labels, SBX_LABEL_RUN_ID));
			sbx_json_add_string(
				o, "task",
				sbx_docker_label_get(c->labels, c->n_labels, SBX_LABEL_TASK));
			sbx_json_add_string(o, "image", c->image);
			sbx_json_add_string(o, "state", c->state);
			sbx_json_add_string(o, "status", c->status);
			sbx_json_add_number(o, "created", (double)cli_sandbox_created(c));
			sbx_json_add_number(o, "age_seconds",
					    (double)(now - cli_sandbox_created(c)));
			if (deadline)
				sbx_json_add_number(o, "deadline", atof(deadline));
			sbx_json_add_string(
				o, "owner",
				sbx_docker_label_get(c->labels, c->n_labels, SBX_LABEL_OWNER));
			sbx_json_add_string(o, "owner_state", owner_state(c));
		}
		text = arr ? sbx_json_print(arr) : NULL;
		if (!text) {
			cli_error("ps: out of memory");
			return EXIT_ENGINE;
		}
		puts(text);
	} else {
		print_table(sb.v, sb.n, now);
	}
	return EXIT_PASS;
}

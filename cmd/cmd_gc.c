/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl gc: remove sandboxes whose owner is gone, or older than a limit;
 * then the task images and bundle volumes the build no longer uses.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "sandboxes.h"
#include "sbx/docker.h"
#include "sbx/image.h"
#include "sbx/json.h"
#include "sbx/labels.h"

static bool arg_json;
static bool arg_dry_run;
static const char *arg_run_id;
static long long arg_older_than = -1; /* seconds; -1: not given */

/* "1h30m", "90s", "2d", "45" -> seconds; -1 when malformed. */
static long long parse_duration(const char *s)
{
	long long total = 0;

	if (!s || !*s)
		return -1;
	while (*s) {
		char *end;
		long long v, unit;

		if (*s < '0' || *s > '9')
			return -1;
		errno = 0;
		v = strtoll(s, &end, 10);
		if (errno)
			return -1;
		switch (*end) {
		case '\0':
			unit = 1;
			break;
		case 's':
			unit = 1;
			end++;
			break;
		case 'm':
			unit = 60;
			end++;
			break;
		case 'h':
			unit = 3600;
			end++;
			break;
		case 'd':
			unit = 86400;
			end++;
			break;
		default:
			return -1;
		}
		if (v > (LLONG_MAX - total) / unit)
			return -1;
		total += v * unit;
		s = end;
	}
	return total;
}

static int parse_older_than(const char *text)
{
	arg_older_than = parse_duration(text);
	if (arg_older_than < 0) {
		cli_error("gc: invalid duration '%s' (e.g. 90s, 30m, 2h, 1d)", text);
		return -EINVAL;
	}
	return 0;
}

static const cli_option gc_options[] = {
	{.text = "Usage: sandboxctl gc [--older-than DURATION] [--run-id ID] [--dry-run] [--json]\n"
		 "\n"
		 "Removes sandboxes (containers labelled " SBX_LABEL_RUN_ID
		 ") that are left behind:\n"
		 "  - whose owning process (label " SBX_LABEL_OWNER
		 ", \"host:pid:start-time\") is gone,\n"
		 "    on this host: a reused pid is recognised by its start time;\n"
		 "  - with --older-than, also any sandbox created longer ago than DURATION,\n"
		 "    whether its owner is alive or not.\n"
		 "Sandboxes owned by another host are removed only by --older-than.\n"
		 "Removal is forced (a running sandbox is killed) and takes its anonymous\n"
		 "volumes. Then, unless --run-id is given, what the build no longer uses:\n"
		 "  - task images (sandboxctl-task/<task>:<hash>, Harbor tasks' own) of a\n"
		 "    task that has a newer one; with --older-than also any older than DURATION;\n"
		 "  - any-image bundle volumes (" SBX_BUNDLE_PREFIX "<hash>) of an earlier\n"
		 "    " SBX_IMAGE_SLIM " build.\n"
		 "Never an image or volume that a container uses, running or not.\n"
		 "Running gc again is harmless: what is already gone is not an error.\n"},
	{.heading = "Options:", .column = 25},
	{"older-than", .parse = parse_older_than, .usage = "--older-than DURATION",
	 .help = "e.g. 90s, 30m, 2h, 1d, 1h30m (a bare number is seconds)"},
	{"run-id", .value = &arg_run_id, .usage = "--run-id ID",
	 .help = "only the sandbox of that run"},
	{"dry-run", .flag = &arg_dry_run, .help = "print what would be removed, remove nothing"},
	{"json", .flag = &arg_json,
	 .help = "one JSON array on stdout, one object per sandbox, image or volume acted on"},
	{.usage = "-h, --help", .help = "show this help"},
	{.text = "\nExit status: 0 success (also when nothing was left), 2 usage, 3 engine error\n"
		 "or a sandbox, image or volume that could not be removed.\n"},
	{0},
};

/* Why c should go, or NULL to keep it. */
static const char *reason_to_remove(const sbx_docker_container *c, long long now)
{
	const char *owner = sbx_docker_label_get(c->labels, c->n_labels, SBX_LABEL_OWNER);
	bool gone = false;

	if (owner && sbx_label_owner_gone(owner, &gone, NULL) == 0 && gone)
		return "owner gone";
	if (arg_older_than >= 0 && now - cli_sandbox_created(c) >= arg_older_than)
		return "older than the limit";
	return NULL;
}

/* Task images and bundle volumes (sbx_image_gc_list); how many could not be removed. */
static int gc_images(sbx_docker *d, long long now, cJSON *arr)
{
	_cleanup_free_ sbx_image_gc_item *items = NULL;
	sbx_error err = SBX_ERROR_INIT;
	size_t n = 0;
	int failed = 0;

	if (sbx_image_gc_list(d, now, arg_older_than, &items, &n, &err) < 0) {
		cli_error("gc: images and volumes: %s", err.msg);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		const sbx_image_gc_item *it = &items[i];
		const char *kind = it->kind == SBX_IMAGE_GC_TASK_IMAGE ? "image" : "volume";
		bool removed = false;

		sbx_error_clear(&err);
		if (!arg_dry_run) {
			int r = sbx_image_gc_remove(d, it, &err);

			removed = r == 0 || r == -ENOENT;
			if (!removed) {
				failed++;
				cli_error("gc: %s '%s': %s", kind, it->name, err.msg);
			}
		}
		if (arr) {
			cJSON *o = cJSON_CreateObject();
			if (o && cJSON_AddItemToArray(arr, o)) {
				sbx_json_add_string(o, "kind", kind);
				sbx_json_add_string(o, "name", it->name);
				sbx_json_add_string(o, "reason", it->reason);
				sbx_json_add_bool(o, "removed", removed);
				if (!arg_dry_run && !removed)
					sbx_json_add_string(o, "error", err.msg);
			}
		} else if (arg_dry_run || removed) {
			printf("%s %s %s  (%s)\n", arg_dry_run ? "would remove" : "removed", kind,
			       it->name, it->reason);
		}
	}
	return failed;
}

int cmd_gc(int argc, char **argv)
{
	_cleanup_(cli_sandboxes_clear) cli_sandboxes sb = {0};
	_cleanup_json_ cJSON *arr = NULL;
	sbx_error err = SBX_ERROR_INIT;
	long long now = (long long)time(NULL);
	int r, failed = 0;

	r = cli_parse_options_only("gc", argc, argv, gc_options, NULL);
	if (r > 0)
		r = cli_sandboxes_list("gc", arg_run_id, &sb);
	if (r <= 0)
		return -r;
	arr = arg_json ? cJSON_CreateArray() : NULL;
	for (size_t i = 0; i < sb.n; i++) {
		const sbx_docker_container *c = &sb.v[i];
		const char *why = reason_to_remove(c, now);
		const char *run = sbx_docker_label_get(c->labels, c->n_labels, SBX_LABEL_RUN_ID);
		const char *task = sbx_docker_label_get(c->labels, c->n_labels, SBX_LABEL_TASK);
		bool removed = false;

		if (!why)
			continue;
		sbx_error_clear(&err);
		if (!arg_dry_run) {
			r = sbx_docker_container_remove(sb.engine, c->id, true, true, &err);
			/* Removed meanwhile (another gc, the owner's own cleanup): fine. */
			removed = r == 0 || r == -ENOENT;
			if (!removed) {
				failed++;
				cli_error("gc: %s", err.msg);
			}
		}
		if (arr) {
			cJSON *o = cJSON_CreateObject();
			if (o && cJSON_AddItemToArray(arr, o)) {
				sbx_json_add_string(o, "id", c->id);
				sbx_json_add_string(o, "run_id", run);
				sbx_json_add_string(o, "task", task);
				sbx_json_add_string(o, "state", c->state);
				sbx_json_add_string(o, "reason", why);
				sbx_json_add_bool(o, "removed", removed);
				if (!arg_dry_run && !removed)
					sbx_json_add_string(o, "error", err.msg);
			}
		} else if (arg_dry_run || removed) {
			printf("%s %.12s  run %s  task %s  %s  (%s)\n",
			       arg_dry_run ? "would remove" : "removed", c->id, run,
			       task ? task : "-", c->state, why);
		}
	}
	if (!arg_run_id)
		failed += gc_images(sb.engine, now, arr);
	if (arr) {
		_cleanup_free_ char *text = sbx_json_print(arr);
		if (text)
			puts(text);
	}
	return failed ? EXIT_ENGINE : EXIT_PASS;
}

/* SPDX-License-Identifier: MIT */
/* sandboxctl doctor [--json]: is this machine ready to run sandboxes? */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sbx/docker.h"
#include "sbx/json.h"
#include "sbx/labels.h"

static bool arg_json;

enum { CHECK_OK, CHECK_WARN, CHECK_FAIL };

static const char *const status_names[] = {"ok", "warn", "fail"};

typedef struct report {
	cJSON *checks; /* array, for --json */
	int worst;
} report;

/* Records one check; fix says how to repair it (NULL when ok). */
static void check(report *rep, int status, const char *name, const char *detail, const char *fix)
{
	if (status > rep->worst)
		rep->worst = status;
	if (arg_json) {
		cJSON *o = cJSON_CreateObject();
		if (o && cJSON_AddItemToArray(rep->checks, o)) {
			sbx_json_add_string(o, "name", name);
			sbx_json_add_string(o, "status", status_names[status]);
			sbx_json_add_string(o, "detail", detail);
			if (fix)
				sbx_json_add_string(o, "fix", fix);
		}
		return;
	}
	printf("%-4s  %-16s %s\n", status_names[status], name, detail);
	if (fix && status != CHECK_OK)
		printf("      %-16s fix: %s\n", "", fix);
}

static const cli_option doctor_options[] = {
	{.text = "Usage: sandboxctl doctor [--json]\n"
		 "\n"
		 "Checks that the Docker engine is reachable and ready for sandboxes, and\n"
		 "says how to fix each check that fails:\n"
		 "  engine      reachable at $DOCKER_HOST (default unix:///var/run/docker.sock)\n"
		 "  api         the negotiated Engine API version (" SBX_DOCKER_API_MIN
		 " or newer needed)\n"
		 "  server      engine version, OS/architecture, kernel, distribution\n"
		 "  storage     storage driver\n"
		 "  runtimes    registered OCI runtimes, whether gVisor (runsc) is one and\n"
		 "              has --oci-seccomp (without it the seccomp profile is ignored)\n"
		 "  cgroups     cgroup version and driver\n"
		 "  security    seccomp, rootless mode\n"
		 "  image:full  " SBX_IMAGE_FULL " (label " SBX_LABEL_IMAGE
		 "=" SBX_IMAGE_FLAVOUR_FULL ")\n"
		 "  image:slim  " SBX_IMAGE_SLIM " (label " SBX_LABEL_IMAGE
		 "=" SBX_IMAGE_FLAVOUR_SLIM ")\n"},
	{.heading = "Options:", .column = 14},
	{"json", .flag = &arg_json,
	 .help = "one JSON object on stdout: {\"ok\", \"engine\", \"images\", \"checks\"}"},
	{.usage = "-h, --help", .help = "show this help"},
	{.text = "\nExit status: 0 ready (warnings allowed), 2 usage, 3 the engine is unreachable\n"
		 "or a check failed. An unreachable engine gives one line on stderr.\n"},
	{0},
};

/*
 * Where runsc is installed on this host ($PATH, then /usr/bin and
 * /usr/local/bin), into out; false when nowhere.
 */
static bool find_runsc(char *out, size_t size)
{
	const char *path = getenv("PATH");
	char dirs[4096];

	snprintf(dirs, sizeof(dirs), "%s:/usr/bin:/usr/local/bin", path ? path : "");
	for (char *save = NULL, *dir = strtok_r(dirs, ":", &save); dir;
	     dir = strtok_r(NULL, ":", &save)) {
		if (*dir != '/' || (size_t)snprintf(out, size, "%s/runsc", dir) >= size)
			continue;
		if (access(out, X_OK) == 0)
			return true;
	}
	return false;
}

static void engine_checks(report *rep, sbx_docker *d, const sbx_docker_system *s, cJSON *engine)
{
	const sbx_docker_runtime *bare = NULL; /* gVisor without --oci-seccomp */
	char line[1024], runsc[512], fix[1024];
	size_t off = 0;

	snprintf(line, sizeof(line), "%s", sbx_docker_host(d));
	check(rep, CHECK_OK, "engine", line, NULL);
	snprintf(line, sizeof(line), "speaking %s (engine supports %s, at least %s)",
		 sbx_docker_api_version(d), s->api_version, s->min_api_version);
	check(rep, CHECK_OK, "api", line, NULL);
	snprintf(line, sizeof(line), "Docker %s, %s/%s, kernel %s, %s", s->server_version, s->os,
		 s->arch, s->kernel_version, s->operating_system);
	check(rep, strcmp(s->os, "linux") == 0 ? CHECK_OK : CHECK_FAIL, "server", line,
	      "sandboxes need a Linux engine (switch Docker Desktop to Linux containers)");
	check(rep, CHECK_OK, "storage", s->storage_driver, NULL);

	line[0] = '\0';
	for (char **r = s->runtimes; *r && off < sizeof(line) - 64; r++)
		off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s%s", off ? ", " : "",
					*r,
					strcmp(*r, s->default_runtime) == 0 ? " (default)" : "");
	for (size_t i = 0; i < s->n_runtime_info && !bare; i++)
		if (sbx_docker_system_runsc_ignores_seccomp(s, s->runtime_info[i].name))
			bare = &s->runtime_info[i];
	if (bare) {
		/* Then tool code under it could unshare user and mount namespaces. */
		snprintf(line + off, sizeof(line) - off,
			 "; '%s' (gVisor) is registered without --oci-seccomp: it ignores the "
			 "sandbox's seccomp profile, and --runtime %s is refused",
			 bare->name, bare->name);
		snprintf(fix, sizeof(fix),
			 "add \"--oci-seccomp\" to \"runtimeArgs\" of \"%s\" in "
			 "/etc/docker/daemon.json ({\"runtimes\": {\"%s\": {\"path\": \"%s\", "
			 "\"runtimeArgs\": [\"--network=none\", \"--oci-seccomp\"]}}}), restart "
			 "dockerd",
			 bare->name, bare->name, bare->path);
		check(rep, CHECK_WARN, "runtimes", line, fix);
	} else if (sbx_docker_system_has_runtime(s, "runsc")) {
		check(rep, CHECK_OK, "runtimes", line, NULL);
	} else if (find_runsc(runsc, sizeof(runsc))) {
		/* --network=none: runsc refuses to start in the root network namespace
		 * otherwise, and sandboxes have no network anyway. --oci-seccomp: else
		 * runsc ignores the sandbox's seccomp profile (result.json's
		 * hardening.pid1.seccomp_filter says which). */
		snprintf(line + off, sizeof(line) - off,
			 "; runsc (gVisor) is installed at %s but not registered", runsc);
		snprintf(fix, sizeof(fix),
			 "add {\"runtimes\": {\"runsc\": {\"path\": \"%s\", \"runtimeArgs\": "
			 "[\"--network=none\", \"--oci-seccomp\"]}}} to /etc/docker/daemon.json, "
			 "restart dockerd, "
			 "then 'sandboxctl run --runtime runsc'",
			 runsc);
		check(rep, CHECK_WARN, "runtimes", line, fix);
	} else {
		snprintf(line + off, sizeof(line) - off, "; runsc (gVisor) not registered");
		check(rep, CHECK_WARN, "runtimes", line,
		      "optional: install gVisor (Debian: apt-get install runsc) and register "
		      "'runsc' under \"runtimes\" in /etc/docker/daemon.json, then 'sandboxctl "
		      "run --runtime runsc'");
	}
	snprintf(line, sizeof(line), "v%s, driver %s",
		 s->cgroup_version[0] ? s->cgroup_version : "?", s->cgroup_driver);
	check(rep, CHECK_OK, "cgroups", line, NULL);
	{
		bool seccomp = false;
		for (char **o = s->security_options; *o; o++)
			if (strstr(*o, "name=seccomp"))
				seccomp = true;
		snprintf(line, sizeof(line), "seccomp %s%s", seccomp ? "on" : "off",
			 s->rootless ? ", rootless" : "");
		check(rep, seccomp ? CHECK_OK : CHECK_WARN, "security", line,
		      "run dockerd with its default seccomp profile (no --seccomp-profile "
		      "unconfined)");
	}
	if (engine) {
		cJSON *rt = cJSON_AddArrayToObject(engine, "runtimes");
		sbx_json_add_string(engine, "host", sbx_docker_host(d));
		sbx_json_add_string(engine, "api_version", sbx_docker_api_version(d));
		sbx_json_add_string(engine, "engine_api_version", s->api_version);
		sbx_json_add_string(engine, "server_version", s->server_version);
		sbx_json_add_string(engine, "os", s->os);
		sbx_json_add_string(engine, "arch", s->arch);
		sbx_json_add_string(engine, "kernel", s->kernel_version);
		sbx_json_add_string(engine, "operating_system", s->operating_system);
		sbx_json_add_string(engine, "storage_driver", s->storage_driver);
		sbx_json_add_string(engine, "cgroup_version", s->cgroup_version);
		sbx_json_add_string(engine, "cgroup_driver", s->cgroup_driver);
		sbx_json_add_string(engine, "default_runtime", s->default_runtime);
		sbx_json_add_bool(engine, "runsc", sbx_docker_system_has_runtime(s, "runsc"));
		sbx_json_add_bool(engine, "rootless", s->rootless);
		for (char **r = s->runtimes; rt && *r; r++)
			cJSON_AddItemToArray(rt, cJSON_CreateString(*r));
	}
}

static void image_check(report *rep, sbx_docker *d, const char *ref, const char *flavour,
			cJSON *images)
{
	_cleanup_(sbx_docker_image_freep) sbx_docker_image *img = NULL;
	sbx_error err = SBX_ERROR_INIT;
	char name[32], line[512], fix[128];
	const char *label;
	int r;

	snprintf(name, sizeof(name), "image:%s", flavour);
	snprintf(fix, sizeof(fix), "sandboxctl build --%s", flavour);
	r = sbx_docker_image_inspect(d, ref, &img, &err);
	if (images) {
		cJSON *o = cJSON_CreateObject();
		if (o && cJSON_AddItemToArray(images, o)) {
			sbx_json_add_string(o, "name", ref);
			sbx_json_add_string(o, "flavour", flavour);
			sbx_json_add_bool(o, "present", r == 0);
			if (r == 0) {
				sbx_json_add_string(o, "id", img->id);
				sbx_json_add_number(o, "created", (double)img->created);
				sbx_json_add_number(o, "size", (double)img->size);
			}
		}
	}
	if (r == -ENOENT) {
		snprintf(line, sizeof(line), "%s is missing", ref);
		check(rep, CHECK_FAIL, name, line, fix);
		return;
	}
	if (r < 0) {
		check(rep, CHECK_FAIL, name, err.msg, "see 'sandboxctl doctor' engine checks");
		return;
	}
	label = sbx_docker_label_get(img->labels, img->n_labels, SBX_LABEL_IMAGE);
	if (!label || strcmp(label, flavour) != 0) {
		snprintf(line, sizeof(line), "%s exists but is not labelled %s=%s", ref,
			 SBX_LABEL_IMAGE, flavour);
		check(rep, CHECK_FAIL, name, line, fix);
		return;
	}
	snprintf(line, sizeof(line), "%s %.19s, %.0f MB", ref, img->id, (double)img->size / 1e6);
	check(rep, CHECK_OK, name, line, NULL);
}

int cmd_doctor(int argc, char **argv)
{
	_cleanup_(sbx_docker_freep) sbx_docker *d = NULL;
	_cleanup_(sbx_docker_system_freep) sbx_docker_system *s = NULL;
	_cleanup_json_ cJSON *root = NULL;
	sbx_error err = SBX_ERROR_INIT;
	report rep = {0};
	cJSON *engine = NULL, *images = NULL;
	int r;

	r = cli_parse_options_only("doctor", argc, argv, doctor_options, NULL);
	if (r <= 0)
		return -r;
	if (arg_json) {
		root = cJSON_CreateObject();
		engine = cJSON_AddObjectToObject(root, "engine");
		images = cJSON_AddArrayToObject(root, "images");
		rep.checks = cJSON_AddArrayToObject(root, "checks");
		if (!root || !engine || !images || !rep.checks) {
			cli_error("doctor: out of memory");
			return EXIT_ENGINE;
		}
	}
	r = sbx_docker_open(&d, NULL, &err);
	if (r == 0)
		r = sbx_docker_system_get(d, &s, &err);
	if (r < 0) {
		/* One line, whatever the mode: scripts and people both read it. */
		if (arg_json) {
			_cleanup_free_ char *text = NULL;
			check(&rep, CHECK_FAIL, "engine", err.msg,
			      "start dockerd, or point DOCKER_HOST at a running engine");
			sbx_json_add_bool(root, "ok", false);
			text = sbx_json_print(root);
			if (text)
				puts(text);
		}
		cli_error("doctor: engine: %s", err.msg);
		return EXIT_ENGINE;
	}
	engine_checks(&rep, d, s, engine);
	image_check(&rep, d, SBX_IMAGE_FULL, SBX_IMAGE_FLAVOUR_FULL, images);
	image_check(&rep, d, SBX_IMAGE_SLIM, SBX_IMAGE_FLAVOUR_SLIM, images);
	if (arg_json) {
		_cleanup_free_ char *text = NULL;
		sbx_json_add_bool(root, "ok", rep.worst != CHECK_FAIL);
		text = sbx_json_print(root);
		if (!text) {
			cli_error("doctor: out of memory");
			return EXIT_ENGINE;
		}
		puts(text);
	}
	return rep.worst == CHECK_FAIL ? EXIT_ENGINE : EXIT_PASS;
}

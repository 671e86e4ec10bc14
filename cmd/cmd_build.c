/* SPDX-License-Identifier: MIT */
/* sandboxctl build: the sandbox image(s), through lib/image. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "sbx/docker.h"
#include "sbx/image.h"
#include "sbx/labels.h"

static bool arg_slim, arg_full, arg_quiet, arg_json, arg_force, arg_force_base, arg_registry;
static const char *arg_mirror, *arg_suite, *arg_source_dir, *arg_tmp_dir;

static const cli_option build_options[] = {
	{.text = "Usage: sandboxctl build [--slim|--full|--all] [OPTIONS]\n\n"
		 "Builds the sandbox image through the Docker Engine API, without a registry:\n"
		 "Debian bases are made from this host's apt mirror with mmdebstrap (needs root\n"
		 "or unprivileged user namespaces) and imported, then images/Dockerfile is built\n"
		 "on top. Images are tagged <repo>:<hash> and <repo>:latest, the hash covering\n"
		 "every input (Dockerfile, helpers, server sources, package lists, bases); an\n"
		 "image whose hash exists is not built again.\n\n"},
	{"full", .flag = &arg_full,
	 .help = "the full image (default): Xvfb and LibreOffice Calc\n(" SBX_IMAGE_REPO_FULL ")"},
	{"slim", .flag = &arg_slim,
	 .help = "the slim image: server and Python only (" SBX_IMAGE_REPO_SLIM ")"},
	{"all", .flag = &arg_slim, .also = &arg_full, .help = "both"},
	{"force", .flag = &arg_force,
	 .help = "build the image even when it is up to date (no cache)"},
	{"force-base", .flag = &arg_force_base, .also = &arg_force,
	 .help = "also make the Debian bases again (e.g. for mirror updates)"},
	{"registry-base", .flag = &arg_registry,
	 .help = "build FROM debian:bookworm-slim (the engine pulls it)\n"
		 "instead of making bases with mmdebstrap"},
	{"mirror", .value = &arg_mirror, .usage = "--mirror URL|FILE",
	 .help = "Debian mirror URL or apt sources file for mmdebstrap\n"
		 "(default: $SBX_DEBIAN_MIRROR, else the host's\n"
		 "/etc/apt/sources.list.d/debian.sources)"},
	{"suite", .value = &arg_suite, .usage = "--suite NAME",
	 .help = "Debian suite (default bookworm)"},
	{"source-dir", .value = &arg_source_dir, .usage = "--source-dir DIR",
	 .help = "the sandboxctl source tree (default: $SBX_SOURCE_ROOT,\n"
		 "else the tree this program was built from)"},
	{"tmp-dir", .value = &arg_tmp_dir, .usage = "--tmp-dir DIR",
	 .help = "where base tarballs are written (default $TMPDIR or /var/tmp)"},
	{"quiet", 'q', .flag = &arg_quiet, .help = "print only the image references"},
	{"json", .flag = &arg_json,
	 .help = "JSON lines on stdout: one per event, one result per image\n"
		 "(the last, \"event\":\"result\", has ref, id, inputs_hash,\n"
		 "built, bases_built, size, seconds)"},
	{.usage = "-h, --help", .help = "this text"},
	{.text = "\nProgress goes to stderr: phases and build steps; every line of the engine's\n"
		 "and mmdebstrap's output with 'sandboxctl --verbose build'.\n\n"
		 "Exit status: 0 built or up to date, 2 usage or a bad source tree, 3 engine or\n"
		 "build failure.\n"},
	{0},
};

static int parse_args(int argc, char **argv)
{
	int r = cli_parse_options_only("build", argc, argv, build_options, NULL);

	if (r > 0 && !arg_slim && !arg_full)
		arg_full = true;
	return r;
}

static void print_json_event(const sbx_image_event *ev, const char *variant)
{
	static const char *kinds[] = {"phase", "output", "skip", "done", "error"};
	_cleanup_json_ cJSON *o = cJSON_CreateObject();
	_cleanup_free_ char *s = NULL;

	if (!o || sbx_json_add_string(o, "event", kinds[ev->kind]) < 0 ||
	    sbx_json_add_string(o, "variant", variant) < 0 ||
	    sbx_json_add_string(o, "phase", ev->phase) < 0 ||
	    sbx_json_add_string(o, "message", ev->message) < 0 ||
	    sbx_json_add_number(o, "elapsed", ev->elapsed_s) < 0)
		return;
	s = sbx_json_print(o);
	if (s) {
		puts(s);
		fflush(stdout);
	}
}

static void on_event(const sbx_image_event *ev, void *payload)
{
	const char *variant = payload;

	if (arg_json) {
		print_json_event(ev, variant);
		return;
	}
	if (arg_quiet)
		return;
	/* Build output is long: the steps show progress, the rest only with --verbose. */
	if (ev->kind == SBX_IMAGE_EVENT_OUTPUT && !arg_verbose &&
	    !(strcmp(ev->phase, "image") == 0 && strncmp(ev->message, "Step ", 5) == 0) &&
	    strncmp(ev->message, "I: ", 3) != 0 && strncmp(ev->message, "importing", 9) != 0)
		return;
	if (ev->kind == SBX_IMAGE_EVENT_OUTPUT)
		fprintf(stderr, "  %s\n", ev->message);
	else
		fprintf(stderr, "[%6.1fs] %s %s: %s\n", ev->elapsed_s, variant, ev->phase,
			ev->message);
}

static void print_result(const sbx_image_result *r, const char *variant)
{
	if (arg_json) {
		_cleanup_json_ cJSON *o = cJSON_CreateObject();
		_cleanup_free_ char *s = NULL;

		if (!o || sbx_json_add_string(o, "event", "result") < 0 ||
		    sbx_json_add_string(o, "variant", variant) < 0 ||
		    sbx_json_add_string(o, "ref", r->ref) < 0 ||
		    sbx_json_add_string(o, "latest", r->latest_ref) < 0 ||
		    sbx_json_add_string(o, "id", r->id) < 0 ||
		    sbx_json_add_string(o, "inputs_hash", r->inputs_hash) < 0 ||
		    sbx_json_add_bool(o, "built", r->built) < 0 ||
		    sbx_json_add_number(o, "bases_built", r->bases_built) < 0 ||
		    sbx_json_add_number(o, "size", (double)r->size) < 0 ||
		    sbx_json_add_number(o, "seconds", r->seconds) < 0)
			return;
		s = sbx_json_print(o);
		if (s)
			puts(s);
	} else if (arg_quiet) {
		puts(r->ref);
	} else {
		printf("%s %s (%s in %.1f s, %.0f MB)\n", r->ref, variant,
		       r->built ? "built" : "up to date", r->seconds, (double)r->size / 1e6);
	}
	fflush(stdout);
}

int cmd_build(int argc, char **argv)
{
	sbx_image_variant variants[2];
	size_t nv = 0;
	sbx_docker *d = NULL;
	sbx_error err = SBX_ERROR_INIT;
	int64_t started = (int64_t)time(NULL);
	int r, rc = EXIT_PASS;

	r = parse_args(argc, argv);
	if (r <= 0)
		return -r;
	if (arg_slim)
		variants[nv++] = SBX_IMAGE_VARIANT_SLIM;
	if (arg_full)
		variants[nv++] = SBX_IMAGE_VARIANT_FULL;

	r = sbx_docker_open(&d, NULL, &err);
	if (r < 0) {
		cli_error("%s", sbx_error_message(&err));
		return EXIT_ENGINE;
	}
	for (size_t i = 0; i < nv && rc == EXIT_PASS; i++) {
		sbx_image_build_opts o = SBX_IMAGE_BUILD_OPTS_INIT;
		const char *name = sbx_image_variant_name(variants[i]);
		sbx_image_result *res = NULL;

		o.variant = variants[i];
		o.source_dir = arg_source_dir;
		o.force = arg_force;
		o.rebuild_bases_before = arg_force_base ? started : 0;
		o.bases = arg_registry ? SBX_IMAGE_BASES_REGISTRY : SBX_IMAGE_BASES_LOCAL;
		o.mirror = arg_mirror;
		o.suite = arg_suite;
		o.tmp_dir = arg_tmp_dir;
		o.progress = on_event;
		o.progress_payload = (void *)name;
		sbx_error_clear(&err);
		r = sbx_image_build(d, &o, &res, &err);
		if (r < 0) {
			if (arg_json)
				print_json_event(
					&(sbx_image_event){.kind = SBX_IMAGE_EVENT_ERROR,
							   .phase = "build",
							   .message = sbx_error_message(&err)},
					name);
			cli_error("build %s: %s", name, sbx_error_message(&err));
			/* A bad option, source tree or package list is the user's to fix; the rest
			 * is the engine's. */
			rc = r == -EINVAL || r == -ENOENT ? EXIT_USAGE : EXIT_ENGINE;
		} else {
			print_result(res, name);
		}
		sbx_image_result_free(res);
	}
	sbx_docker_free(d);
	return rc;
}

/* SPDX-License-Identifier: MIT */
/* --engine URL[#jobs=N] and the engines' check, for sweep and serve. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "engines.h"
#include "sbx/buf.h"
#include "sbx/docker.h"
#include "sbx/image.h"
#include "sbx/log.h"

int cli_parse_engine(const char *cmd, const char *arg, bool jobs, cli_engine_arg *out)
{
	const char *hash = strchr(arg, '#');

	*out = (cli_engine_arg){0};
	if (hash) {
		long n;

		if (!jobs)
			return cli_error("%s: --engine '%s': expected a URL", cmd, arg), -1;
		if (strncmp(hash, "#jobs=", 6) != 0 || (n = cli_parse_long(hash + 6, 1, 256)) < 0)
			return cli_error("%s: --engine '%s': expected URL or URL#jobs=N", cmd, arg),
			       -1;
		out->jobs = (unsigned)n;
	}
	out->url = strndup(arg, hash ? (size_t)(hash - arg) : strlen(arg));
	if (!out->url || !*out->url) {
		free(out->url);
		out->url = NULL;
		return cli_error("%s: --engine '%s': empty URL", cmd, arg), -1;
	}
	return 0;
}

bool cli_allow_no_seccomp;

/*
 * runtime must be registered (the message lists the engine's runtimes) and,
 * when it is gVisor, apply the sandbox's seccomp profile.
 */
static int check_runtime(const char *cmd, sbx_docker *d, const char *name, const char *runtime)
{
	_cleanup_(sbx_docker_system_freep) sbx_docker_system *sys = NULL;
	_cleanup_(sbx_buf_free) sbx_buf have = SBX_BUF_INIT(4096);
	sbx_error err = SBX_ERROR_INIT;
	char shown[256];

	if (sbx_docker_system_get(d, &sys, &err) < 0)
		return cli_error("%s: engine '%s': %s", cmd, name, sbx_error_message(&err)), -1;
	sbx_escape_controls(shown, sizeof(shown), runtime, false);
	if (sbx_docker_system_runsc_ignores_seccomp(sys, runtime) && !cli_allow_no_seccomp) {
		cli_error(
			"%s: --runtime '%s': engine '%s' registers runsc without --oci-seccomp, so "
			"it would ignore the sandbox's seccomp profile (tool code could unshare "
			"user and mount namespaces); refused: add \"--oci-seccomp\" to its "
			"\"runtimeArgs\" in /etc/docker/daemon.json and restart dockerd (see "
			"'sandboxctl doctor'), or pass --allow-no-seccomp",
			cmd, shown, name);
		return -1;
	}
	/* The sandbox's seccomp profile has a gVisor variant, picked by the name. */
	if (sbx_docker_system_runtime_is_gvisor(sys, runtime) && strcmp(runtime, "runsc") != 0) {
		cli_error("%s: --runtime '%s': engine '%s' runs gVisor under that name, and "
			  "sandboxctl gives gVisor its own seccomp profile only under the name "
			  "runsc; refused: register it as \"runsc\" in /etc/docker/daemon.json "
			  "and restart dockerd (see 'sandboxctl doctor')",
			  cmd, shown, name);
		return -1;
	}
	if (sbx_docker_system_has_runtime(sys, runtime))
		return 0;
	for (char **r = sys->runtimes; r && *r; r++)
		if (sbx_buf_printf(&have, "%s%s", r == sys->runtimes ? "" : ", ", *r) < 0)
			break;
	cli_error("%s: --runtime '%s': engine '%s' has no such runtime (it has: %s); refused, "
		  "never a fallback (see 'sandboxctl doctor')",
		  cmd, shown, name, have.len ? have.data : "none");
	return -1;
}

int cli_check_engines(const char *cmd, const cli_engine_arg *engines, size_t n, char *const *images,
		      const char *runtime, char **image_id, int *ncpu, int64_t *mem)
{
	for (size_t e = 0; e < n; e++) {
		sbx_docker_opts o = SBX_DOCKER_OPTS_INIT;
		sbx_docker *d = NULL;
		sbx_error err = SBX_ERROR_INIT;
		const char *name = engines[e].url ? engines[e].url : "the default engine";

		o.host = engines[e].url;
		if (sbx_docker_open(&d, &o, &err) < 0)
			return cli_error("%s: engine '%s': %s", cmd, name, sbx_error_message(&err)),
			       -1;
		if (runtime && *runtime && check_runtime(cmd, d, name, runtime) < 0) {
			sbx_docker_free(d);
			return -1;
		}
		if (e == 0 && (ncpu || mem)) {
			sbx_docker_system *sys = NULL;

			if (sbx_docker_system_get(d, &sys, NULL) == 0) {
				if (ncpu)
					*ncpu = sys->ncpu;
				if (mem)
					*mem = sys->mem_total;
				sbx_docker_system_free(sys);
			}
		}
		for (size_t i = 0; images && images[i]; i++) {
			sbx_docker_image *img = NULL;

			if (sbx_docker_image_inspect(d, images[i], &img, &err) < 0) {
				cli_error("%s: engine '%s': image '%s': %s (%s%s)", cmd, name,
					  images[i], sbx_error_message(&err),
					  sbx_image_missing_advice(images[i]),
					  n > 1 ? ", or copy it to that engine" : "");
				sbx_docker_free(d);
				return -1;
			}
			if (image_id && e == 0 && i == 0 && img->id && !*image_id)
				*image_id = strdup(img->id);
			sbx_docker_image_free(img);
		}
		sbx_docker_free(d);
	}
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* GET /version + GET /info: the engine facts `doctor` reports. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "docker-internal.h"
#include "sbx/cleanup.h"

void sbx_docker_system_free(sbx_docker_system *s)
{
	if (!s)
		return;
	sbx_free_all(s->server_version, s->api_version, s->min_api_version, s->os, s->arch,
		     s->kernel_version, s->operating_system, s->storage_driver, s->cgroup_version,
		     s->cgroup_driver, s->default_runtime);
	sbx_strv_free(s->runtimes);
	for (size_t i = 0; i < s->n_runtime_info; i++) {
		free(s->runtime_info[i].name);
		free(s->runtime_info[i].path);
		sbx_strv_free(s->runtime_info[i].args);
	}
	free(s->runtime_info);
	sbx_strv_free(s->security_options);
	free(s);
}

bool sbx_docker_system_has_runtime(const sbx_docker_system *s, const char *runtime)
{
	for (char **p = s->runtimes; p && *p; p++)
		if (strcmp(*p, runtime) == 0)
			return true;
	return false;
}

static const sbx_docker_runtime *runtime_info(const sbx_docker_system *s, const char *runtime)
{
	for (size_t i = 0; i < s->n_runtime_info; i++)
		if (strcmp(s->runtime_info[i].name, runtime) == 0)
			return &s->runtime_info[i];
	return NULL;
}

/*
 * Go's flag package (runsc's): "-name" or "--name", a bool's value only after
 * '=' as strconv.ParseBool spells it. 1 on, 0 off, -1 not this flag (or a
 * value runsc itself would refuse).
 */
static int bool_flag(const char *arg, const char *name)
{
	static const char *const on[] = {"1", "t", "T", "TRUE", "true", "True", NULL};
	static const char *const off[] = {"0", "f", "F", "FALSE", "false", "False", NULL};
	size_t n = strlen(name);

	if (arg[0] != '-')
		return -1;
	arg += arg[1] == '-' ? 2 : 1;
	if (strncmp(arg, name, n) != 0 || (arg[n] != '\0' && arg[n] != '='))
		return -1;
	if (arg[n] == '\0')
		return 1;
	for (size_t i = 0; on[i]; i++) {
		if (strcmp(arg + n + 1, on[i]) == 0)
			return 1;
		if (strcmp(arg + n + 1, off[i]) == 0)
			return 0;
	}
	return -1;
}

bool sbx_docker_system_runtime_is_gvisor(const sbx_docker_system *s, const char *runtime)
{
	const sbx_docker_runtime *rt = runtime_info(s, runtime);
	const char *base;

	if (!rt)
		return false;
	base = strrchr(rt->path, '/');
	base = base ? base + 1 : rt->path;
	return strcmp(rt->name, "runsc") == 0 || strcmp(base, "runsc") == 0;
}

bool sbx_docker_system_runsc_ignores_seccomp(const sbx_docker_system *s, const char *runtime)
{
	const sbx_docker_runtime *rt = runtime_info(s, runtime);
	int on = 0;

	if (!rt || !sbx_docker_system_runtime_is_gvisor(s, runtime))
		return false;
	for (char **a = rt->args; a && *a; a++) {
		int v = bool_flag(*a, "oci-seccomp");

		if (v >= 0)
			on = v;
	}
	return !on;
}

/* Runtimes: {"runsc": {"path": "/usr/bin/runsc", "runtimeArgs": [...]}, ...}. */
static int parse_runtimes(const cJSON *obj, sbx_docker_system *s)
{
	const cJSON *it;
	size_t n = 0;

	if (!cJSON_IsObject(obj))
		obj = NULL;
	cJSON_ArrayForEach (it, obj)
		n++;
	s->runtime_info = calloc(n ? n : 1, sizeof(*s->runtime_info));
	if (!s->runtime_info)
		return -ENOMEM;
	cJSON_ArrayForEach (it, obj) {
		sbx_docker_runtime *rt = &s->runtime_info[s->n_runtime_info++];

		rt->name = strdup(it->string ? it->string : "");
		rt->path = sbx_docker__strdup_json(it, "path");
		rt->args = sbx_docker__parse_strv(sbx_json_get(it, "runtimeArgs"));
		if (!rt->name || !rt->path || !rt->args)
			return -ENOMEM;
	}
	return 0;
}

int sbx_docker_system_get(sbx_docker *d, sbx_docker_system **out, sbx_error *err)
{
	_cleanup_json_ cJSON *ver = NULL, *info = NULL;
	sbx_docker_system *s;
	int r;

	r = sbx_docker__get_json(d, "GET", "/version", "version", &ver, err);
	if (r < 0)
		return r;
	r = sbx_docker__get_json(d, "GET", "/info", "info", &info, err);
	if (r < 0)
		return r;
	s = calloc(1, sizeof(*s));
	if (!s)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	s->server_version = sbx_docker__strdup_json(ver, "Version");
	s->api_version = sbx_docker__strdup_json(ver, "ApiVersion");
	s->min_api_version = sbx_docker__strdup_json(ver, "MinAPIVersion");
	s->os = sbx_docker__strdup_json(ver, "Os");
	s->arch = sbx_docker__strdup_json(ver, "Arch");
	s->kernel_version = sbx_docker__strdup_json(ver, "KernelVersion");
	s->operating_system = sbx_docker__strdup_json(info, "OperatingSystem");
	s->storage_driver = sbx_docker__strdup_json(info, "Driver");
	s->cgroup_version = sbx_docker__strdup_json(info, "CgroupVersion");
	s->cgroup_driver = sbx_docker__strdup_json(info, "CgroupDriver");
	s->default_runtime = sbx_docker__strdup_json(info, "DefaultRuntime");
	s->runtimes = sbx_docker__member_names(sbx_json_get(info, "Runtimes"));
	s->security_options = sbx_docker__parse_strv(sbx_json_get(info, "SecurityOptions"));
	s->mem_total = (int64_t)sbx_json_get_number(info, "MemTotal", 0);
	s->ncpu = (int)sbx_json_get_number(info, "NCPU", 0);
	if (!s->server_version || !s->api_version || !s->min_api_version || !s->os || !s->arch ||
	    !s->kernel_version || !s->operating_system || !s->storage_driver ||
	    !s->cgroup_version || !s->cgroup_driver || !s->default_runtime || !s->runtimes ||
	    !s->security_options || parse_runtimes(sbx_json_get(info, "Runtimes"), s) < 0) {
		sbx_docker_system_free(s);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	for (char **p = s->security_options; *p; p++)
		if (strstr(*p, "name=rootless"))
			s->rootless = true;
	*out = s;
	return 0;
}

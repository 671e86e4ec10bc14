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
	    !s->security_options) {
		sbx_docker_system_free(s);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	for (char **p = s->security_options; *p; p++)
		if (strstr(*p, "name=rootless"))
			s->rootless = true;
	*out = s;
	return 0;
}

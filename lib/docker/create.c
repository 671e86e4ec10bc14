/* SPDX-License-Identifier: MIT */
/* JSON bodies for POST /containers/create and POST /containers/{id}/exec. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "docker-internal.h"

/* int64 printed exactly (cJSON numbers are doubles: 2^53 and beyond would round). */
static int add_int64(cJSON *obj, const char *key, int64_t v)
{
	char num[32];

	snprintf(num, sizeof(num), "%" PRId64, v);
	return cJSON_AddRawToObject(obj, key, num) ? 0 : -ENOMEM;
}

static int add_str_if(cJSON *obj, const char *key, const char *v)
{
	return v ? sbx_json_add_string(obj, key, v) : 0;
}

/* What runs, and how its streams attach: the part a container's body and an exec's share. */
typedef struct process_spec {
	const char *const *cmd;
	const char *const *env;
	const char *user;
	const char *working_dir;
	bool tty;
	bool attach_stdin;
	bool attach_output; /* stdout and stderr */
} process_spec;

static int add_process(cJSON *c, const process_spec *p)
{
	int r = sbx_docker__add_strv(c, "Cmd", p->cmd);

	if (r == 0)
		r = sbx_docker__add_strv(c, "Env", p->env);
	if (r == 0)
		r = add_str_if(c, "User", p->user);
	if (r == 0)
		r = add_str_if(c, "WorkingDir", p->working_dir);
	if (r == 0)
		r = sbx_json_add_bool(c, "Tty", p->tty);
	if (r == 0)
		r = sbx_json_add_bool(c, "AttachStdin", p->attach_stdin);
	if (r == 0)
		r = sbx_json_add_bool(c, "AttachStdout", p->attach_output);
	if (r == 0)
		r = sbx_json_add_bool(c, "AttachStderr", p->attach_output);
	return r;
}

/* Hands out the body printed, once every field went in (r, the first failure, is 0). */
static int print_body(const cJSON *c, int r, char **out, sbx_error *err)
{
	char *s;

	if (r < 0)
		return sbx_error_set(err, r, "out of memory");
	s = sbx_json_print(c);
	if (!s)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	*out = s;
	return 0;
}

static int add_ports(cJSON *config, cJSON *host, const sbx_docker_container_opts *o)
{
	cJSON *exposed, *bindings;

	if (o->n_ports == 0)
		return 0;
	exposed = cJSON_AddObjectToObject(config, "ExposedPorts");
	bindings = cJSON_AddObjectToObject(host, "PortBindings");
	if (!exposed || !bindings)
		return -ENOMEM;
	for (size_t i = 0; i < o->n_ports; i++) {
		const sbx_docker_port *p = &o->ports[i];
		cJSON *list, *b;

		if (!p->container_port || !*p->container_port)
			return -EINVAL;
		if (!cJSON_GetObjectItemCaseSensitive(exposed, p->container_port) &&
		    !cJSON_AddObjectToObject(exposed, p->container_port))
			return -ENOMEM;
		list = cJSON_GetObjectItemCaseSensitive(bindings, p->container_port);
		if (!list)
			list = cJSON_AddArrayToObject(bindings, p->container_port);
		b = cJSON_CreateObject();
		if (!list || !b || !cJSON_AddItemToArray(list, b)) {
			cJSON_Delete(b);
			return -ENOMEM;
		}
		if (sbx_json_add_string(b, "HostIp", p->host_ip ? p->host_ip : "") < 0 ||
		    sbx_json_add_string(b, "HostPort", p->host_port ? p->host_port : "") < 0)
			return -ENOMEM;
	}
	return 0;
}

static int add_host_config(cJSON *config, const sbx_docker_container_opts *o)
{
	cJSON *h = cJSON_AddObjectToObject(config, "HostConfig");
	int r = 0;

	if (!h)
		return -ENOMEM;
	r = sbx_docker__add_strv(h, "CapDrop", o->cap_drop);
	if (r == 0)
		r = sbx_docker__add_strv(h, "CapAdd", o->cap_add);
	if (r == 0)
		r = sbx_docker__add_strv(h, "SecurityOpt", o->security_opt);
	if (r == 0 && o->readonly_rootfs)
		r = sbx_json_add_bool(h, "ReadonlyRootfs", true);
	if (r == 0 && o->n_tmpfs) {
		for (size_t i = 0; i < o->n_tmpfs; i++)
			if (!o->tmpfs[i].key || o->tmpfs[i].key[0] != '/')
				return -EINVAL;
		r = sbx_docker__add_labels(h, "Tmpfs", o->tmpfs, o->n_tmpfs);
	}
	if (r == 0)
		r = sbx_docker__add_strv(h, "Binds", o->binds);
	if (r == 0 && o->memory)
		r = add_int64(h, "Memory", o->memory);
	if (r == 0 && o->memory_swap)
		r = add_int64(h, "MemorySwap", o->memory_swap);
	if (r == 0 && o->nano_cpus)
		r = add_int64(h, "NanoCpus", o->nano_cpus);
	if (r == 0 && o->pids_limit)
		r = add_int64(h, "PidsLimit", o->pids_limit);
	if (r == 0 && o->shm_size)
		r = add_int64(h, "ShmSize", o->shm_size);
	if (r == 0 && o->n_ulimits) {
		cJSON *arr = cJSON_AddArrayToObject(h, "Ulimits");
		if (!arr)
			return -ENOMEM;
		for (size_t i = 0; i < o->n_ulimits && r == 0; i++) {
			cJSON *u = cJSON_CreateObject();
			if (!u || !cJSON_AddItemToArray(arr, u)) {
				cJSON_Delete(u);
				return -ENOMEM;
			}
			if (!o->ulimits[i].name)
				return -EINVAL;
			r = sbx_json_add_string(u, "Name", o->ulimits[i].name);
			if (r == 0)
				r = add_int64(u, "Soft", o->ulimits[i].soft);
			if (r == 0)
				r = add_int64(u, "Hard", o->ulimits[i].hard);
		}
	}
	if (r == 0)
		r = add_str_if(h, "NetworkMode", o->network_mode);
	if (r == 0)
		r = sbx_docker__add_strv(h, "Dns", o->dns);
	if (r == 0)
		r = add_ports(config, h, o);
	if (r == 0)
		r = add_str_if(h, "Runtime", o->runtime);
	if (r == 0 && o->init)
		r = sbx_json_add_bool(h, "Init", true);
	if (r == 0 && o->auto_remove)
		r = sbx_json_add_bool(h, "AutoRemove", true);
	if (r == 0 && o->log_driver) {
		cJSON *lc = cJSON_AddObjectToObject(h, "LogConfig");

		if (!lc)
			return -ENOMEM;
		r = sbx_json_add_string(lc, "Type", o->log_driver);
		if (r == 0)
			r = sbx_docker__add_labels(lc, "Config", o->log_opts, o->n_log_opts);
	}
	return r;
}

int sbx_docker__container_create_body(const sbx_docker_container_opts *o, char **out,
				      sbx_error *err)
{
	_cleanup_json_ cJSON *c = NULL;
	int r;

	if (!o || o->version != SBX_DOCKER_CONTAINER_OPTS_VERSION)
		return sbx_error_set(err, -EINVAL, "container options: wrong version");
	if (!o->image || !*o->image)
		return sbx_error_set(err, -EINVAL, "container options: no image");
	if (o->memory < 0 || o->nano_cpus < 0 || o->pids_limit < 0 || o->shm_size < 0 ||
	    o->memory_swap < -1 || o->stop_timeout < 0)
		return sbx_error_set(err, -EINVAL, "container options: negative limit");
	c = cJSON_CreateObject();
	if (!c)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_json_add_string(c, "Image", o->image);
	if (r == 0)
		r = add_process(c, &(process_spec){.cmd = o->cmd,
						   .env = o->env,
						   .user = o->user,
						   .working_dir = o->working_dir,
						   .tty = o->tty,
						   .attach_stdin = o->open_stdin,
						   .attach_output = o->open_stdin});
	if (r == 0)
		r = sbx_docker__add_strv(c, "Entrypoint", o->entrypoint);
	if (r == 0)
		r = add_str_if(c, "Hostname", o->hostname);
	if (r == 0)
		r = sbx_docker__add_labels(c, "Labels", o->labels, o->n_labels);
	if (r == 0)
		r = sbx_json_add_bool(c, "OpenStdin", o->open_stdin);
	if (r == 0)
		r = sbx_json_add_bool(c, "StdinOnce", o->stdin_once);
	if (r == 0 && o->network_disabled)
		r = sbx_json_add_bool(c, "NetworkDisabled", true);
	if (r == 0)
		r = add_str_if(c, "StopSignal", o->stop_signal);
	if (r == 0 && o->stop_timeout)
		r = add_int64(c, "StopTimeout", o->stop_timeout);
	if (r == 0)
		r = add_host_config(c, o);
	if (r == -EINVAL)
		return sbx_error_set(err, r,
				     "container options: a label, tmpfs path (must be absolute), "
				     "ulimit or port is missing its name");
	return print_body(c, r, out, err);
}

int sbx_docker__exec_create_body(const sbx_docker_exec_opts *o, char **out, sbx_error *err)
{
	_cleanup_json_ cJSON *c = NULL;
	int r;

	if (!o || o->version != SBX_DOCKER_EXEC_OPTS_VERSION)
		return sbx_error_set(err, -EINVAL, "exec options: wrong version");
	if (!o->cmd || !o->cmd[0])
		return sbx_error_set(err, -EINVAL, "exec options: no command");
	c = cJSON_CreateObject();
	if (!c)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = add_process(c, &(process_spec){.cmd = o->cmd,
					   .env = o->env,
					   .user = o->user,
					   .working_dir = o->working_dir,
					   .tty = o->tty,
					   .attach_stdin = o->attach_stdin,
					   .attach_output = true});
	if (r == 0)
		r = sbx_json_add_bool(c, "Privileged", false);
	return print_body(c, r, out, err);
}

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

/*
 * Fields given as tables, so a body lists each key once beside its value and
 * one loop adds them. NULL lists, zero numbers and (for switches) false are
 * left out: the engine's default applies.
 */
typedef struct strv_field {
	const char *key;
	const char *const *v;
} strv_field;

typedef struct int64_field {
	const char *key;
	int64_t v;
} int64_field;

typedef struct bool_field {
	const char *key;
	bool v;
} bool_field;

static int add_strvs(cJSON *obj, const strv_field *f, size_t n)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < n; i++)
		r = sbx_docker__add_strv(obj, f[i].key, f[i].v);
	return r;
}

static int add_nonzero_int64s(cJSON *obj, const int64_field *f, size_t n)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < n; i++)
		if (f[i].v)
			r = add_int64(obj, f[i].key, f[i].v);
	return r;
}

/* only_set: a switch is sent when on (for HostConfig.Init, false is not the same as absent). */
static int add_bools(cJSON *obj, const bool_field *f, size_t n, bool only_set)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < n; i++)
		if (f[i].v || !only_set)
			r = sbx_json_add_bool(obj, f[i].key, f[i].v);
	return r;
}

/* What runs, and how its streams attach: the part a container's body and an exec's share. */
static int add_process(cJSON *c, const char *const *cmd, const char *const *env, const char *user,
		       const char *working_dir, bool tty, bool attach_stdin, bool attach_output)
{
	const strv_field lists[] = {{"Cmd", cmd}, {"Env", env}};
	const bool_field flags[] = {
		{"Tty", tty},
		{"AttachStdin", attach_stdin},
		{"AttachStdout", attach_output},
		{"AttachStderr", attach_output},
	};
	int r = add_strvs(c, lists, SBX_ELEMENTSOF(lists));

	if (r == 0)
		r = add_str_if(c, "User", user);
	if (r == 0)
		r = add_str_if(c, "WorkingDir", working_dir);
	if (r == 0)
		r = add_bools(c, flags, SBX_ELEMENTSOF(flags), false);
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

static int add_tmpfs(cJSON *h, const sbx_docker_container_opts *o)
{
	if (o->n_tmpfs == 0)
		return 0;
	for (size_t i = 0; i < o->n_tmpfs; i++)
		if (!o->tmpfs[i].key || o->tmpfs[i].key[0] != '/')
			return -EINVAL;
	return sbx_docker__add_labels(h, "Tmpfs", o->tmpfs, o->n_tmpfs);
}

static int add_ulimits(cJSON *h, const sbx_docker_container_opts *o)
{
	cJSON *arr;
	int r = 0;

	if (o->n_ulimits == 0)
		return 0;
	arr = cJSON_AddArrayToObject(h, "Ulimits");
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
	return r;
}

static int add_log_config(cJSON *h, const sbx_docker_container_opts *o)
{
	cJSON *lc;
	int r;

	if (!o->log_driver)
		return 0;
	lc = cJSON_AddObjectToObject(h, "LogConfig");
	if (!lc)
		return -ENOMEM;
	r = sbx_json_add_string(lc, "Type", o->log_driver);
	if (r == 0)
		r = sbx_docker__add_labels(lc, "Config", o->log_opts, o->n_log_opts);
	return r;
}

static int add_host_config(cJSON *config, const sbx_docker_container_opts *o)
{
	const strv_field lists[] = {
		{"CapDrop", o->cap_drop}, {"CapAdd", o->cap_add}, {"SecurityOpt", o->security_opt},
		{"Binds", o->binds},	  {"Dns", o->dns},
	};
	const int64_field limits[] = {
		{"Memory", o->memory},	    {"MemorySwap", o->memory_swap},
		{"NanoCpus", o->nano_cpus}, {"PidsLimit", o->pids_limit},
		{"ShmSize", o->shm_size},
	};
	const bool_field switches[] = {
		{"ReadonlyRootfs", o->readonly_rootfs},
		{"Init", o->init},
		{"AutoRemove", o->auto_remove},
	};
	cJSON *h = cJSON_AddObjectToObject(config, "HostConfig");
	int r;

	if (!h)
		return -ENOMEM;
	r = add_strvs(h, lists, SBX_ELEMENTSOF(lists));
	if (r == 0)
		r = add_nonzero_int64s(h, limits, SBX_ELEMENTSOF(limits));
	if (r == 0)
		r = add_bools(h, switches, SBX_ELEMENTSOF(switches), true);
	if (r == 0)
		r = add_tmpfs(h, o);
	if (r == 0)
		r = add_ulimits(h, o);
	if (r == 0)
		r = add_str_if(h, "NetworkMode", o->network_mode);
	if (r == 0)
		r = add_ports(config, h, o);
	if (r == 0)
		r = add_str_if(h, "Runtime", o->runtime);
	if (r == 0)
		r = add_log_config(h, o);
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
		r = add_process(c, o->cmd, o->env, o->user, o->working_dir, o->tty, o->open_stdin,
				o->open_stdin);
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
	if (r == 0 && o->no_healthcheck) {
		cJSON *h = cJSON_AddObjectToObject(c, "Healthcheck");

		r = h ? sbx_docker__add_strv(h, "Test", (const char *const[]){"NONE", NULL})
		      : -ENOMEM;
	}
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
	r = add_process(c, o->cmd, o->env, o->user, o->working_dir, o->tty, o->attach_stdin,
			true /* stdout and stderr */);
	if (r == 0)
		r = sbx_json_add_bool(c, "Privileged", false);
	return print_body(c, r, out, err);
}

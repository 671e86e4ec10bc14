/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gui.h"
#include "tool_schema.h"
#include "server.h"
#include "sessions.h"
#include "task_session.h"
#include "wbcache.h"
#include "sbx/cleanup.h"

void server_log(int level, const char *fmt, ...)
{
	static const char *names[] = {[SBX_LOG_ERROR] = "error",
				      [SBX_LOG_WARNING] = "warning",
				      [SBX_LOG_INFO] = "info",
				      [SBX_LOG_DEBUG] = "debug"};
	char line[2048];
	va_list ap;
	int n;

	if (level > SBX_LOG_DEBUG || level < 0)
		level = SBX_LOG_INFO;
	n = snprintf(line, sizeof(line), SERVER_NAME ": %s: ", names[level] ? names[level] : "log");
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	/* One write per line so lines from several threads do not interleave. */
	(void)!write(STDERR_FILENO, line, strlen(line));
}

static int add_tools(server *srv, const tool_def *defs, size_t n, bool unlisted, sbx_error *err)
{
	const tool_def **tools;
	cJSON **schemas;
	bool *hide;

	if (n == 0)
		return 0;
	tools = realloc(srv->tools, (srv->n_tools + n) * sizeof(*tools));
	if (!tools)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	srv->tools = tools;
	schemas = realloc(srv->input_schemas, (srv->n_tools + n) * sizeof(*schemas));
	if (!schemas)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	srv->input_schemas = schemas;
	hide = realloc(srv->unlisted, (srv->n_tools + n) * sizeof(*hide));
	if (!hide)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	srv->unlisted = hide;
	for (size_t i = 0; i < n; i++) {
		const tool_def *d = &defs[i];
		cJSON *schema = NULL;

		if (server_find_tool(srv, d->name, NULL))
			return sbx_error_set(err, -EEXIST, "tool '%s': defined twice", d->name);
		if (sbx_json_parse(d->input_schema, strlen(d->input_schema), &schema, err) < 0)
			return sbx_error_prefix(err, -EINVAL, "tool '%s': inputSchema", d->name);
		if (d->output_schema) {
			cJSON *o = NULL;
			if (sbx_json_parse(d->output_schema, strlen(d->output_schema), &o, err) <
			    0) {
				cJSON_Delete(schema);
				return sbx_error_prefix(err, -EINVAL, "tool '%s': outputSchema",
							d->name);
			}
			cJSON_Delete(o);
		}
		srv->tools[srv->n_tools] = d;
		srv->input_schemas[srv->n_tools] = schema;
		srv->unlisted[srv->n_tools] = unlisted;
		srv->n_tools++;
	}
	return 0;
}

/*
 * SANDBOX_INIT_FD: PID 1 gives it to the server of a reused sandbox alone
 * (reset orders). Close-on-exec and out of the environment, so no child
 * (tool code, LibreOffice) has it or learns of it.
 */
static int init_fd_from_env(void)
{
	const char *v = getenv("SANDBOX_INIT_FD");
	char *end;
	long n;

	if (!v || !*v)
		return -1;
	n = strtol(v, &end, 10);
	unsetenv("SANDBOX_INIT_FD");
	if (*end || n < 3 || n > 65535 || fcntl((int)n, F_SETFD, FD_CLOEXEC) < 0)
		return -1;
	return (int)n;
}

int server_init(server *srv, const char *workspace, const char *display, double task_timeout,
		const char *status_file, sbx_error *err)
{
	const tool_def *(*tables[])(size_t *) = {file_tools,   sheet_cell_tools, sheet_book_tools,
						 recalc_tools, exec_tools,	 task_tools,
						 gui_tools};
	_cleanup_close_ int fd = -1;
	char *abs = NULL;
	int r;

	*srv = (server){0};
	srv->base.workspace_fd = -1;
	srv->init_fd = init_fd_from_env();
	srv->exec_timeout_default = 30;
	pthread_mutex_init(&srv->inflight_lock, NULL);
	fd = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return sbx_error_set(err, -errno, "workspace '%s': %s", workspace, strerror(errno));
	abs = realpath(workspace, NULL);
	if (!abs)
		return sbx_error_set(err, -errno, "workspace '%s': %s", workspace, strerror(errno));
	srv->base.workspace = abs;
	srv->base.display = display;
	srv->base.srv = srv;
	srv->base.task = task_session_new(fd, task_timeout, status_file);
	if (!srv->base.task) {
		server_done(srv);
		return sbx_error_set(err, -ENOMEM, "task session: cannot start");
	}
	srv->base.workspace_fd = TAKE_FD(fd);
	srv->wbcache = wb_cache_new();
	srv->streams = sse_registry_new();
	srv->sessions = srv->streams ? http_sessions_new(srv->streams) : NULL;
	if (!srv->wbcache || !srv->sessions) {
		server_done(srv);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < SBX_ELEMENTSOF(tables); i++) {
		size_t n = 0;
		const tool_def *defs = tables[i](&n);

		r = add_tools(srv, defs, n, tables[i] == gui_tools && (!display || !*display), err);
		if (r < 0) {
			server_done(srv);
			return r;
		}
	}
	return 0;
}

void server_done(server *srv)
{
	/* Sessions first: ending one closes its stream, which lives in the registry. */
	http_sessions_free(srv->sessions);
	sse_registry_free(srv->streams);
	wb_cache_free(srv->wbcache);
	task_session_free(srv->base.task);
	srv->base.task = NULL;
	for (size_t i = 0; i < srv->n_tools; i++)
		cJSON_Delete(srv->input_schemas[i]);
	sbx_free_all(srv->input_schemas, srv->unlisted, srv->tools);
	free((char *)srv->base.workspace);
	if (srv->base.workspace_fd >= 0)
		close(srv->base.workspace_fd);
	pthread_mutex_destroy(&srv->inflight_lock);
	*srv = (server){0};
	srv->base.workspace_fd = -1;
	srv->init_fd = init_fd_from_env();
}

/* What a "gui" tool set keeps: the computer-use tools, the task tools and every tool that only
 * reads. */
static bool in_gui_toolset(const tool_def *d)
{
	size_t n = 0;
	const tool_def *t = gui_tools(&n);

	if (d >= t && d < t + n)
		return true;
	t = task_tools(&n);
	if (d >= t && d < t + n)
		return true;
	return d->annotations & TOOL_READ_ONLY;
}

int server_restrict_tools(server *srv, const char *toolset, sbx_error *err)
{
	size_t kept = 0;

	if (!toolset || !*toolset || strcmp(toolset, "all") == 0)
		return 0;
	if (strcmp(toolset, "gui") != 0)
		return sbx_error_set(err, -EINVAL, "tool set '%s': unknown (all, gui)", toolset);
	for (size_t i = 0; i < srv->n_tools; i++) {
		if (!in_gui_toolset(srv->tools[i])) {
			cJSON_Delete(srv->input_schemas[i]);
			continue;
		}
		srv->tools[kept] = srv->tools[i];
		srv->input_schemas[kept] = srv->input_schemas[i];
		srv->unlisted[kept] = srv->unlisted[i];
		kept++;
	}
	srv->n_tools = kept;
	return 0;
}

const tool_def *server_find_tool(const server *srv, const char *name, size_t *index_out)
{
	for (size_t i = 0; i < srv->n_tools; i++)
		if (strcmp(srv->tools[i]->name, name) == 0) {
			if (index_out)
				*index_out = i;
			return srv->tools[i];
		}
	return NULL;
}

int server_call_tool(server *srv, const char *name, const cJSON *args, tool_context *ctx,
		     tool_result *out)
{
	sbx_error err = SBX_ERROR_INIT;
	_cleanup_json_ cJSON *empty = NULL;
	const tool_def *def;
	size_t idx;
	task_state st;

	def = server_find_tool(srv, name, &idx);
	if (!def)
		return -ENOENT;
	if (!args) {
		empty = cJSON_CreateObject();
		if (!empty)
			return tool_fail(out, TOOL_E_INTERNAL, "out of memory");
		args = empty;
	}
	if (!cJSON_IsObject(args))
		return tool_fail(out, TOOL_E_ARGUMENT, "Invalid arguments for '%s': not an object",
				 name);
	task_session_autostart(ctx->task);
	st = task_session_state(ctx->task);
	if (st == TASK_TIMED_OUT)
		return tool_fail(out, TOOL_E_TIMEOUT, "Task has timed out");
	if (st == TASK_COMPLETED && !(def->annotations & TOOL_READ_ONLY) &&
	    strcmp(name, "complete_task") != 0)
		return tool_fail(out, TOOL_E_ARGUMENT,
				 "Task is already completed; '%s' would change the workspace",
				 name);
	if (schema_validate(srv->input_schemas[idx], args, &err) < 0)
		return tool_fail(out, TOOL_E_ARGUMENT, "Invalid arguments for '%s': %s", name,
				 sbx_error_message(&err));
	if (def->fn(ctx, args, out) < 0 && out->error_kind == TOOL_OK)
		tool_fail(out, TOOL_E_INTERNAL, "'%s' failed", name);
	if (out->error_kind == TOOL_OK && !out->structured) {
		out->structured = cJSON_CreateObject();
		if (!out->structured)
			return tool_fail(out, TOOL_E_INTERNAL, "out of memory");
	}
	return 0;
}

cJSON *server_tool_json(const server *srv, size_t index)
{
	const tool_def *d = srv->tools[index];
	cJSON *t = cJSON_CreateObject(), *ann;

	if (!t)
		return NULL;
	cJSON_AddStringToObject(t, "name", d->name);
	if (d->title)
		cJSON_AddStringToObject(t, "title", d->title);
	cJSON_AddStringToObject(t, "description", d->description);
	cJSON_AddItemToObject(t, "inputSchema", cJSON_Duplicate(srv->input_schemas[index], true));
	if (d->output_schema)
		cJSON_AddItemToObject(t, "outputSchema", cJSON_Parse(d->output_schema));
	ann = cJSON_AddObjectToObject(t, "annotations");
	if (ann) {
		if (d->title)
			cJSON_AddStringToObject(ann, "title", d->title);
		cJSON_AddBoolToObject(ann, "readOnlyHint", d->annotations & TOOL_READ_ONLY);
		cJSON_AddBoolToObject(ann, "destructiveHint", d->annotations & TOOL_DESTRUCTIVE);
		cJSON_AddBoolToObject(ann, "idempotentHint", d->annotations & TOOL_IDEMPOTENT);
		cJSON_AddBoolToObject(ann, "openWorldHint", false);
	}
	return t;
}

bool server_tool_listed(const server *srv, size_t index)
{
	return index < srv->n_tools && !srv->unlisted[index];
}

/* A JSON-schema type as one word: the first non-null of a type list; none → "string". */
static const char *param_type(const cJSON *prop)
{
	const cJSON *type = sbx_json_get(prop, "type"), *t;

	if (cJSON_IsString(type))
		return type->valuestring;
	cJSON_ArrayForEach (t, type)
		if (cJSON_IsString(t) && strcmp(t->valuestring, "null") != 0)
			return t->valuestring;
	return "string";
}

static bool is_required(const cJSON *schema, const char *name)
{
	const cJSON *r;

	cJSON_ArrayForEach (r, sbx_json_get(schema, "required"))
		if (cJSON_IsString(r) && strcmp(r->valuestring, name) == 0)
			return true;
	return false;
}

cJSON *server_tool_json_reference(const server *srv, size_t index)
{
	const tool_def *d = srv->tools[index];
	const cJSON *schema = srv->input_schemas[index], *prop;
	cJSON *t = cJSON_CreateObject(), *params;

	if (!t)
		return NULL;
	cJSON_AddStringToObject(t, "name", d->name);
	cJSON_AddStringToObject(t, "description", d->description);
	params = cJSON_AddArrayToObject(t, "parameters");
	cJSON_ArrayForEach (prop, sbx_json_get(schema, "properties")) {
		cJSON *p = cJSON_CreateObject();
		const cJSON *items = sbx_json_get(prop, "items");

		if (!p)
			break;
		cJSON_AddItemToArray(params, p);
		cJSON_AddStringToObject(p, "name", prop->string);
		cJSON_AddStringToObject(p, "type", param_type(prop));
		cJSON_AddStringToObject(p, "description",
					sbx_json_get_string(prop, "description", ""));
		cJSON_AddBoolToObject(p, "required", is_required(schema, prop->string));
		/* So a client turning these into function-calling schemas keeps array types valid.
		 */
		if (items)
			cJSON_AddItemToObject(p, "items", cJSON_Duplicate(items, true));
	}
	return t;
}

/* SPDX-License-Identifier: MIT */
/*
 * One OpenEnv session (a WebSocket): its messages, answered through the
 * episode service the HTTP API uses. reset claims an episode of the
 * session's task (POST /v1/episodes' path), step answers through the
 * episode's MCP endpoint, complete_task or the deadline finishes it
 * (POST .../finish's path) and the observation carries the grade's score
 * as reward with done: true; close, a dropped socket or the next reset
 * finish it too. Frames are openenv-core 0.3.0's (env_server/types.py):
 * {"type": "observation"|"state"|"error"|"mcp", "data": {...}}.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openenv.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"

struct openenv_session {
	sbx_serve *s;
	char task[SERVE_ID_MAX + 1];
	char episode[SERVE_ID_MAX + 1]; /* the last one claimed, "" before */
	bool live;			/* claimed and not finished by us */
	unsigned steps;
	openenv_mcp *mcp;
};

char *sbx_serve__openenv_error(const char *code, const char *fmt, ...)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();
	cJSON *d;
	char msg[512];
	va_list ap;

	if (!o || !cJSON_AddStringToObject(o, "type", "error") ||
	    !(d = cJSON_AddObjectToObject(o, "data")))
		return NULL;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cJSON_AddStringToObject(d, "message", msg);
	cJSON_AddStringToObject(d, "code", code);
	return cJSON_PrintUnformatted(o);
}

/* {"type": type, "data": data}; data is consumed. */
static char *frame(const char *type, cJSON *data)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();

	if (!o || !data) {
		cJSON_Delete(data);
		return NULL;
	}
	cJSON_AddStringToObject(o, "type", type);
	cJSON_AddItemToObject(o, "data", data);
	return cJSON_PrintUnformatted(o);
}

/* An observation frame: obs consumed; reward NaN: null. */
static char *observation(cJSON *obs, double reward, bool done)
{
	cJSON *d = cJSON_CreateObject();

	if (!d || !obs) {
		cJSON_Delete(d);
		cJSON_Delete(obs);
		return NULL;
	}
	cJSON_AddItemToObject(d, "observation", obs);
	if (reward == reward)
		cJSON_AddNumberToObject(d, "reward", reward);
	else
		cJSON_AddNullToObject(d, "reward");
	cJSON_AddBoolToObject(d, "done", done);
	return frame("observation", d);
}

openenv_session *sbx_serve__openenv_session_new(sbx_serve *s, const char *task)
{
	openenv_session *os = calloc(1, sizeof(*os));

	if (!os)
		return NULL;
	os->s = s;
	snprintf(os->task, sizeof(os->task), "%s", task);
	return os;
}

/*
 * Finishes the live episode (graded; kept by the service, so one the
 * deadline finished answers its result). *result: the finish answer.
 */
static int finish(openenv_session *os, cJSON **result)
{
	_cleanup_free_ char *out = NULL;
	int status;

	os->mcp = sbx_serve__mcp_free(os->mcp);
	if (!os->live)
		return -ENOENT;
	os->live = false;
	status = sbx_serve__handle(os->s, SERVE_ROUTE_FINISH, os->episode, NULL, 0, &out);
	if (status != 200 || !out)
		return -EIO;
	if (result && sbx_json_parse(out, strlen(out), result, NULL) < 0)
		return -EIO;
	return 0;
}

/* The done observation: the grade's score as reward, the result's facts in metadata. */
static char *finished(openenv_session *os)
{
	_cleanup_json_ cJSON *res = NULL;
	cJSON *obs = cJSON_CreateObject(), *md;
	double reward = 0;

	if (finish(os, &res) < 0) {
		cJSON_Delete(obs);
		return sbx_serve__openenv_error("EXECUTION_ERROR",
						"episode '%s': finishing it failed; see its run "
						"directory",
						os->episode);
	}
	reward = sbx_json_get_number(res, "reward", 0);
	md = obs ? cJSON_AddObjectToObject(obs, "metadata") : NULL;
	if (md) {
		cJSON_AddStringToObject(md, "episode_id", os->episode);
		cJSON_AddStringToObject(md, "status", sbx_json_get_string(res, "status", ""));
		cJSON_AddStringToObject(md, "ended_by", sbx_json_get_string(res, "ended_by", ""));
		cJSON_AddStringToObject(md, "run_dir", sbx_json_get_string(res, "run_dir", ""));
	}
	return observation(obs, reward, true);
}

/* tools/list's tools as OpenEnv's [{name, description, input_schema}]. */
static int list_tools(openenv_session *os, cJSON **out, char **err_frame)
{
	_cleanup_json_ cJSON *ans = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const cJSON *t, *tools;
	cJSON *a;

	if (sbx_serve__mcp_call(os->mcp, "tools/list", NULL, &ans, &err) < 0) {
		*err_frame = sbx_serve__openenv_error("EXECUTION_ERROR", "episode '%s': %s",
						      os->episode, sbx_error_message(&err));
		return -EIO;
	}
	tools = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ans, "result"),
						 "tools");
	a = cJSON_CreateArray();
	if (!a)
		return -ENOMEM;
	cJSON_ArrayForEach (t, tools) {
		cJSON *x = cJSON_CreateObject(), *schema;

		if (!x)
			break;
		cJSON_AddItemToArray(a, x);
		cJSON_AddStringToObject(x, "name", sbx_json_get_string(t, "name", ""));
		cJSON_AddStringToObject(x, "description",
					sbx_json_get_string(t, "description", ""));
		schema = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(t, "inputSchema"), true);
		cJSON_AddItemToObject(x, "input_schema", schema ? schema : cJSON_CreateObject());
	}
	*out = a;
	return 0;
}

static char *reset(openenv_session *os, const cJSON *data)
{
	_cleanup_json_ cJSON *body = cJSON_CreateObject(), *claim = NULL;
	_cleanup_free_ char *text = NULL, *out = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const cJSON *seed = cJSON_GetObjectItemCaseSensitive(data, "seed");
	const cJSON *timeout = cJSON_GetObjectItemCaseSensitive(data, "timeout");
	char *err_frame = NULL;
	cJSON *obs, *md, *tools = NULL;
	int status;

	if (data && !cJSON_IsObject(data) && !cJSON_IsNull(data))
		return sbx_serve__openenv_error("VALIDATION_ERROR",
						"reset: 'data' must be an object");
	if (os->live)
		finish(os, NULL);
	if (!body)
		return NULL;
	cJSON_AddStringToObject(body, "task", os->task);
	if (seed && !cJSON_IsNull(seed))
		cJSON_AddItemToObject(body, "seed", cJSON_Duplicate(seed, true));
	/* Ours, not OpenEnv's: the episode's timeout, checked as POST /v1/episodes checks it. */
	if (timeout && !cJSON_IsNull(timeout))
		cJSON_AddItemToObject(body, "timeout", cJSON_Duplicate(timeout, true));
	text = cJSON_PrintUnformatted(body);
	if (!text)
		return NULL;
	status = sbx_serve__handle(os->s, SERVE_ROUTE_CREATE, NULL, text, strlen(text), &out);
	if (!out || sbx_json_parse(out, strlen(out), &claim, NULL) < 0)
		return sbx_serve__openenv_error("EXECUTION_ERROR", "reset: the service failed");
	if (status != 201)
		return sbx_serve__openenv_error(
			status == 400	? "VALIDATION_ERROR"
			: status == 429 ? "CAPACITY_REACHED"
					: "FACTORY_ERROR",
			"reset: task '%s': %s", os->task,
			sbx_json_get_string(claim, "error", "claim failed"));
	snprintf(os->episode, sizeof(os->episode), "%s", sbx_json_get_string(claim, "id", ""));
	os->live = true;
	os->steps = 0;
	if (sbx_serve__mcp_open(&os->mcp, sbx_json_get_string(claim, "mcp_url", ""), &err) < 0) {
		err_frame = sbx_serve__openenv_error("FACTORY_ERROR", "reset: episode '%s': %s",
						     os->episode, sbx_error_message(&err));
		finish(os, NULL);
		return err_frame;
	}
	if (list_tools(os, &tools, &err_frame) < 0) {
		finish(os, NULL);
		return err_frame;
	}
	obs = cJSON_CreateObject();
	if (!obs) {
		cJSON_Delete(tools);
		return NULL;
	}
	cJSON_AddStringToObject(obs, "episode_id", os->episode);
	cJSON_AddStringToObject(obs, "task", os->task);
	cJSON_AddStringToObject(obs, "prompt", sbx_json_get_string(claim, "prompt", ""));
	cJSON_AddItemToObject(obs, "tools", tools);
	/* MCPToolClient keeps only metadata of an observation with tools. */
	md = cJSON_AddObjectToObject(obs, "metadata");
	cJSON_AddStringToObject(md, "episode_id", os->episode);
	cJSON_AddStringToObject(md, "prompt", sbx_json_get_string(claim, "prompt", ""));
	cJSON_AddNumberToObject(md, "deadline", sbx_json_get_number(claim, "deadline", 0));
	return observation(obs, 0.0 / 0.0, false);
}

/* {error_type, message} for a tool call that failed. */
static cJSON *tool_error(const char *type, const char *msg)
{
	cJSON *e = cJSON_CreateObject();

	cJSON_AddStringToObject(e, "error_type", type);
	cJSON_AddStringToObject(e, "message", msg);
	return e;
}

/* The MCP result, plus "data" (structuredContent, else the text) MCPToolClient returns. */
static cJSON *tool_result(const cJSON *result, cJSON **error)
{
	cJSON *r = cJSON_Duplicate(result, true), *data = NULL;
	const cJSON *sc = cJSON_GetObjectItemCaseSensitive(result, "structuredContent");
	const cJSON *c0 =
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(result, "content"), 0);
	const char *text = sbx_json_get_string(c0, "text", NULL);

	if (!r)
		return NULL;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(result, "isError")))
		*error = tool_error("execution_error", text ? text : "the tool failed");
	if (sc)
		data = cJSON_Duplicate(sc, true);
	else if (text && (text[0] == '{' || text[0] == '['))
		data = cJSON_Parse(text);
	if (!data && text)
		data = cJSON_CreateString(text);
	if (data)
		cJSON_AddItemToObject(r, "data", data);
	return r;
}

static char *call_tool(openenv_session *os, const cJSON *action, bool *completed)
{
	_cleanup_json_ cJSON *ans = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(action, "tool_name");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(action, "arguments");
	const cJSON *rpc_err;
	cJSON *params, *obs, *error = NULL, *result = NULL;

	if (!cJSON_IsString(name) || !name->valuestring[0] || strlen(name->valuestring) > 128)
		return sbx_serve__openenv_error(
			"VALIDATION_ERROR", "step: call_tool needs 'tool_name' (a tool's name)");
	if (args && !cJSON_IsObject(args) && !cJSON_IsNull(args))
		return sbx_serve__openenv_error(
			"VALIDATION_ERROR", "step: call_tool '%s': 'arguments' must be an object",
			name->valuestring);
	params = cJSON_CreateObject();
	if (!params)
		return NULL;
	cJSON_AddStringToObject(params, "name", name->valuestring);
	cJSON_AddItemToObject(params, "arguments",
			      cJSON_IsObject(args) ? cJSON_Duplicate(args, true)
						   : cJSON_CreateObject());
	if (sbx_serve__mcp_call(os->mcp, "tools/call", params, &ans, &err) < 0) {
		error = tool_error("transport_error", sbx_error_message(&err));
	} else if ((rpc_err = cJSON_GetObjectItemCaseSensitive(ans, "error"))) {
		double code = sbx_json_get_number(rpc_err, "code", 0);

		error = tool_error(code == -32601   ? "tool_not_found"
				   : code == -32602 ? "invalid_args"
						    : "execution_error",
				   sbx_json_get_string(rpc_err, "message", "error"));
	} else {
		result = tool_result(cJSON_GetObjectItemCaseSensitive(ans, "result"), &error);
	}
	*completed = !error && strcmp(name->valuestring, "complete_task") == 0;
	obs = cJSON_CreateObject();
	if (!obs) {
		cJSON_Delete(error);
		cJSON_Delete(result);
		return NULL;
	}
	cJSON_AddStringToObject(obs, "tool_name", name->valuestring);
	cJSON_AddItemToObject(obs, "result", result ? result : cJSON_CreateNull());
	cJSON_AddItemToObject(obs, "error", error ? error : cJSON_CreateNull());
	return observation(obs, 0.0 / 0.0, false);
}

static char *step(openenv_session *os, const cJSON *data)
{
	const cJSON *action = cJSON_GetObjectItemCaseSensitive(data, "action");
	const char *type;
	bool completed = false;
	char *reply;

	if (!cJSON_IsObject(action))
		action = data; /* the WebSocket's form: data is the action */
	if (!cJSON_IsObject(action))
		return sbx_serve__openenv_error("VALIDATION_ERROR",
						"step: 'data' must be an action "
						"object");
	if (!os->live)
		return sbx_serve__openenv_error(
			"EXECUTION_ERROR", os->episode[0] ? "step: the episode is done; send reset"
							  : "step: no episode; send reset first");
	/* The deadline ended it meanwhile: the step answers its result. */
	if (!sbx_serve__episode_running(os->s, os->episode))
		return finished(os);
	type = sbx_json_get_string(action, "type", "");
	if (strcmp(type, "list_tools") == 0) {
		cJSON *tools = NULL, *obs;

		if (list_tools(os, &tools, &reply) < 0)
			return reply;
		obs = cJSON_CreateObject();
		if (!obs) {
			cJSON_Delete(tools);
			return NULL;
		}
		cJSON_AddItemToObject(obs, "tools", tools);
		reply = observation(obs, 0.0 / 0.0, false);
	} else if (strcmp(type, "call_tool") == 0) {
		reply = call_tool(os, action, &completed);
	} else {
		return sbx_serve__openenv_error(
			"VALIDATION_ERROR", "step: action type '%.64s': list_tools or call_tool",
			type);
	}
	os->steps++;
	if (completed || !sbx_serve__episode_running(os->s, os->episode)) {
		free(reply);
		return finished(os);
	}
	return reply;
}

static char *state(openenv_session *os)
{
	cJSON *d = cJSON_CreateObject();

	if (!d)
		return NULL;
	if (os->episode[0])
		cJSON_AddStringToObject(d, "episode_id", os->episode);
	else
		cJSON_AddNullToObject(d, "episode_id");
	cJSON_AddNumberToObject(d, "step_count", os->steps);
	return frame("state", d);
}

/* {"type":"mcp","data":<JSON-RPC>}: passed to the episode's MCP endpoint, the id kept. */
static char *mcp(openenv_session *os, const cJSON *rpc)
{
	_cleanup_json_ cJSON *ans = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const char *method = sbx_json_get_string(rpc, "method", NULL);
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(rpc, "params");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(rpc, "id");

	if (!method || strlen(method) > 128)
		return sbx_serve__openenv_error("VALIDATION_ERROR",
						"mcp: 'data' must be a JSON-RPC request");
	if (!os->live)
		return sbx_serve__openenv_error("EXECUTION_ERROR", "mcp: no episode; send reset "
								   "first");
	if (sbx_serve__mcp_call(os->mcp, method, params ? cJSON_Duplicate(params, true) : NULL,
				&ans, &err) < 0)
		return sbx_serve__openenv_error("EXECUTION_ERROR", "mcp: episode '%s': %s",
						os->episode, sbx_error_message(&err));
	cJSON_ReplaceItemInObjectCaseSensitive(ans, "id",
					       id ? cJSON_Duplicate(id, true) : cJSON_CreateNull());
	return frame("mcp", TAKE_PTR(ans));
}

void sbx_serve__openenv_message(openenv_session *os, const char *msg, size_t len, char **reply,
				bool *close)
{
	_cleanup_json_ cJSON *m = NULL;
	const cJSON *data;
	const char *type;

	*close = false;
	if (sbx_json_parse(msg, len, &m, NULL) < 0 || !cJSON_IsObject(m)) {
		*reply = sbx_serve__openenv_error("INVALID_JSON",
						  "the message is not a JSON object");
		return;
	}
	type = sbx_json_get_string(m, "type", "");
	data = cJSON_GetObjectItemCaseSensitive(m, "data");
	if (strcmp(type, "reset") == 0) {
		*reply = reset(os, data);
	} else if (strcmp(type, "step") == 0) {
		*reply = step(os, data);
	} else if (strcmp(type, "state") == 0) {
		*reply = state(os);
	} else if (strcmp(type, "mcp") == 0) {
		*reply = mcp(os, data);
	} else if (strcmp(type, "close") == 0) {
		finish(os, NULL);
		*reply = NULL;
		*close = true;
		return;
	} else {
		*reply = sbx_serve__openenv_error("UNKNOWN_TYPE", "unknown message type '%.64s'",
						  type);
	}
	if (!*reply)
		*reply = sbx_serve__openenv_error("EXECUTION_ERROR", "out of memory");
}

void sbx_serve__openenv_session_free(openenv_session *os)
{
	if (!os)
		return;
	finish(os, NULL);
	free(os);
}

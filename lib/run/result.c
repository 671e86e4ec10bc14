/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "sbx-config.h"
#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/json.h"
#include "sbx/result.h"

const char *sbx_run_status_name(sbx_run_status s)
{
	static const char *const n[] = {"pass",	       "partial",	"fail",
					"timeout",     "interrupted",	"infra_error",
					"agent_error", "sandbox_failed"};

	return (unsigned)s < SBX_ELEMENTSOF(n) ? n[s] : "unknown";
}

const char *sbx_run_outcome_name(sbx_run_status s)
{
	switch (s) {
	case SBX_RUN_PASS:
	case SBX_RUN_PARTIAL:
	case SBX_RUN_FAIL:
	case SBX_RUN_TIMEOUT:
		return "task";
	case SBX_RUN_AGENT_ERROR:
	case SBX_RUN_SANDBOX_FAILED:
		return "agent";
	case SBX_RUN_INTERRUPTED:
		return "interrupted";
	case SBX_RUN_INFRA_ERROR:
		break;
	}
	return "infrastructure";
}

const char *sbx_run_phase_name(sbx_run_phase p)
{
	static const char *const n[] = {"create", "start",    "copy_in", "ready",
					"agent",  "copy_out", "grade",	 "remove"};

	return (unsigned)p < SBX_ELEMENTSOF(n) ? n[p] : "unknown";
}

const char *sbx_run_end_name(sbx_run_end e)
{
	static const char *const n[] = {"none",	       "complete_task", "agent_exit",  "deadline",
					"interrupted", "client_eof",	"sandbox_died"};

	return (unsigned)e < SBX_ELEMENTSOF(n) ? n[e] : "unknown";
}

int sbx_run_status_exit_code(sbx_run_status s)
{
	switch (s) {
	case SBX_RUN_PASS:
		return 0;
	case SBX_RUN_PARTIAL:
	case SBX_RUN_FAIL:
		return 1;
	case SBX_RUN_TIMEOUT:
		return 4;
	case SBX_RUN_INTERRUPTED:
		return 130;
	case SBX_RUN_AGENT_ERROR:
		return 5;
	case SBX_RUN_SANDBOX_FAILED:
		return 6;
	case SBX_RUN_INFRA_ERROR:
	default:
		return 3;
	}
}

bool sbx_run_id_valid(const char *s)
{
	size_t n;

	if (!s || !*s || *s == '.')
		return false;
	n = strlen(s);
	if (n > 128)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

char *sbx_run_id_new(const char *task)
{
	unsigned char rnd[3] = {0};
	char tname[49], *out;
	struct timespec ts;
	struct tm tm;
	size_t j = 0;

	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		rnd[0] = (unsigned char)ts.tv_nsec;
		rnd[1] = (unsigned char)(ts.tv_nsec >> 8);
		rnd[2] = (unsigned char)getpid();
	}
	for (const char *p = task ? task : "task"; *p && j < sizeof(tname) - 1; p++) {
		char c = *p;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == '-')
			tname[j++] = c;
	}
	tname[j] = '\0';
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	if (asprintf(&out, "%04d%02d%02d-%02d%02d%02d-%s%s%02x%02x%02x", tm.tm_year + 1900,
		     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, tname,
		     j ? "-" : "", rnd[0], rnd[1], rnd[2]) < 0)
		return NULL;
	return out;
}

static void add_str(cJSON *o, const char *k, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

static void add_time(cJSON *o, const char *k, int64_t unix_ms)
{
	char buf[64];
	struct tm tm;
	time_t t = (time_t)(unix_ms / 1000);

	if (!unix_ms) {
		cJSON_AddNullToObject(o, k);
		return;
	}
	gmtime_r(&t, &tm);
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (int)(unix_ms % 1000));
	cJSON_AddStringToObject(o, k, buf);
}

static double ms3(double v)
{
	return (double)(long long)(v * 1000.0 + 0.5) / 1000.0;
}
/*
 * The model agent's summary (runs/<id>/agent-llm.json, written by
 * sandbox-llm-agent) goes into result.json's agent object: model, api, turns,
 * tool calls and errors, usage, stop reason. Only those keys, with their
 * types checked, are copied: the file is the agent's.
 */
static void add_llm_summary(cJSON *agent, const char *run_dir)
{
	static const char *const keys[] = {"model",	 "api",		"turns",
					   "tool_calls", "tool_errors", "retries",
					   "usage",	 "stop_reason", "error"};
	_cleanup_free_ char *text = NULL, *path = NULL;
	_cleanup_json_ cJSON *j = NULL;
	size_t len;
	sbx_error err = SBX_ERROR_INIT;

	if (!run_dir || asprintf(&path, "%s/agent-llm.json", run_dir) < 0)
		return;
	if (sbx_file_read_capped(AT_FDCWD, path, 64 << 10, &text, &len, &err) < 0 ||
	    sbx_json_parse(text, len, &j, &err) < 0 || !cJSON_IsObject(j))
		return;
	for (size_t i = 0; i < SBX_ELEMENTSOF(keys); i++) {
		cJSON *v = cJSON_GetObjectItemCaseSensitive(j, keys[i]);

		if (cJSON_IsString(v) || cJSON_IsNumber(v) ||
		    (cJSON_IsObject(v) && strcmp(keys[i], "usage") == 0))
			cJSON_AddItemToObject(agent, keys[i], cJSON_Duplicate(v, 1));
	}
}

/* A Harbor task's verifier: the reward and what the verifier saw. */
static void add_verifier(cJSON *o, const sbx_run_verifier *v)
{
	cJSON *h = cJSON_AddObjectToObject(o, "verifier"), *t;

	if (v->rewarded)
		cJSON_AddNumberToObject(h, "reward", v->reward);
	else
		cJSON_AddNullToObject(h, "reward");
	if (v->rewards_json)
		cJSON_AddItemToObject(h, "rewards", cJSON_Parse(v->rewards_json));
	else
		cJSON_AddNullToObject(h, "rewards");
	add_str(h, "reward_file", v->reward_source[0] ? v->reward_source : NULL);
	if (v->ran && !v->timed_out && v->exit_code >= 0)
		cJSON_AddNumberToObject(h, "exit_code", v->exit_code);
	else
		cJSON_AddNullToObject(h, "exit_code");
	cJSON_AddBoolToObject(h, "timed_out", v->timed_out);
	add_str(h, "output_tail", v->output_tail);
	add_str(h, "error", v->error);
	add_str(h, "workdir", v->workdir);
	add_str(h, "workdir_sha256", v->workdir_sha256[0] ? v->workdir_sha256 : NULL);
	cJSON_AddNumberToObject(h, "workdir_bytes", (double)v->workdir_bytes);
	cJSON_AddNumberToObject(h, "workdir_entries_refused", (double)v->workdir_refused);
	cJSON_AddStringToObject(h, "sandbox", "fresh, same image");
	cJSON_AddBoolToObject(h, "made_ahead", v->made_ahead);
	t = cJSON_AddObjectToObject(h, "timings_ms");
	cJSON_AddNumberToObject(t, "create_start", ms3(v->create_ms));
	cJSON_AddNumberToObject(t, "copy_in", ms3(v->copy_ms));
	cJSON_AddNumberToObject(t, "test_sh", ms3(v->test_ms));
	cJSON_AddNumberToObject(t, "remove", ms3(v->remove_ms));
	cJSON_AddNumberToObject(t, "total", ms3(v->total_ms));
}

/* result.json's "grade": a Harbor task's reward, or the grader's counts and recalc. */
static void add_grade(cJSON *o, const sbx_run_result *r)
{
	cJSON *g = cJSON_AddObjectToObject(o, "grade");

	cJSON_AddBoolToObject(g, "graded", r->grade.graded);
	if (r->grade.graded) {
		cJSON_AddStringToObject(g, "status", sbx_grade_status_name(r->grade.status));
		cJSON_AddNumberToObject(g, "score", r->grade.score);
		if (r->verifier.harbor)
			return;
		cJSON_AddNumberToObject(g, "cells_graded", (double)r->grade.cells_graded);
		cJSON_AddNumberToObject(g, "cells_matched", (double)r->grade.cells_matched);
		if (r->grade.recalc[0]) {
			/*
			 * method: how the graded formula values were computed: by the
			 * grader ("native"), else as complete_task reported it, else
			 * "sandbox" (present in the output, source unknown) or "none".
			 */
			bool sandbox_known =
				r->sandbox_recalc[0] && strcmp(r->sandbox_recalc, "none");
			cJSON *rc = cJSON_AddObjectToObject(g, "recalc");
			cJSON_AddStringToObject(rc, "method",
						strcmp(r->grade.recalc, "sandbox") == 0 &&
								sandbox_known
							? r->sandbox_recalc
							: r->grade.recalc);
			cJSON_AddNumberToObject(rc, "formulas", (double)r->grade.recalc_formulas);
			cJSON_AddNumberToObject(
				rc, "native",
				(double)(r->grade.recalc_native + r->sandbox_recalc_native));
			cJSON_AddNumberToObject(rc, "libreoffice",
						(double)r->sandbox_recalc_office);
			cJSON_AddNumberToObject(rc, "grader_native",
						(double)r->grade.recalc_native);
			cJSON_AddNumberToObject(rc, "unsupported",
						(double)r->grade.recalc_unsupported);
		}
		cJSON_AddStringToObject(g, "report", "grade.txt");
		cJSON_AddStringToObject(g, "report_json", "grade.json");
	}
}

/* "agent": how it ended, its endpoint, the model agent's usage. */
static void add_agent(cJSON *o, const sbx_run_result *r)
{
	cJSON *h = cJSON_AddObjectToObject(o, "agent");

	add_str(h, "kind", r->agent);
	if (r->agent_exit >= 0)
		cJSON_AddNumberToObject(h, "exit_code", r->agent_exit);
	else
		cJSON_AddNullToObject(h, "exit_code");
	cJSON_AddBoolToObject(h, "stopped_by_host", r->agent_stopped);
	if (r->agent_tail)
		add_str(h, "log_tail", r->agent_tail);
	add_str(h, "endpoint", r->endpoint);
	add_llm_summary(h, r->run_dir);
}

/* "timings_ms" per phase (null: not reached), and the times. */
static void add_timings(cJSON *o, const sbx_run_result *r)
{
	cJSON *t = cJSON_AddObjectToObject(o, "timings_ms");

	for (int i = 0; i < SBX_PHASE_COUNT; i++) {
		if (r->phase_done[i])
			cJSON_AddNumberToObject(t, sbx_run_phase_name(i), ms3(r->phase_ms[i]));
		else
			cJSON_AddNullToObject(t, sbx_run_phase_name(i));
	}
	cJSON_AddNumberToObject(t, "total", ms3(r->total_ms));
	if (r->gui_ready_ms > 0)
		cJSON_AddNumberToObject(t, "gui_ready_after_start", ms3(r->gui_ready_ms));
	add_time(o, "started_at", r->started_at);
	add_time(o, "finished_at", r->finished_at);
	add_time(o, "deadline", r->deadline * 1000);
}

/* result.json's limits, in its order (a sweep's plan names and orders them its own way). */
static const sbx_limits_key result_limits[] = {
	{SBX_LIMITS_TIMEOUT, "timeout_s"},   {SBX_LIMITS_GRACE, "grace_s"},
	{SBX_LIMITS_MEMORY, "memory_bytes"}, {SBX_LIMITS_CPUS, "cpus"},
	{SBX_LIMITS_PIDS, "pids"},	     {SBX_LIMITS_RUNTIME, "runtime"},
	{SBX_LIMITS_SECCOMP, "seccomp"},
};

/* "limits": as applied. */
static void add_limits(cJSON *o, const sbx_run_result *r)
{
	cJSON *l = cJSON_AddObjectToObject(o, "limits");

	sbx_limits_json_write(l, &r->limits.resolved, result_limits, SBX_ELEMENTSOF(result_limits));
	cJSON_AddNumberToObject(l, "workspace_bytes", (double)r->limits.workspace_bytes);
	cJSON_AddNumberToObject(l, "tmp_bytes", (double)r->limits.tmp_bytes);
	cJSON_AddNumberToObject(l, "run_bytes", (double)r->limits.run_bytes);
}

/* "sandbox"."hardening": as the engine reports it after create, not as we asked. */
static void add_hardening(cJSON *h, const sbx_run_result *r)
{
	const sbx_sandbox_applied *a = &r->applied;
	cJSON *hd = cJSON_AddObjectToObject(h, "hardening");

	cJSON_AddBoolToObject(hd, "reported_by_engine", a->known);
	if (a->known) {
		cJSON *caps = cJSON_AddArrayToObject(hd, "cap_drop");
		cJSON *added = cJSON_AddArrayToObject(hd, "caps_added_at_start");
		const char *names = a->cap_add_names, *comma;

		/* PID 1's, for starting the two uids; it drops them before anything runs.
		 */
		while (*names) {
			char name[32];
			size_t n;

			comma = strchr(names, ',');
			n = comma ? (size_t)(comma - names) : strlen(names);
			snprintf(name, sizeof(name), "%.*s", (int)n, names);
			cJSON_AddItemToArray(added, cJSON_CreateString(name));
			names += n + (comma ? 1 : 0);
		}
		cJSON_AddBoolToObject(hd, "all_caps_dropped_by_pid1", r->privileges_dropped);
		if (r->pid1_kernel[0]) {
			/* Under runsc, gVisor's Sentry is the kernel PID 1 asked. */
			cJSON *p1 = cJSON_AddObjectToObject(hd, "pid1");

			add_str(p1, "kernel", r->pid1_kernel);
			add_str(p1, "verified", r->pid1_verified);
			/* runsc applies the OCI profile only with --oci-seccomp. */
			cJSON_AddBoolToObject(p1, "seccomp_filter", r->pid1_seccomp == 2);
		}
		cJSON_AddNumberToObject(hd, "server_uid", 1000);
		if (r->privileges_dropped)
			cJSON_AddNumberToObject(hd, "tool_code_uid", 1001);

		if (a->cap_drop_all)
			cJSON_AddItemToArray(caps, cJSON_CreateString("ALL"));
		cJSON_AddNumberToObject(hd, "cap_add", a->cap_add);
		cJSON_AddBoolToObject(hd, "no_new_privileges", a->no_new_privileges);
		cJSON_AddStringToObject(hd, "seccomp", a->seccomp);
		cJSON_AddStringToObject(hd, "user", a->user);
		cJSON_AddBoolToObject(hd, "readonly_rootfs", a->readonly_rootfs);
		cJSON_AddBoolToObject(hd, "privileged", a->privileged);
		cJSON_AddStringToObject(hd, "network_mode", a->network_mode);
		cJSON_AddNumberToObject(hd, "host_mounts", a->binds);
		/* Any image: our programs came in the read-only bundle, not the image. */
		add_str(hd, "bundle", a->bundle[0] ? a->bundle : NULL);
		cJSON_AddBoolToObject(hd, "docker_init", a->init);
		cJSON_AddNumberToObject(hd, "memory_bytes", (double)a->memory);
		cJSON_AddNumberToObject(hd, "cpus", (double)a->nano_cpus / 1e9);
		cJSON_AddNumberToObject(hd, "pids", (double)a->pids);
		add_str(hd, "runtime", a->runtime[0] ? a->runtime : NULL);
	}
}

/* "sandbox": which, its network, its reuse, its hardening. */
static void add_sandbox(cJSON *o, const sbx_run_result *r)
{
	cJSON *h = cJSON_AddObjectToObject(o, "sandbox");

	add_str(h, "backend", r->backend);
	add_str(h, "id", r->sandbox_id);
	add_str(h, "image", r->image);
	add_str(h, "image_id", r->image_id);
	cJSON_AddStringToObject(h, "network", r->limits.published ? "published" : "none");
	if (r->limits.published) {
		/* What was relaxed for the firewall, and that PID 1 gave it all up again. */
		cJSON *pb = cJSON_AddObjectToObject(h, "published");

		add_str(pb, "host_endpoint", r->published);
		cJSON_AddStringToObject(pb, "egress",
					"dropped: iptables and ip6tables OUTPUT policy "
					"DROP except loopback and replies");
		cJSON_AddBoolToObject(pb, "dns_off", r->applied.dns_off);
		cJSON_AddBoolToObject(pb, "transcript_has_agent_traffic", false);
	}
	cJSON_AddBoolToObject(h, "kept", r->kept);
	if (r->warm)
		cJSON_AddBoolToObject(h, "warm", true);
	if (r->warm) {
		/* --reuse: the episodes before this one on the same sandbox, the reset that
		 * made it clean for this one, and what the reset after it did. */
		cJSON_AddNumberToObject(h, "reused", r->reused);
		if (r->reused) {
			cJSON *rs = cJSON_AddObjectToObject(h, "reset_before_ms");

			cJSON_AddNumberToObject(rs, "total", r->reset_ms);
			cJSON_AddNumberToObject(rs, "kill", r->reset_kill_ms);
			cJSON_AddNumberToObject(rs, "agent", r->reset_agent_ms);
			cJSON_AddNumberToObject(rs, "clean", r->reset_clean_ms);
			cJSON_AddNumberToObject(rs, "verify", r->reset_verify_ms);
		}
		if (r->reset_after) {
			cJSON *ra = cJSON_AddObjectToObject(h, "reset_after");

			cJSON_AddBoolToObject(ra, "clean", !r->retired);
			cJSON_AddBoolToObject(ra, "retired", r->retired);
			add_str(ra, "found", r->reset_found);
		}
	}
	add_hardening(h, r);
}

/* "provenance": the version, and the task folder's git state. */
static void add_provenance(cJSON *o, const sbx_run_result *r)
{
	cJSON *p = cJSON_AddObjectToObject(o, "provenance");

	cJSON_AddStringToObject(p, "sandboxctl_version", SBX_VERSION);
	cJSON_AddBoolToObject(p, "in_git", r->provenance.known);
	if (r->provenance.known) {
		add_str(p, "repository", r->provenance.repo);
		add_str(p, "task_path", r->provenance.task_path);
		add_str(p, "commit", r->provenance.commit[0] ? r->provenance.commit : NULL);
		cJSON_AddBoolToObject(p, "dirty", r->provenance.dirty);
		cJSON_AddNumberToObject(p, "changed_files", r->provenance.changed);
	}
}

/* "relay": its counters. */
static void add_relay(cJSON *o, const sbx_run_result *r)
{
	cJSON *rel = cJSON_AddObjectToObject(o, "relay");

	cJSON_AddNumberToObject(rel, "requests", (double)r->relay.requests);
	cJSON_AddNumberToObject(rel, "streams_opened", (double)r->relay.streams_opened);
	cJSON_AddNumberToObject(rel, "reused", (double)r->relay.reused);
	cJSON_AddNumberToObject(rel, "transcript_lines", (double)r->relay.transcript_lines);
	cJSON_AddNumberToObject(rel, "unauthorized", (double)r->relay.unauthorized);
	cJSON_AddNumberToObject(rel, "forbidden", (double)r->relay.forbidden);
	cJSON_AddNumberToObject(rel, "evicted", (double)r->relay.evicted);
	cJSON_AddNumberToObject(rel, "timed_out", (double)r->relay.timed_out);
	cJSON_AddNumberToObject(rel, "over_budget", (double)r->relay.over_budget);
	cJSON_AddNumberToObject(rel, "buffered_peak", (double)r->relay.buffered_peak);
}

/* "files": what the run directory holds. */
static void add_files(cJSON *o, const sbx_run_result *r)
{
	cJSON *h = cJSON_AddObjectToObject(o, "files");

	cJSON_AddStringToObject(h, "transcript", "transcript.jsonl");
	if (r->trajectory)
		cJSON_AddStringToObject(h, "trajectory", "trajectory.json");
	else if (r->trajectory_error)
		cJSON_AddStringToObject(h, "trajectory_error", r->trajectory_error);
	cJSON_AddStringToObject(h, "container_log", "container.log");
	cJSON_AddStringToObject(h, "agent_log", "agent.log");
	cJSON_AddStringToObject(h, "inputs", "inputs/");
	cJSON_AddStringToObject(h, "outputs", "outputs/");
	cJSON_AddStringToObject(h, "task", "task/");
	if (r->screenshot) {
		cJSON_AddStringToObject(h, "screenshot", "screenshot.png");
		cJSON_AddBoolToObject(h, "screenshot_reloaded", r->screenshot_reloaded);
	}
	if (r->frames) {
		cJSON_AddStringToObject(h, "frames", "frames/");
		cJSON_AddNumberToObject(h, "frame_count", r->frames);
	}
}

cJSON *sbx_run_result_tree(const sbx_run_result *r)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "schema_version", 1);
	add_str(o, "run_id", r->run_id);
	add_str(o, "task", r->task);
	if (r->seeded)
		cJSON_AddNumberToObject(o, "seed", (double)r->seed);
	else
		cJSON_AddNullToObject(o, "seed");
	cJSON_AddStringToObject(o, "status", sbx_run_status_name(r->status));
	/*
	 * Task outcome, the agent's own failure, or infrastructure: a sweep must
	 * never count one as another (only infrastructure is retried).
	 */
	cJSON_AddStringToObject(o, "outcome", sbx_run_outcome_name(r->status));
	cJSON_AddBoolToObject(o, "passed", r->status == SBX_RUN_PASS);
	if (r->grade.graded)
		cJSON_AddNumberToObject(o, "score", r->grade.score);
	else
		cJSON_AddNullToObject(o, "score");
	cJSON_AddStringToObject(o, "ended_by", sbx_run_end_name(r->end));
	{
		_cleanup_free_ char *why = sbx_run_result_reason(r);

		if (why)
			cJSON_AddStringToObject(o, "reason", why);
		else
			cJSON_AddNullToObject(o, "reason");
	}
	if (r->error) {
		cJSON *e = cJSON_AddObjectToObject(o, "error");
		add_str(e, "kind", r->error_kind ? r->error_kind : "engine");
		add_str(e, "message", r->error);
	} else {
		cJSON_AddNullToObject(o, "error");
	}
	cJSON_AddNumberToObject(o, "exit_code", sbx_run_status_exit_code(r->status));
	add_grade(o, r);
	if (r->verifier.harbor)
		add_verifier(o, &r->verifier);
	add_agent(o, r);
	add_timings(o, r);
	add_limits(o, r);
	add_sandbox(o, r);
	add_provenance(o, r);
	add_relay(o, r);
	add_files(o, r);
	return TAKE_PTR(o);
}

char *sbx_run_result_json(const sbx_run_result *r)
{
	_cleanup_json_ cJSON *o = sbx_run_result_tree(r);

	return o ? cJSON_Print(o) : NULL;
}

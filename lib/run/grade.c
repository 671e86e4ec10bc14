/* SPDX-License-Identifier: MIT */
/*
 * Grading an episode's outputs: in process (sbx_run_grade_outputs), or in a
 * child process with limits (sbx_run_grade_isolated), which is how every
 * command that runs episodes grades: the outputs are the agent's, and a
 * grader that crashes, loops or eats memory on them must end that episode,
 * not the process that holds a sweep's or a service's other episodes.
 *
 * The child is an exec'd program, not a fork: sweep and serve are
 * multi-threaded, and a fork would copy whatever locks other threads held
 * (libcurl's, libxml2's, stdio's) into a child that can never release them.
 * sandboxctl passes sandbox-grader, a small program next to it (the
 * grader's libraries only: it starts in ~3 ms where sandboxctl's 50-odd
 * libraries take 25-50 ms), else itself ("/proc/self/exe"); either enters
 * sbx_run_grader_main through the internal `__grade` verb. The answer comes
 * back over a pipe as one JSON object, capped and parsed as untrusted text.
 */

/* Changes whenever the child's arguments or answer change: a sandbox-grader
 * from another build refuses to answer rather than be misread. */
#define GRADER_PROTOCOL "1"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/clock.h"
#include "sbx/file.h"
#include "sbx/grade.h"
#include "sbx/json.h"
#include "sbx/run.h"

extern char **environ;

#if defined(__SANITIZE_ADDRESS__)
#define GRADER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GRADER_ASAN 1
#endif
#endif
#ifndef GRADER_ASAN
#define GRADER_ASAN 0
#endif

#define GIB (1024.0 * 1024 * 1024)

void sbx_run_grade_clear(sbx_run_grade *g)
{
	if (!g)
		return;
	sbx_free_all(g->report_text, g->error);
	cJSON_Delete(g->report);
	*g = (sbx_run_grade){0};
}

int sbx_run_grade_outputs(const sbx_task *task, const char *outputs_dir, sbx_run_grade *out,
			  sbx_error *err)
{
	_cleanup_(sbx_grade_result_freep) sbx_grade_result *g = NULL;
	_cleanup_(sbx_buf_free) sbx_buf text = SBX_BUF_INIT(16 * 1024 * 1024);
	int r;

	r = sbx_grade_task(task, outputs_dir, &g, err);
	if (r < 0)
		return r;
	out->graded = true;
	out->status = g->status;
	out->score = g->score;
	out->cells_graded = g->graded;
	out->cells_matched = g->matched;
	snprintf(out->recalc, sizeof(out->recalc), "%s",
		 g->recalc.computed   ? "native"
		 : g->recalc.formulas ? "sandbox"
				      : "none");
	out->recalc_formulas = g->recalc.formulas;
	out->recalc_native = g->recalc.computed;
	out->recalc_unsupported = g->recalc.unsupported;
	if (sbx_grade_report_text(g, 50, &text) >= 0)
		out->report_text = sbx_buf_steal(&text, NULL);
	out->report = sbx_grade_report_tree(g);
	return 0;
}

/* ---- the child ------------------------------------------------------------ */

/* The answer: the grade, the grader's own error, or "limit": "memory". */
static char *answer_json(int r, const sbx_run_grade *g, const sbx_error *e)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	if (r == -ENOMEM) {
		cJSON_AddStringToObject(o, "limit", "memory");
	} else if (r < 0) {
		cJSON_AddStringToObject(o, "error", sbx_error_message(e));
		cJSON_AddNumberToObject(o, "code", r);
	} else {
		cJSON_AddNumberToObject(o, "status", g->status);
		cJSON_AddNumberToObject(o, "score", g->score);
		cJSON_AddNumberToObject(o, "cells_graded", (double)g->cells_graded);
		cJSON_AddNumberToObject(o, "cells_matched", (double)g->cells_matched);
		cJSON_AddStringToObject(o, "recalc", g->recalc);
		cJSON_AddNumberToObject(o, "recalc_formulas", (double)g->recalc_formulas);
		cJSON_AddNumberToObject(o, "recalc_native", (double)g->recalc_native);
		cJSON_AddNumberToObject(o, "recalc_unsupported", (double)g->recalc_unsupported);
		if (g->report_text)
			cJSON_AddStringToObject(o, "report_text", g->report_text);
		if (g->report)
			cJSON_AddItemReferenceToObject(o, "report", g->report);
	}
	return cJSON_PrintUnformatted(o);
}

/*
 * Test-only faults (sbx_run_grader_opts.fault): what a grader bug or a
 * hostile output could do, made on purpose so the tests can show the host
 * survives each. Returns only for an unknown name.
 */
static void inject_fault(const char *fault)
{
	if (strcmp(fault, "segv") == 0) {
		raise(SIGSEGV);
	} else if (strcmp(fault, "abort") == 0) {
		abort();
	} else if (strcmp(fault, "cpu") == 0) {
		struct rlimit cpu = {1, 2};
		volatile unsigned long spin = 0;

		setrlimit(RLIMIT_CPU, &cpu);
		for (;;)
			spin++;
	} else if (strcmp(fault, "memory") == 0) {
		if (GRADER_ASAN) {
			/* No address-space limit under ASan: do not eat the host's memory. */
			fputs("grader: no memory limit under ASan\n", stderr);
			_exit(3);
		}
		for (;;) {
			char *p = malloc(64 << 20);

			if (!p) {
				static const char a[] = "{\"limit\":\"memory\"}";

				sbx_write_all(1, a, sizeof(a) - 1);
				_exit(0);
			}
			/* Kept, untouched: address space is what RLIMIT_AS counts, so the
			 * limit is reached without taking the host's memory. */
			p[0] = 1;
		}
	} else if (strcmp(fault, "garbage") == 0) {
		static const char a[] = "{\"status\":0,\"score\":";

		sbx_write_all(1, a, sizeof(a) - 1);
		_exit(0);
	} else if (strcmp(fault, "flood") == 0) {
		static char chunk[1 << 16];

		memset(chunk, ' ', sizeof(chunk));
		for (size_t n = 0; n <= SBX_RUN_GRADER_ANSWER_MAX; n += sizeof(chunk))
			if (sbx_write_all(1, chunk, sizeof(chunk)) < 0)
				_exit(1);
		_exit(0);
	}
}

int sbx_run_grader_main(int argc, char **argv)
{
	_cleanup_free_ char *json = NULL;
	sbx_task *task = NULL;
	sbx_run_grade g = {0};
	sbx_error e = SBX_ERROR_INIT;
	struct rlimit core = {0, 0}, cpu = {SBX_RUN_GRADER_CPU_S, SBX_RUN_GRADER_CPU_S + 5};
	long parent;
	int r;

	/* __grade PROTOCOL PARENT_PID TASK OUTPUTS [FAULT] */
	if (argc < 5 || argc > 6 || (parent = strtol(argv[2], NULL, 10)) <= 1) {
		fputs("sandboxctl: __grade is internal (the grading child of run, sweep, serve)\n",
		      stderr);
		return 2;
	}
	if (strcmp(argv[1], GRADER_PROTOCOL) != 0) {
		static const char a[] = "{\"error\":\"the grader is from another build of "
					"sandboxctl (protocol " GRADER_PROTOCOL
					"): rebuild or reinstall both\",\"code\":-71}";

		return sbx_write_all(1, a, sizeof(a) - 1) < 0;
	}
	/* Gone with the thread that waits for it, however that ends. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != (pid_t)parent)
		return 2;
	setrlimit(RLIMIT_CORE, &core);
	setrlimit(RLIMIT_CPU, &cpu);
	if (!GRADER_ASAN) {
		/* ASan reserves terabytes of shadow address space: no RLIMIT_AS there. */
		struct rlimit as = {SBX_RUN_GRADER_MEMORY, SBX_RUN_GRADER_MEMORY};

		setrlimit(RLIMIT_AS, &as);
	}
	if (argc == 6)
		inject_fault(argv[5]);
	r = sbx_task_load(argv[3], &task, &e);
	if (r >= 0)
		r = sbx_run_grade_outputs(task, argv[4], &g, &e);
	json = answer_json(r, &g, &e);
	sbx_run_grade_clear(&g);
	sbx_task_free(task);
	if (!json)
		return 1;
	return sbx_write_all(1, json, strlen(json)) < 0 ? 1 : 0;
}

/* ---- the parent ----------------------------------------------------------- */

static bool count_ok(const cJSON *o, const char *key, double max)
{
	const cJSON *v = sbx_json_get(o, key);

	return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0 &&
	       v->valuedouble <= max && v->valuedouble == floor(v->valuedouble);
}

/* An optional string member: absent, or a string (copied into *out). */
static bool opt_string(const cJSON *o, const char *key, char **out)
{
	const cJSON *v = sbx_json_get(o, key);

	if (!v)
		return true;
	if (!cJSON_IsString(v) || !(*out = strdup(v->valuestring)))
		return false;
	return true;
}

/* The tree at key, taken out of o (absent: none); false when it is not an object. */
static bool opt_object(cJSON *o, const char *key, cJSON **out)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v)
		return true;
	if (!cJSON_IsObject(v))
		return false;
	*out = cJSON_DetachItemViaPointer(o, v);
	return true;
}

/*
 * The child's answer into *out: 0 graded, 1 a grade error (out->error set),
 * or the grader's own error (negative, in err), as sbx_run_grade_outputs
 * would have returned it in process.
 */
static int parse_answer(const char *text, size_t len, sbx_run_grade *out, sbx_error *err)
{
	_cleanup_json_ cJSON *o = NULL;
	sbx_run_grade g = {0};
	const cJSON *v;
	const char *why = NULL;

	if (sbx_json_parse(text, len, &o, NULL) < 0 || !cJSON_IsObject(o))
		why = len ? "not a JSON object" : "no answer";
	else if (strcmp(sbx_json_get_string(o, "limit", ""), "memory") == 0)
		return asprintf(&out->error, "grader exceeded its %.0f GiB memory limit",
				SBX_RUN_GRADER_MEMORY / GIB) < 0
			       ? sbx_error_set(err, -ENOMEM, "out of memory")
			       : 1;
	else if (cJSON_IsString(v = sbx_json_get(o, "error"))) {
		double code = sbx_json_get_number(o, "code", -EIO);

		return sbx_error_set(err, code < 0 && code > -4096 ? (int)code : -EIO, "%s",
				     v->valuestring);
	} else if (!count_ok(o, "status", SBX_GRADE_FAIL))
		why = "bad status";
	else if (!cJSON_IsNumber(v = sbx_json_get(o, "score")) || !(v->valuedouble >= 0) ||
		 !(v->valuedouble <= 1))
		why = "bad score";
	else if (!count_ok(o, "cells_graded", 9007199254740992.0) ||
		 !count_ok(o, "cells_matched", 9007199254740992.0) ||
		 !count_ok(o, "recalc_formulas", 9007199254740992.0) ||
		 !count_ok(o, "recalc_native", 9007199254740992.0) ||
		 !count_ok(o, "recalc_unsupported", 9007199254740992.0))
		why = "bad count";
	else if (!cJSON_IsString(v = sbx_json_get(o, "recalc")) ||
		 strlen(v->valuestring) >= sizeof(g.recalc))
		why = "bad recalc";
	if (why) {
		if (asprintf(&out->error, "grader answered garbage (%s)", why) < 0)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		return 1;
	}
	g.graded = true;
	g.status = (sbx_grade_status)sbx_json_get_number(o, "status", SBX_GRADE_FAIL);
	g.score = sbx_json_get_number(o, "score", 0);
	g.cells_graded = (uint64_t)sbx_json_get_number(o, "cells_graded", 0);
	g.cells_matched = (uint64_t)sbx_json_get_number(o, "cells_matched", 0);
	snprintf(g.recalc, sizeof(g.recalc), "%s", sbx_json_get_string(o, "recalc", ""));
	g.recalc_formulas = (uint64_t)sbx_json_get_number(o, "recalc_formulas", 0);
	g.recalc_native = (uint64_t)sbx_json_get_number(o, "recalc_native", 0);
	g.recalc_unsupported = (uint64_t)sbx_json_get_number(o, "recalc_unsupported", 0);
	if (!opt_string(o, "report_text", &g.report_text) || !opt_object(o, "report", &g.report)) {
		sbx_run_grade_clear(&g);
		if (asprintf(&out->error, "grader answered garbage (bad report)") < 0)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		return 1;
	}
	*out = g;
	return 0;
}

/* Why a child that gave no usable answer ended: one line, naming its log. */
static char *end_reason(int status, unsigned wall_s, bool timed_out, const char *log)
{
	char *s = NULL, *with = NULL;
	int k;

	if (timed_out)
		k = asprintf(&s, "grader exceeded its %u s time limit", wall_s);
	else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU)
		k = asprintf(&s, "grader exceeded its %d s CPU limit", SBX_RUN_GRADER_CPU_S);
	else if (WIFSIGNALED(status))
		k = asprintf(&s, "grader crashed: signal %d (SIG%s)", WTERMSIG(status),
			     sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
	else
		k = asprintf(&s, "grader exited with status %d", WEXITSTATUS(status));
	if (k < 0)
		return NULL;
	if (!log)
		return s;
	/* What it wrote there (a sanitizer's report, say) says more. */
	k = asprintf(&with, "%s (its stderr: %s)", s, log);
	free(s);
	return k < 0 ? NULL : with;
}

static int spawn_child(pid_t *pid, const char *program, const char *const *argv, int out_fd,
		       const char *log_path, sbx_error *err)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	int r;

	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	if (posix_spawn_file_actions_init(&fa) != 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (posix_spawnattr_init(&at) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	/*
	 * Its own process group, so a terminal's Ctrl-C leaves the grade to the
	 * parent (which records the interrupt itself); default signal actions
	 * and an empty mask, whatever the spawning thread had.
	 */
	r = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!r)
		r = posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	if (!r)
		r = posix_spawn_file_actions_addopen(&fa, 2, log_path ? log_path : "/dev/null",
						     O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (!r)
		r = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
							  POSIX_SPAWN_SETSIGDEF);
	if (!r)
		r = posix_spawnattr_setpgroup(&at, 0);
	if (!r)
		r = posix_spawnattr_setsigmask(&at, &none);
	if (!r)
		r = posix_spawnattr_setsigdefault(&at, &all);
	if (!r)
		r = posix_spawn(pid, program, &fa, &at, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (r != 0)
		return sbx_error_set(err, -r, "grader '%s': could not start: %s", program,
				     strerror(r));
	return 0;
}

/*
 * Reads the child's answer until EOF, the cap or the deadline, then reaps
 * it (killing it past the deadline). *timed_out / *too_big say why it was
 * killed.
 */
static int collect_child(pid_t pid, int fd, int64_t deadline, sbx_buf *answer, bool *timed_out,
			 bool *too_big)
{
	int status = 0;
	pid_t w;

	for (;;) {
		char chunk[65536];
		ssize_t n;

		if (sbx_fd_wait(fd, POLLIN, (long)deadline) == -ETIMEDOUT) {
			*timed_out = true;
			break;
		}
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		if (sbx_buf_append(answer, chunk, (size_t)n) < 0) {
			*too_big = true;
			break;
		}
	}
	if (*timed_out || *too_big)
		kill(pid, SIGKILL);
	/* EOF comes just before the exit: wait for that too, within the deadline
	 * (50 us doubling to 5 ms, so a grade is not charged a whole pause). */
	for (long pause_ns = 50000; (w = waitpid(pid, &status, WNOHANG)) == 0 && !*timed_out;) {
		struct timespec ts = {0, pause_ns};

		if (sbx_now_ms() >= deadline) {
			*timed_out = true;
			kill(pid, SIGKILL);
			break;
		}
		nanosleep(&ts, NULL);
		pause_ns = pause_ns < 5000000 ? pause_ns * 2 : pause_ns;
	}
	while (w == 0 && (w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	return status;
}

int sbx_run_grade_isolated(const char *program, const sbx_task *task, const char *outputs_dir,
			   const sbx_run_grader_opts *opts, sbx_run_grade *out, sbx_error *err)
{
	const char *log_path = opts ? opts->log_path : NULL, *fault = opts ? opts->fault : NULL;
	unsigned wall_s = opts && opts->wall_s ? opts->wall_s : SBX_RUN_GRADER_WALL_S;
	_cleanup_(sbx_buf_free) sbx_buf answer = SBX_BUF_INIT(SBX_RUN_GRADER_ANSWER_MAX);
	char parent[24];
	const char *argv[] = {program,	  "__grade",   GRADER_PROTOCOL, parent,
			      task->path, outputs_dir, fault,		NULL};
	int fds[2], status, r;
	bool timed_out = false, too_big = false;
	pid_t pid;
	struct stat st;
	const char *base;

	snprintf(parent, sizeof(parent), "%ld", (long)getpid());
	if (pipe2(fds, O_CLOEXEC) < 0)
		return sbx_error_set(err, -errno, "grader: pipe: %s", strerror(errno));
	r = spawn_child(&pid, program, argv, fds[1], log_path, err);
	close(fds[1]);
	if (r < 0) {
		close(fds[0]);
		return r;
	}
	status = collect_child(pid, fds[0], sbx_now_ms() + wall_s * 1000LL, &answer, &timed_out,
			       &too_big);
	close(fds[0]);
	if (log_path && stat(log_path, &st) == 0 && st.st_size == 0)
		unlink(log_path);
	if (log_path && (stat(log_path, &st) < 0 || st.st_size == 0))
		log_path = NULL;

	if (too_big) {
		if (asprintf(&out->error, "grader's answer is over %d MiB",
			     SBX_RUN_GRADER_ANSWER_MAX >> 20) < 0)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		return 0;
	}
	if (!timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		r = parse_answer(answer.data ? answer.data : "", answer.len, out, err);
		return r < 0 ? r : 0;
	}
	base = log_path ? strrchr(log_path, '/') : NULL;
	out->error = end_reason(status, wall_s, timed_out, base ? base + 1 : log_path);
	return out->error ? 0 : sbx_error_set(err, -ENOMEM, "out of memory");
}

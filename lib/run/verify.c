/* SPDX-License-Identifier: MIT */
/*
 * A Harbor task's verifier, where the agent cannot reach. In Harbor the
 * verifier runs in the container the agent just controlled, so an agent can
 * write /logs/verifier/reward.json, edit the tests, leave a process or a PATH
 * shim behind. Here, when the agent's phase ends:
 *
 *   1. every process of the agent's uid in its sandbox is killed;
 *   2. only the workdir leaves, as a tar (SBX_RUN_WORKDIR_MAX, else
 *      sandbox_failed), extracted on the host by the untrusted-tar rules
 *      (no absolute or escaping symlink, no device or fifo) into
 *      runs/<id>/workdir/ and packed again: that archive's sha256 is recorded;
 *   3. a fresh sandbox of the same image id (same hardening, plus /tests and
 *      /logs tmpfs) gets it in /workspace and tests/ in /tests; test.sh runs
 *      there under the verifier's timeout, its output in
 *      /logs/verifier/test-stdout.txt;
 *   4. reward.json (a flat object of finite numbers with "reward") wins over
 *      reward.txt (one finite number); both are capped and parsed strictly.
 *
 * What still reaches the verifier is the workdir itself: tests that import
 * or run its code run the agent's code (docs/harbor.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rundir.h"
#include "run-internal.h"
#include "sbx/cleanup.h"
#include "sbx/docker_tar.h"
#include "sbx/image.h"
#include "sbx/json.h"
#include "sbx/path.h"

#define AGENT_UID "1001:1000"
#define FRAME_MAX (2 * (SBX_RUN_REWARD_MAX_BYTES + 1) + SBX_RUN_VERIFIER_TAIL + 4096)

/*
 * test.sh, then (its processes killed) the results framed on stdout: "exit N",
 * "ms N" (test.sh's own time), then for reward.json, reward.txt and the
 * output's tail "NAME LEN" and LEN bytes (LEN -1: absent, not a regular file).
 */
#define RUN_TESTS                                                                                  \
	"mkdir -p /logs/verifier /logs/agent /logs/artifacts; cd \"$SANDBOX_WORKSPACE\""           \
	" || exit 125\n"                                                                           \
	"s=$(date +%s%N)\n"                                                                        \
	"if command -v bash >/dev/null 2>&1; then bash /tests/test.sh; else sh /tests/test.sh; fi" \
	" </dev/null >/logs/verifier/test-stdout.txt 2>&1\n"                                       \
	"code=$?; e=$(date +%s%N)\n"                                                               \
	"kill -KILL -1 2>/dev/null\n" /* a date without %N (busybox) prints it as is: no time      \
					 then, not a shell error */                                \
	"case $s$e in *[!0-9]*) ms=-1;; *) ms=$(( (e - s) / 1000000 ));; esac\n"                   \
	"echo \"exit $code\"; echo \"ms $ms\"\n"                                                   \
	"for f in reward.json reward.txt; do p=/logs/verifier/$f\n"                                \
	"  if [ -f \"$p\" ] && [ ! -L \"$p\" ]; then\n"                                            \
	"    echo \"$f $(head -c 65537 \"$p\" | wc -c)\"; head -c 65537 \"$p\"\n"                  \
	"  else echo \"$f -1\"; fi\n"                                                              \
	"done\n"                                                                                   \
	"p=/logs/verifier/test-stdout.txt\n"                                                       \
	"[ -f \"$p\" ] && [ ! -L \"$p\" ] || p=/dev/null\n" /* replaced by a FIFO: no tail */      \
	"echo \"tail $(tail -c 2048 \"$p\" | wc -c)\"; tail -c 2048 \"$p\"\n"

/* The workspace (the task's workdir) is $SANDBOX_WORKSPACE, as for PID 1 and the server. */
static int sh(const sbx_run *run, sbx_backend *b, const char *uid, const char *line,
	      long timeout_ms, size_t max, sbx_buf *out, int *code, sbx_error *err)
{
	char ws[SBX_TASK_HARBOR_WORKDIR_MAX + 32];
	const char *const env[] = {"TEST_DIR=/tests", ws, NULL};
	sbx_backend_exec x = {
		.argv = (const char *const[]){"/bin/sh", "-c", line, NULL},
		.user = uid,
		.cwd = run->workspace,
		.env = env,
		.timeout_ms = timeout_ms,
		.max_bytes = max,
	};

	snprintf(ws, sizeof(ws), "SANDBOX_WORKSPACE=%s", run->workspace);
	return b->ops->exec(b, &x, out, NULL, code, err);
}

static int group_writable(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)f;
	if (type == FTW_F || type == FTW_D)
		return chmod(path, (st->st_mode & 07777) | 020) < 0 ? -1 : 0;
	return 0;
}

/* Steps 1 and 2: the workdir out of the agent's sandbox, checked, packed again. */
static int take_workdir(sbx_run *run, sbx_docker_tar **out, const void **data, size_t *len)
{
	/* kill(-1) spares its caller: the shell, which then becomes tar. Twice: a child
	 * forked while the first went round is caught by the second. */
	static const char *const tar_argv[] = {
		"/bin/sh", "-c",
		"kill -KILL -1 2>/dev/null; kill -KILL -1 2>/dev/null; "
		"exec tar -cf - -C \"$SANDBOX_WORKSPACE\" .",
		NULL};
	char ws[SBX_TASK_HARBOR_WORKDIR_MAX + 32];
	const char *const env[] = {ws, NULL};
	sbx_backend_exec x = {.argv = tar_argv,
			      .env = env,
			      .user = AGENT_UID,
			      .timeout_ms = 120000,
			      .max_bytes = SBX_RUN_WORKDIR_MAX};
	_cleanup_(sbx_buf_free) sbx_buf tar = SBX_BUF_INIT(SBX_RUN_WORKDIR_MAX + (1u << 20));
	_cleanup_(sbx_docker_tar_freep) sbx_docker_tar *t = NULL;
	_cleanup_free_ char *dir = NULL;
	sbx_docker_extract_opts eo = SBX_DOCKER_EXTRACT_OPTS_INIT;
	sbx_docker_extract_stats st = {0};
	sbx_error e = SBX_ERROR_INIT;
	double t0 = sbx_now_msf();
	int code = -1, r, fd;

	snprintf(ws, sizeof(ws), "SANDBOX_WORKSPACE=%s", run->workspace);

	r = run->backend->ops->exec(run->backend, &x, &tar, NULL, &code, &e);
	sbx_run__phase_end(run, SBX_PHASE_COPY_OUT, t0, 0, NULL, NULL);
	if (r == -ENOBUFS) {
		sbx_error_replace(&e, -EFBIG, "the workdir is over the %llu MiB archive cap",
				  SBX_RUN_WORKDIR_MAX >> 20);
		sbx_run__set_sandbox_failed(run, "workdir_too_large", &e);
		return -EFBIG;
	}
	if (r < 0) {
		sbx_sandbox_status ss = {0};

		/* The agent's sandbox ended (its memory, its processes): the attempt's outcome. */
		if (run->backend->ops->status(run->backend, &ss, NULL) >= 0 && !ss.running)
			sbx_run__set_sandbox_failed(run, ss.oom_killed ? "oom" : "sandbox_died",
						    &e);
		else
			sbx_run__fail(run, r, "copy_out", &e);
		return r;
	}
	if (code != 0) /* an unreadable file the agent left: the rest still goes */
		sbx_log_warning("tar of the workdir exited %d; the readable files go on", code);
	if (asprintf(&dir, "%s/workdir", run->res.run_dir) < 0 || mkdir(dir, 0755) < 0 ||
	    (fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		sbx_run__fail(run,
			      sbx_error_set(&e, -errno, "'%s/workdir': %s", run->res.run_dir,
					    strerror(errno)),
			      "host", &e);
		return -EIO;
	}
	eo.max_total_bytes = SBX_RUN_WORKDIR_MAX;
	eo.max_file_bytes = SBX_RUN_WORKDIR_MAX;
	r = sbx_docker_tar_extract(tar.data, tar.len, fd, &eo, &st, &e);
	close(fd);
	run->res.verifier.workdir_refused = st.refused;
	if (r == -EFBIG || r == -E2BIG) { /* over the caps on the host side: too many entries */
		sbx_error_prefix(&e, r, "the workdir's archive");
		sbx_run__set_sandbox_failed(run, "workdir_too_large", &e);
		return r;
	}
	if (r == -EPERM) {
		sbx_log_warning("workdir: %s", sbx_error_message(&e));
		sbx_error_clear(&e);
		r = 0;
	}
	/* Extraction masks group write: the tests' uid (the agent's, group 1000) writes too. */
	if (r >= 0 && nftw(dir, group_writable, 16, FTW_PHYS) != 0)
		r = sbx_error_set(&e, -EIO, "'%s': cannot make it group-writable", dir);
	if (r >= 0)
		r = sbx_run__tar_dir(run->res.run_dir, "workdir", "", &t, data, len, &e);
	if (r < 0)
		return sbx_run__fail(run, r, "host", &e);
	run->res.verifier.workdir_bytes = *len;
	sbx_image_sha256_hex(*data, *len, run->res.verifier.workdir_sha256);
	*out = TAKE_PTR(t);
	return 0;
}

static void remove_sandbox(sbx_backend *b)
{
	sbx_error e = SBX_ERROR_INIT;

	if (!b)
		return;
	if (b->id && b->ops->destroy(b, &e) < 0)
		sbx_log_warning("removing the verifier's sandbox: %s", sbx_error_message(&e));
	b->ops->free(b);
}

/* The verifier's sandbox: the agent's image id and limits, plus /tests and /logs. */
static void verifier_spec(const sbx_run *run, sbx_sandbox_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->image = run->res.image_id ? run->res.image_id : run->res.image;
	spec->run_id = run->res.run_id;
	spec->task = run->task->id;
	spec->owner = run->owner;
	spec->created = time(NULL);
	/* Made while the agent works: PID 1 outlives the agent's deadline and the tests'. */
	spec->deadline = (run->res.deadline > spec->created ? run->res.deadline : spec->created) +
			 run->task->harbor->verifier_timeout_s + 60;
	spec->limits = run->res.limits.resolved;
	spec->limits.grace_s = 5;
	spec->workspace_bytes = run->res.limits.workspace_bytes;
	/* The task's workdir, where its tests look (the agent's sandbox had the same). */
	spec->workspace = strcmp(run->workspace, SBX_SANDBOX_WORKSPACE) ? run->workspace : NULL;
	spec->tmp_bytes = run->res.limits.tmp_bytes;
	spec->run_bytes = run->res.limits.run_bytes;
	spec->test = run->o.test;
	spec->verifier = true;
}

/* A new backend with the verifier's sandbox created and started in it. */
static int start_verifier(sbx_run *run, sbx_backend **out, sbx_error *err)
{
	sbx_sandbox_spec spec;
	sbx_backend *b = NULL;
	int r;

	verifier_spec(run, &spec);
	r = run->o.backend ? run->o.backend(&b, run->o.engine, run->o.backend_userdata, err)
			   : sbx_backend_docker_new_at(&b, run->o.engine, err);
	if (r >= 0)
		r = b->ops->create(b, &spec, err);
	if (r >= 0)
		r = b->ops->start(b, err);
	*out = b; /* also on failure: the caller removes what was made */
	return r;
}

static void *prestart_main(void *arg)
{
	sbx_run *run = arg;
	double t = sbx_now_msf();

	run->vstart_result = start_verifier(run, &run->vbackend, &run->vstart_err);
	run->res.verifier.create_ms = sbx_now_msf() - t;
	return NULL;
}

void sbx_run__verifier_prestart(sbx_run *run)
{
	if (!run->task->harbor || run->vstarting || !run->backend || !run->backend->ops->exec)
		return;
	run->vstarting = pthread_create(&run->vthread, NULL, prestart_main, run) == 0;
}

/* The pre-started sandbox (joined), or NULL when there is none. */
static sbx_backend *take_prestarted(sbx_run *run)
{
	sbx_backend *b;

	if (!run->vstarting)
		return NULL;
	pthread_join(run->vthread, NULL);
	run->vstarting = false;
	b = TAKE_PTR(run->vbackend);
	run->res.verifier.made_ahead = run->vstart_result >= 0;
	if (run->vstart_result >= 0)
		return b;
	sbx_log_warning("verifier sandbox made ahead: %s; making another",
			sbx_error_message(&run->vstart_err));
	remove_sandbox(b);
	return NULL;
}

static void *remove_main(void *arg)
{
	sbx_run *run = arg;
	double t = sbx_now_msf();

	remove_sandbox(TAKE_PTR(run->vbackend));
	run->res.verifier.remove_ms = sbx_now_msf() - t;
	return NULL;
}

void sbx_run__verifier_discard(sbx_run *run)
{
	if (run->vremoving) {
		pthread_join(run->vthread, NULL);
		run->vremoving = false;
	}
	remove_sandbox(take_prestarted(run));
}

/* The workdir (by the agent's uid, group-writable) and tests/ in one archive for /. */
static int pack_inputs(sbx_run *run, sbx_docker_tar **out, const void **data, size_t *len,
		       sbx_error *err)
{
	_cleanup_(sbx_docker_tar_freep) sbx_docker_tar *t = NULL;
	_cleanup_free_ char *wd = NULL, *tests = NULL;
	int r;

	if (asprintf(&wd, "%s/workdir", run->res.run_dir) < 0 ||
	    asprintf(&tests, "%s/tests", run->task->dir) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_docker_tar_new(&t, (size_t)SBX_RUN_WORKDIR_MAX + (256u << 20), err);
	if (r >= 0)
		r = sbx_docker_tar_add_dir(t, run->workspace + 1, 02775, 1000, 1000, err);
	if (r >= 0)
		r = sbx_docker_tar_add_tree(t, wd, run->workspace + 1, 1000, 1000, err);
	if (r >= 0)
		r = sbx_docker_tar_add_dir(t, "tests", 02775, 1000, 1000, err);
	if (r >= 0)
		r = sbx_docker_tar_add_tree(t, tests, "tests", 1000, 1000, err);
	if (r >= 0)
		r = sbx_docker_tar_finish(t, data, len, err);
	if (r < 0)
		return r;
	*out = TAKE_PTR(t);
	return 0;
}

/* Step 3: the fresh sandbox (made ahead, or now), the copy, test.sh. */
static int run_tests(sbx_run *run, sbx_backend **bp, sbx_buf *out, sbx_error *err)
{
	sbx_run_verifier *v = &run->res.verifier;
	_cleanup_(sbx_docker_tar_freep) sbx_docker_tar *t = NULL;
	const void *tar;
	size_t len;
	double t0 = sbx_now_msf();
	int code = -1, r;

	*bp = take_prestarted(run);
	if (!*bp) {
		r = start_verifier(run, bp, err);
		v->create_ms = sbx_now_msf() - t0;
		if (r < 0)
			return r;
	}
	t0 = sbx_now_msf();
	r = pack_inputs(run, &t, &tar, &len, err);
	if (r >= 0)
		r = (*bp)->ops->copy_in_tar(*bp, "/", tar, len, err);
	v->copy_ms = sbx_now_msf() - t0;
	if (r < 0)
		return r;
	v->ran = true;
	r = sh(run, *bp, AGENT_UID, RUN_TESTS, (long)run->task->harbor->verifier_timeout_s * 1000,
	       FRAME_MAX, out, &code, err);
	if (r == -ETIME) {
		v->timed_out = true;
		sbx_error_clear(err);
		return 0;
	}
	if (r == -ENOBUFS) {
		sbx_error_clear(err);
		v->error = strdup("the verifier's answer was over its cap");
		return 0;
	}
	return r;
}

static void grade_from_reward(sbx_run *run)
{
	sbx_run_verifier *v = &run->res.verifier;
	sbx_run_grade *g = &run->res.grade;

	if (v->timed_out && !v->error &&
	    asprintf(&v->error, "test.sh ran past the verifier's %u s timeout",
		     run->task->harbor->verifier_timeout_s) < 0)
		v->error = NULL;
	if (!v->rewarded || v->timed_out) {
		v->rewarded = false;
		g->error = strdup(v->error ? v->error : "no reward");
		return;
	}
	g->graded = true;
	g->score = v->reward < 0 ? 0 : v->reward > 1 ? 1 : v->reward;
	g->status = v->reward >= 1  ? SBX_GRADE_PASS
		    : v->reward > 0 ? SBX_GRADE_PARTIAL
				    : SBX_GRADE_FAIL;
}

void sbx_run__verify(sbx_run *run)
{
	_cleanup_(sbx_docker_tar_freep) sbx_docker_tar *wt = NULL;
	_cleanup_(sbx_buf_free) sbx_buf out = SBX_BUF_INIT(2 * FRAME_MAX);
	sbx_run_verifier *v = &run->res.verifier;
	sbx_backend *b = NULL;
	sbx_error e = SBX_ERROR_INIT;
	const void *wd;
	size_t wd_len;
	double t0 = sbx_now_msf(), t;
	int r;

	v->exit_code = -1;
	v->harbor = true;
	snprintf(v->workdir, sizeof(v->workdir), "%s", run->workspace);
	if (!run->backend->ops->exec || take_workdir(run, &wt, &wd, &wd_len) < 0) {
		sbx_run__verifier_discard(run);
		return;
	}
	r = run_tests(run, &b, &out, &e);
	/* Removed while the agent's sandbox is (finish joins it): off the episode's path. */
	run->vbackend = b;
	run->vremoving = b && pthread_create(&run->vthread, NULL, remove_main, run) == 0;
	if (!run->vremoving) {
		t = sbx_now_msf();
		remove_sandbox(TAKE_PTR(run->vbackend));
		v->remove_ms = sbx_now_msf() - t;
	}
	v->total_ms = sbx_now_msf() - t0;
	if (r < 0)
		sbx_error_prefix(&e, r, "verifier");
	if (sbx_run__phase_end(run, SBX_PHASE_GRADE, t0, r, "verifier", &e) < 0)
		return;
	if (v->ran && !v->timed_out && !v->error)
		sbx_run__verifier_read(v, out.data, out.len);
	grade_from_reward(run);
}

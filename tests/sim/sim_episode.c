/* SPDX-License-Identifier: MIT */
/* The stand-in episode (see sim_episode.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sbx/cleanup.h"
#include "sbx/clock.h"
#include "sim_episode.h"

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static char *dup0(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* The sandbox's life on its engine; *status and *agent_ms say how it went. */
static void live(sim_episode_config *cfg, sbx_backend *b, double speed, sbx_run_status *status,
		 double *agent_ms, sbx_error *err)
{
	sbx_sandbox_spec spec = {.image = "sim"};
	sbx_sandbox_status st;
	sbx_sandbox_file f = {.name = "input.ods", .data = "", .len = 0};
	double t;

	*status = SBX_RUN_INFRA_ERROR;
	if (b->ops->create(b, &spec, err) < 0 || b->ops->start(b, err) < 0 ||
	    b->ops->copy_in(b, "/workspace", &f, 1, err) < 0)
		return;
	t = sim_draw_ms(cfg->cluster, &cfg->agent) / speed;
	sim_sleep_ms(cfg->cluster, t);
	*agent_ms = t;
	if (b->ops->status(b, &st, err) < 0)
		return;
	if (!st.running) {
		*status = SBX_RUN_SANDBOX_FAILED;
		return;
	}
	if (b->ops->copy_out(b, "/workspace", "/nonexistent", err) < 0)
		return;
	*status = sim_uniform(cfg->cluster) < cfg->p_pass ? SBX_RUN_PASS : SBX_RUN_FAIL;
}

int sim_episode_attempt(const sbx_sweep_attempt *a, sbx_sweep_record *out, void *userdata,
			sbx_error *err)
{
	sim_episode_config *cfg = userdata;
	const sbx_sweep_plan *p = a->plan;
	sbx_error e = SBX_ERROR_INIT;
	sbx_backend *b = NULL;
	sbx_sweep_record r = {0};
	int64_t t0 = sbx_now_ms(), cpu0 = thread_cpu_ns();
	double agent_ms = 0;
	size_t engine = 0;
	sbx_run_status status;
	int rc;

	rc = sim_backend_new(&b, a->engine, cfg->cluster, err);
	if (rc < 0)
		return rc; /* not a simulated engine: the plan is wrong, not the engine */
	(void)sim_cluster_engine_index(cfg->cluster, a->engine, &engine);
	live(cfg, b, sim_cluster_speed(cfg->cluster, engine), &status, &agent_ms, &e);
	/* Whatever happened, the sandbox goes; a remove that fails is the engine's error. */
	if (b->ops->destroy(b, status == SBX_RUN_INFRA_ERROR ? NULL : &e) < 0)
		status = SBX_RUN_INFRA_ERROR;
	b->ops->free(b);

	r.episode = a->episode->index;
	r.attempt = a->attempt;
	r.epoch = a->episode->epoch;
	r.seeded = a->episode->seeded;
	r.seed = a->episode->seed;
	r.status = status;
	r.graded = status != SBX_RUN_INFRA_ERROR;
	r.score = status == SBX_RUN_PASS ? 1 : 0;
	r.agent_ms = agent_ms;
	r.total_ms = (double)(sbx_now_ms() - t0);
	r.tool_calls = -1;
	r.task = strdup(p->tasks[a->episode->task]);
	r.agent = strdup(p->agents[a->episode->agent]);
	r.run_id = strdup(a->run_id);
	r.engine = dup0(a->engine);
	r.error = status == SBX_RUN_INFRA_ERROR ? strdup(sbx_error_message(&e)) : NULL;
	if (!r.task || !r.agent || !r.run_id || (a->engine && !r.engine) ||
	    (status == SBX_RUN_INFRA_ERROR && !r.error)) {
		sbx_sweep_record_clear(&r);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	atomic_fetch_add(&cfg->attempts, 1);
	if (cfg->last_attempt_ms)
		atomic_store(&cfg->last_attempt_ms[engine], sbx_now_ms());
	if (status != SBX_RUN_INFRA_ERROR && cfg->results_on)
		atomic_fetch_add(&cfg->results_on[engine], 1);
	atomic_fetch_add(&cfg->cpu_ns, (uint_fast64_t)(thread_cpu_ns() - cpu0));
	*out = r;
	return 0;
}

sbx_sweep_plan *sim_plan_new(size_t n_tasks, size_t n_agents, unsigned epochs, unsigned retries)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->tasks = calloc(n_tasks, sizeof(char *));
	p->seedable = calloc(n_tasks, sizeof(bool));
	p->agents = calloc(n_agents, sizeof(char *));
	if (!p->tasks || !p->seedable || !p->agents)
		return NULL;
	for (; p->n_tasks < n_tasks; p->n_tasks++)
		if (asprintf(&p->tasks[p->n_tasks], "task%zu", p->n_tasks) < 0)
			return NULL;
	for (; p->n_agents < n_agents; p->n_agents++)
		if (asprintf(&p->agents[p->n_agents], "agent%zu", p->n_agents) < 0)
			return NULL;
	p->epochs = epochs;
	p->retries = retries;
	p->pass_at[p->n_pass_at++] = 1;
	p->created_at = time(NULL);
	if (sbx_sweep_plan_new_id(p, NULL) < 0)
		return NULL;
	return TAKE_PTR(p);
}

int sim_fit_run(sbx_run **out, const char *runs_dir, const char *run_id, sbx_error *err)
{
	sbx_run_opts ro = SBX_RUN_OPTS_INIT;
	const char *src = getenv("SBX_SOURCE_ROOT");
	char tasks[512];

	snprintf(tasks, sizeof(tasks), "%s/tasks", src && *src ? src : ".");
	ro.task = "banking_reserve";
	ro.tasks_dir = tasks;
	ro.image = "sim-image";
	ro.runs_dir = runs_dir;
	ro.run_id = run_id;
	ro.limits.timeout_s = 60;
	return sbx_run_prepare(out, &ro, err);
}

/* SPDX-License-Identifier: MIT */
/*
 * /metrics in the Prometheus text format. The numbers are kept by the
 * service under its lock; this only writes them out, from a snapshot.
 */
#include <stdlib.h>

#include "serve-internal.h"
#include "sbx/buf.h"

const double sbx_serve__latency_le[SERVE_LATENCY_BUCKETS] = {
	0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.4, 0.6, 1, 2.5, 10,
};

void sbx_serve__metrics_observe_claim(serve_metrics *m, double seconds, bool warm)
{
	size_t i = 0;

	while (i < SERVE_LATENCY_BUCKETS && seconds > sbx_serve__latency_le[i])
		i++;
	m->latency_counts[i]++;
	m->latency_sum_s += seconds;
	if (warm)
		m->claims_warm++;
	else
		m->claims_cold++;
}

/* Label values: image references have no quotes or backslashes, but be exact anyway. */
static void put_label(sbx_buf *b, const char *v)
{
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			sbx_buf_putc(b, '\\');
		if (*v == '\n') {
			sbx_buf_puts(b, "\\n");
			continue;
		}
		sbx_buf_putc(b, *v);
	}
}

static void family(sbx_buf *b, const char *name, const char *type, const char *help)
{
	sbx_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A plain counter: its HELP and TYPE lines and its one sample. */
static void counter(sbx_buf *b, const char *name, const char *help, uint64_t v)
{
	family(b, name, "counter", help);
	sbx_buf_printf(b, "%s %llu\n", name, (unsigned long long)v);
}

/* One sample of a gauge with one label: name{key="value"} v. */
static void labeled(sbx_buf *b, const char *name, const char *key, const char *value, unsigned v)
{
	sbx_buf_printf(b, "%s{%s=\"", name, key);
	put_label(b, value);
	sbx_buf_printf(b, "\"} %u\n", v);
}

static void engine_family(sbx_buf *b, const char *name, const char *help,
			  const serve_engine_gauge *engines, size_t n, int which)
{
	family(b, name, "gauge", help);
	for (size_t i = 0; i < n; i++) {
		unsigned v = which == 0	  ? engines[i].live
			     : which == 1 ? engines[i].warm
					  : (unsigned)engines[i].drained;

		labeled(b, name, "engine", engines[i].url ? engines[i].url : "default", v);
	}
}

/* The sandboxes without a task (/v1/sandboxes). */
static void sandbox_metrics(sbx_buf *b, const serve_metrics *m)
{
	static const char *const ends[] = {"deleted", "expired", "shutdown"};

	family(b, "sandboxctl_serve_sandboxes", "gauge",
	       "sandboxes without a task, being created or live");
	sbx_buf_printf(b, "sandboxctl_serve_sandboxes %u\n", m->sandboxes);
	family(b, "sandboxctl_serve_sandboxes_created_total", "counter",
	       "sandboxes without a task created, by where they came from");
	for (int k = 0; k < 2; k++)
		sbx_buf_printf(b, "sandboxctl_serve_sandboxes_created_total{kind=\"%s\"} %llu\n",
			       k ? "warm" : "cold", (unsigned long long)m->sandboxes_created[k]);
	family(b, "sandboxctl_serve_sandboxes_removed_total", "counter",
	       "sandboxes without a task removed, by why");
	for (int k = 0; k < 3; k++)
		sbx_buf_printf(b, "sandboxctl_serve_sandboxes_removed_total{reason=\"%s\"} %llu\n",
			       ends[k], (unsigned long long)m->sandboxes_removed[k]);
	counter(b, "sandboxctl_serve_sandboxes_refused_total",
		"sandbox creates refused at --max-sandboxes", m->sandboxes_refused);
	counter(b, "sandboxctl_serve_sandbox_execs_total", "sandbox execs answered",
		m->sandbox_execs);
	counter(b, "sandboxctl_serve_sandbox_exec_timeouts_total",
		"sandbox execs killed at their timeout", m->sandbox_exec_timeouts);
	family(b, "sandboxctl_serve_sandbox_files_total", "counter",
	       "sandbox file reads and writes answered");
	sbx_buf_printf(b, "sandboxctl_serve_sandbox_files_total{op=\"read\"} %llu\n",
		       (unsigned long long)m->sandbox_reads);
	sbx_buf_printf(b, "sandboxctl_serve_sandbox_files_total{op=\"write\"} %llu\n",
		       (unsigned long long)m->sandbox_writes);
}

char *sbx_serve__metrics_text(const serve_metrics *m, const serve_pool_gauge *pools, size_t n_pools,
			      const serve_engine_gauge *engines, size_t n_engines)
{
	static const char *const gauges[][2] = {
		{"sandboxctl_serve_pool_size", "warm sandboxes: started and ready"},
		{"sandboxctl_serve_pool_target", "warm sandboxes: the pool's target"},
		{"sandboxctl_serve_pool_filling", "warm sandboxes: being started now"},
	};
	sbx_buf b;
	uint64_t cum = 0;

	sbx_buf_init(&b, 1 << 20);
	for (size_t g = 0; g < 3; g++) {
		family(&b, gauges[g][0], "gauge", gauges[g][1]);
		for (size_t i = 0; i < n_pools; i++) {
			unsigned v = g == 0   ? pools[i].size
				     : g == 1 ? pools[i].target
					      : pools[i].filling;

			labeled(&b, gauges[g][0], "image", pools[i].image, v);
		}
	}
	engine_family(&b, "sandboxctl_serve_engine_episodes", "episodes running on the engine",
		      engines, n_engines, 0);
	engine_family(&b, "sandboxctl_serve_engine_warm", "warm sandboxes ready on the engine",
		      engines, n_engines, 1);
	engine_family(&b, "sandboxctl_serve_engine_drained",
		      "1 while the engine is drained after failing in a row", engines, n_engines,
		      2);
	family(&b, "sandboxctl_serve_claims_total", "counter",
	       "episodes started, by where their sandbox came from");
	sbx_buf_printf(&b, "sandboxctl_serve_claims_total{kind=\"warm\"} %llu\n",
		       (unsigned long long)m->claims_warm);
	sbx_buf_printf(&b, "sandboxctl_serve_claims_total{kind=\"cold\"} %llu\n",
		       (unsigned long long)m->claims_cold);
	counter(&b, "sandboxctl_serve_cold_starts_total",
		"claims that found no fitting warm sandbox and started one", m->cold_starts);
	counter(&b, "sandboxctl_serve_claim_failures_total",
		"claims that failed (bad task, engine error)", m->claim_failures);
	family(&b, "sandboxctl_serve_claim_seconds", "histogram",
	       "POST /v1/episodes until the server was ready, successful claims");
	for (size_t i = 0; i < SERVE_LATENCY_BUCKETS; i++) {
		cum += m->latency_counts[i];
		sbx_buf_printf(&b, "sandboxctl_serve_claim_seconds_bucket{le=\"%g\"} %llu\n",
			       sbx_serve__latency_le[i], (unsigned long long)cum);
	}
	cum += m->latency_counts[SERVE_LATENCY_BUCKETS];
	sbx_buf_printf(&b, "sandboxctl_serve_claim_seconds_bucket{le=\"+Inf\"} %llu\n",
		       (unsigned long long)cum);
	sbx_buf_printf(&b, "sandboxctl_serve_claim_seconds_sum %.6f\n", m->latency_sum_s);
	sbx_buf_printf(&b, "sandboxctl_serve_claim_seconds_count %llu\n", (unsigned long long)cum);
	family(&b, "sandboxctl_serve_episodes", "gauge", "episodes claiming or running now");
	sbx_buf_printf(&b, "sandboxctl_serve_episodes %u\n", m->live);
	family(&b, "sandboxctl_serve_episodes_finished_total", "counter",
	       "finished episodes, by result status");
	for (int s = 0; s <= SBX_RUN_SANDBOX_FAILED; s++)
		sbx_buf_printf(&b, "sandboxctl_serve_episodes_finished_total{status=\"%s\"} %llu\n",
			       sbx_run_status_name((sbx_run_status)s),
			       (unsigned long long)m->finished[s]);
	counter(&b, "sandboxctl_serve_engine_errors_total",
		"warm starts and episode launches the engine failed", m->engine_errors);
	counter(&b, "sandboxctl_serve_warm_started_total", "warm sandboxes started",
		m->warm_started);
	counter(&b, "sandboxctl_serve_warm_retired_total",
		"warm sandboxes removed unclaimed (idle TTL)", m->warm_retired);
	counter(&b, "sandboxctl_serve_resets_total",
		"--reuse: sandboxes reset in place, checked clean, back in the pool", m->resets);
	counter(&b, "sandboxctl_serve_reset_retired_total",
		"--reuse: sandboxes removed because their reset failed or found residue",
		m->reset_retired);
	counter(&b, "sandboxctl_serve_unauthorized_total",
		"requests refused for a missing or wrong token", m->unauthorized);
	sandbox_metrics(&b, m);
	counter(&b, "sandboxctl_serve_connections_evicted_total",
		"connections without a request closed when the slots ran out", m->conn_evicted);
	counter(&b, "sandboxctl_serve_connections_timed_out_total",
		"connections closed for no request head within 10 s", m->conn_timed_out);
	return sbx_buf_steal(&b, NULL);
}

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`sandboxctl run --agent llm` against a strict fake model endpoint on
127.0.0.1 (fake_provider.py), through the real engine and sandbox.

Usage: test_llm.py CASE   (see CASES at the bottom)
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import test_integration as it  # noqa: E402  (Env, images, cleanup checks)

KEY = "sk-test-secret-0123456789abcdef"
HERE = os.path.dirname(os.path.abspath(__file__))


class Provider:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="sbx-fake-llm-")
        self.state = os.path.join(self.dir, "state.json")
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_provider.py"),
                                      self.state, KEY])
        for _ in range(200):
            if os.path.exists(self.state):
                break
            time.sleep(0.02)
        self.url = "http://127.0.0.1:%d/v1" % self.read()["port"]

    def read(self):
        with open(self.state) as f:
            return json.load(f)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def episode(env, prov, model, *extra, api="openai", task="sales_revenue", url=None, wrap=()):
    os.environ["OPENAI_API_KEY"] = KEY
    os.environ["ANTHROPIC_API_KEY"] = KEY
    t0 = time.time()
    rc, res, run_dir, err = env.run(task, "llm-" + model, "--agent", "llm", "--model", model,
                                    "--api", api, "--base-url", url or prov.url, *extra, wrap=wrap)
    took = time.time() - t0
    summary_path = os.path.join(run_dir, "agent-llm.json")
    summary = json.load(open(summary_path)) if os.path.exists(summary_path) else {}
    log = it.read(os.path.join(run_dir, "model.jsonl")) if os.path.exists(
        os.path.join(run_dir, "model.jsonl")) else ""
    for where, text in (("model.jsonl", log), ("result.json", json.dumps(res)),
                        ("stderr", err), ("agent.log", it.read(os.path.join(run_dir, "agent.log")))):
        if KEY in text:
            it.fail("%s: the API key is in %s" % (model, where))
    v = prov.read()["violations"]
    if v:
        it.fail("%s: the fake provider refused requests: %s" % (model, v))
    return rc, res, summary, log, err, took


def expect_pass(model, api="openai", *extra):
    def case(env, prov):
        rc, res, s, log, err, _ = episode(env, prov, model, *extra, api=api)
        if res["status"] != "pass":
            it.fail("%s/%s: status %s, want pass\n%s" % (api, model, res["status"], err))
        if s.get("stop_reason") != "complete_task" or s.get("api") != api or s.get("model") != model:
            it.fail("%s: summary %s" % (model, s))
        calls = 5 if model == "parallel" else 4
        if s["turns"] != 4 or s["tool_calls"] != calls or s["tool_errors"] != 0:
            it.fail("%s: want 4 turns, %d calls, 0 errors: %s" % (model, calls, s))
        if s["usage"]["input_tokens"] != 100 + 101 + 102 + 103 or s["usage"]["cached_tokens"] != 200:
            it.fail("%s: usage not summed: %s" % (model, s["usage"]))
        a = res.get("agent", {})
        if a.get("turns") != 4 or a.get("model") != model or a.get("usage", {}).get("output_tokens") != 40:
            it.fail("%s: result.json's agent lacks the model summary: %s" % (model, a))
        lines = [json.loads(l) for l in log.splitlines()]
        if sum("request" in l for l in lines) != 4 or sum("reply" in l for l in lines) != 4:
            it.fail("%s: model.jsonl should hold 4 requests and 4 replies" % model)
        check_trajectory(os.path.join(env.runs, res["run_id"]), res, model, api, calls)
        return s
    return case


def check_trajectory(run_dir, res, model, api, calls):
    """trajectory.json: the prompt, then one agent step per model turn with its tool calls
    (the provider's ids) answered by the MCP results, and the turn's tokens (ATIF's
    prompt_tokens include the cached ones; Anthropic's input_tokens do not)."""
    doc = it.atif_check.check(os.path.join(run_dir, "trajectory.json"), res["run_id"])
    turns = [s for s in doc["steps"] if s["source"] == "agent"]
    if doc["agent"].get("model_name") != model or len(turns) != 4:
        it.fail("%s: trajectory agent %s, %d agent steps" % (model, doc["agent"], len(turns)))
    base = 100 if api == "openai" else 150
    for i, s in enumerate(turns):
        if s["metrics"] != {"prompt_tokens": base + i, "completion_tokens": 10, "cached_tokens": 50} \
                or s["message"] != "step %d" % i:
            it.fail("%s: turn %d: %s" % (model, i, s))
    ids = [tc["tool_call_id"] for s in turns for tc in s["tool_calls"]]
    prefix = "call_" if api == "openai" else "toolu_"
    if len(ids) != calls or not all(i.startswith(prefix) for i in ids):
        it.fail("%s: tool call ids %s" % (model, ids))
    unpaired = [c for c in it.atif_check.tool_calls(doc) if c[2].startswith("[sandboxctl:")]
    if unpaired:
        it.fail("%s: tool calls not paired with an MCP result: %s" % (model, unpaired))
    done = it.atif_check.tool_calls(doc)[-1]
    if done[0] != "complete_task" or '"completed"' not in done[2]:
        it.fail("%s: the last call is not complete_task with its result: %s" % (model, done))
    fm = doc["final_metrics"]
    if fm != {"total_prompt_tokens": 4 * base + 6, "total_completion_tokens": 40,
              "total_cached_tokens": 200, "total_steps": len(doc["steps"])}:
        it.fail("%s: final_metrics %s" % (model, fm))


def retry_waits(log):
    """Seconds from each failed attempt (an "error" line) to the start of the next one."""
    lines = [json.loads(l) for l in log.splitlines()]
    waits = []
    for a, b in zip(lines, lines[1:]):
        if "error" in a and ("reply" in b or "error" in b):
            waits.append(b["t"] - b.get("ms", 0) / 1000 - a["t"])
    return waits


def case_retry(model, min_wait=0.0):
    """A pass after one retry; with Retry-After, not before it said (the jittered backoff of a
    first retry is at most 0.5 s, so a Retry-After that was not understood fails min_wait)."""
    def case(env, prov):
        rc, res, s, log, err, took = episode(env, prov, model)
        if res["status"] != "pass" or s.get("retries", 0) != 1:
            it.fail("%s: want a pass after one retry: %s %s\n%s" % (model, res["status"], s, err))
        waits = retry_waits(log)
        if len(waits) != 1 or waits[0] < min_wait:
            it.fail("%s: want one retry after >= %.1f s, waited %s" % (model, min_wait, waits))
    return case


def expect_agent_error(model, res, rc, s, err, needle):
    """agent_error (exit 5), never infra_error, and the provider's error in one stderr line."""
    if res["status"] != "agent_error" or rc != 5:
        it.fail("%s: want agent_error (exit 5), got %s (exit %d)\n%s" % (model, res["status"], rc, err))
    if s.get("stop_reason") != "provider_error" or needle not in s.get("error", ""):
        it.fail("%s: want provider_error naming %r: %s" % (model, needle, s))
    lines = [l for l in err.splitlines() if l.startswith("sandboxctl: agent error:")]
    if len(lines) != 1 or needle not in lines[0]:
        it.fail("%s: stderr should name %r in its one agent error line:\n%s" % (model, needle, err))


def case_keeps_failing(env, prov):
    """Every request answered 500: retried with backoff, then agent_error before the deadline."""
    rc, res, s, log, err, took = episode(env, prov, "down500", "--timeout", "20")
    expect_agent_error("down500", res, rc, s, err, "HTTP 500: the fake is down")
    tries = prov.read()["by_model"]["down500"]["requests"]
    retries = s.get("retries", -1)
    # One retry more than the provider saw is a keep-alive connection the fake closed as a
    # request went out on it (a network error, retried as it should be); never fewer.
    if tries < 3 or retries not in (tries - 1, tries) or len(retry_waits(log)) != retries:
        it.fail("down500: want several attempts, each after a logged wait: %d requests, %s, "
                "%d waits logged" % (tries, s, len(retry_waits(log))))
    if res.get("ended_by") == "deadline" or took > 20 + 60:
        it.fail("down500: the agent should give up before the deadline: %s after %.1f s"
                % (res.get("ended_by"), took))


def case_retry_past_deadline(env, prov):
    """A Retry-After (an HTTP date) an hour ahead, past the run's deadline: no sleeping into
    the deadline, the agent gives up at once."""
    rc, res, s, log, err, took = episode(env, prov, "busy429")
    expect_agent_error("busy429", res, rc, s, err, "HTTP 429: come back in an hour")
    tries = prov.read()["by_model"]["busy429"]["requests"]
    if tries != 1 or s.get("retries") != 0 or took > 60:
        it.fail("busy429: want one attempt and no wait: %d requests, %s, %.1f s" % (tries, s, took))


def case_closed_port(env, prov):
    """Nothing listens at the base URL: 3 tries over about 1.5 s (waits of 0.5 and 1 s), then
    agent_error, not the retries of a busy provider until the deadline."""
    import socket
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    rc, res, s, log, err, took = episode(env, prov, "solve", "--timeout", "20",
                                          url="http://127.0.0.1:%d/v1" % port)
    expect_agent_error("closed port", res, rc, s, err, "127.0.0.1:%d" % port)
    if "connect" not in s["error"].lower() or s.get("retries") != 2 or "3 tries" not in s["error"]:
        it.fail("closed port: want 3 tries, named in the error: %s" % s)
    errors = [json.loads(l) for l in log.splitlines() if '"error"' in l]
    span = errors[-1]["t"] - errors[0]["t"] if errors else -1
    if len(errors) != 3 or not 1.4 <= span <= 5:
        it.fail("closed port: want 3 logged tries over about 1.5 s: %d over %.2f s" % (len(errors), span))
    if res.get("ended_by") == "deadline" or took > 20 + 60:
        it.fail("closed port: the agent should give up before the deadline: %s after %.1f s"
                % (res.get("ended_by"), took))


# The memory bound of the model agent, in MiB of peak RSS: sandboxctl's or the agent's, the
# larger (README "--agent llm": "Memory").
RSS_MAX_MIB = 128
# Under ASan (scripts/test.sh's sanitizer pass) freed memory sits in a quarantine, 256 MiB by
# default: a small one keeps RSS about our own memory.
RUSAGE_WRAP = ("import os, resource, subprocess, sys\n"
               "env = dict(os.environ, ASAN_OPTIONS=os.environ.get('ASAN_OPTIONS', '') +"
               " ':quarantine_size_mb=16')\n"
               "rc = subprocess.run(sys.argv[2:], env=env).returncode\n"
               "with open(sys.argv[1], 'w') as f:\n"
               "    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
               "sys.exit(rc)\n")


def measured_episode(env, prov, model, *extra, api="openai"):
    """episode, and the peak RSS (MiB) of the biggest process it waited for: sandboxctl and
    the agent (the fake provider is this script's child, not the wrapper's)."""
    out = os.path.join(env.dir, "maxrss-%s-%s" % (api, model))
    got = episode(env, prov, model, *extra, api=api,
                  wrap=(sys.executable, "-c", RUSAGE_WRAP, out))
    return got + (int(it.read(out)) / 1024.0,)


def rss_max():
    """RSS_MAX_MIB; a half more under ASan (scripts/test.sh's sanitizer pass), whose shadow
    memory and redzones the bound is not about."""
    with open(os.path.join(it.BUILD, "cmd", "agents", "sandbox-llm-agent"), "rb") as f:
        return RSS_MAX_MIB * (1.5 if b"__asan_init" in f.read() else 1)


def case_huge_replies(env, prov):
    """31 MiB replies (its length said, or chunked with no end in sight: a 31 MiB array in
    content) and a 3.6 MB reply of 1.2 million values: each refused at once as agent_error,
    naming its size and the limit, with the agent's memory bounded; so is a reply of 300 tool
    calls, before any runs."""
    for model, api, needle in (("huge31", "openai", "sent a reply of 3250"),
                               ("hugearray", "anthropic", "still coming after"),
                               ("manyvalues", "openai", "JSON values: over the 262144"),
                               ("controls", "openai", "control characters would print as")):
        rc, res, s, log, err, took, rss = measured_episode(env, prov, model, api=api)
        expect_agent_error(model, res, rc, s, err, needle)
        if model not in ("manyvalues",) and "over the 4 MiB a reply may have" not in s["error"]:
            it.fail("%s: the limit is not named: %s" % (model, s["error"]))
        if rss > rss_max() or len(log) > 256 << 10:
            it.fail("%s: peak RSS %.0f MiB (bound %d), model.jsonl %d bytes" % (model, rss, rss_max(), len(log)))
        if prov.read()["by_model"][model]["requests"] != 1:
            it.fail("%s: a refused reply is not asked for again" % model)
        print("%s/%s: peak RSS %.1f MiB, %.1f s" % (api, model, rss, took))
    # 300 tool calls in one reply: each would run, and each answer stay in the conversation.
    rc, res, s, _, err, _ = episode(env, prov, "manycalls")
    if res["status"] != "agent_error" or s.get("stop_reason") != "malformed_reply" or \
            "calls 300 tools: over the 256" not in s.get("error", "") or s.get("tool_calls") != 0:
        it.fail("manycalls: want agent_error before any call: %s %s\n%s" % (res["status"], s, err))


def case_big_turns(api):
    """8 turns of a 3 MiB reply and a 1.25 MB tool answer (34 MB said in all): the conversation
    sent back stays within its 8 MiB budget (oldest pieces elided), model.jsonl holds each
    message once (linear, not the whole conversation at every request), RSS bounded."""
    def case(env, prov):
        rc, res, s, log, err, took, rss = measured_episode(env, prov, "bigturns", api=api)
        st = prov.read()
        if s.get("stop_reason") != "complete_task" or s.get("turns") != 9 or res["status"] in (
                "agent_error", "infra_error"):
            it.fail("%s: want 9 turns ending in complete_task: %s %s\n%s" % (api, res["status"], s, err))
        said = sum(st["reply_bytes"])
        if st["max_request"] > 9 << 20:
            it.fail("%s: a request of %d bytes: over the 8 MiB conversation budget" % (api, st["max_request"]))
        if len(log) > 1.1 * said + 8 * (2 << 20):
            it.fail("%s: model.jsonl is %d bytes for %d bytes of replies: not linear" % (api, len(log), said))
        for k in range(8):
            if log.count("step %d xxxx" % k) != 1:
                it.fail("%s: turn %d's reply is in model.jsonl %d times, want once" % (api, k, log.count("step %d xxxx" % k)))
        if rss > rss_max():
            it.fail("%s: peak RSS %.0f MiB, bound %d" % (api, rss, rss_max()))
        print("%s: peak RSS %.1f MiB, model.jsonl %.1f MB for %.1f MB of replies, biggest request "
              "%.1f MB, %.1f s" % (api, rss, len(log) / 1e6, said / 1e6, st["max_request"] / 1e6, took))
    return case


def case_escapes(env, prov):
    """The model's text and the provider's error carry terminal escapes: stderr (the agent's
    lines, which sandboxctl echoes, and the agent error line) shows them escaped."""
    rc, res, s, log, err, took = episode(env, prov, "escapes")
    if res["status"] != "agent_error":
        it.fail("escapes: want agent_error after the 400: %s\n%s" % (res["status"], err))
    # agent.log holds the agent's stderr byte for byte: what sandboxctl echoes without --quiet.
    agent_log = it.read(os.path.join(env.runs, res["run_id"], "agent.log"))
    for where, text in (("stderr", err), ("agent.log", agent_log)):
        for raw in ("\x1b", "\x07", "\u009b", "\u202e"):
            if raw in text:
                it.fail("escapes: %r reached %s raw:\n%r" % (raw, where, text))
    for shown in ("\\x1b]0;title\\x07", "\\x1b[2J", "\\x1b[32mPASS", "\\u009b31m", "\\u202eSSAP"):
        if shown not in agent_log:
            it.fail("escapes: %r not shown escaped in the model's text:\n%s" % (shown, agent_log))
    if not any(l.startswith("sandboxctl: agent error:") and "\\u202eSSAP" in l for l in err.splitlines()):
        it.fail("escapes: the provider's error is not in the agent error line, escaped:\n%s" % err)


def case_endless(env, prov):
    """An endless event stream, an endless chunked body, one that trickles and a reply behind
    a flood of headers end alike:
    agent_error naming why, one request each, long before the deadline (not timeout)."""
    for model, needle, most in (("sse", "text/event-stream", 20), ("endless", "4 MiB", 20),
                                ("trickle", "had not ended 30 s after it began", 60),
                                ("headerflood", "KiB of response headers", 20)):
        rc, res, s, log, err, took = episode(env, prov, model, "--timeout", "240")
        expect_agent_error(model, res, rc, s, err, needle)
        if res.get("ended_by") == "deadline" or took > most:
            it.fail("%s: want an end within %d s, not the deadline: %s after %.1f s"
                    % (model, most, res.get("ended_by"), took))
        if prov.read()["by_model"][model]["requests"] != 1:
            it.fail("%s: a refused reply is not asked for again" % model)


def case_failure(model, stop):
    def case(env, prov):
        rc, res, s, _, err, _ = episode(env, prov, model)
        if res["status"] != "agent_error" or rc != 5:
            it.fail("%s: want agent_error (exit 5), got %s (exit %d)\n%s" % (model, res["status"], rc, err))
        if s.get("stop_reason") != stop:
            it.fail("%s: stop_reason %s, want %s" % (model, s.get("stop_reason"), stop))
        if model == "unauthorized" and "401" not in s.get("error", ""):
            it.fail("401 not named in the error: %s" % s)
    return case


def case_flags(api):
    """--max-output-tokens, --temperature, --model-seed and --system-prompt reach every request
    (the Messages API has no seed: it must not be sent there)."""
    def case(env, prov):
        system = os.path.join(env.dir, "system.txt")
        with open(system, "w") as f:
            f.write("You are the flag test's model. Call the tools.")
        episode(env, prov, "solve", "--max-output-tokens", "321", "--temperature", "0.25",
                "--model-seed", "42", "--system-prompt", system, api=api)
        want = {"max_tokens": 321, "temperature": 0.25, "seed": 42 if api == "openai" else None,
                "system": "You are the flag test's model. Call the tools."}
        got = prov.read()["params"].get(api + "/solve")
        if got != [want]:
            it.fail("%s: every request should carry %s, got %s" % (api, want, got))
    return case


def case_default_params(env, prov):
    """Without the flags: no max_tokens (OpenAI), 4096 (Anthropic's required one), no
    temperature or seed, the default system prompt — so case_flags cannot pass by accident."""
    for api in ("openai", "anthropic"):
        episode(env, prov, "never", "--max-turns", "1", api=api)
        got = prov.read()["params"].get(api + "/never")
        if not got or len(got) != 1:
            it.fail("%s: want one parameter set, got %s" % (api, got))
        p = got[0]
        if (p["max_tokens"] != (4096 if api == "anthropic" else None) or p["temperature"] is not None
                or p["seed"] is not None or "spreadsheet task" not in (p["system"] or "")):
            it.fail("%s: default parameters %s" % (api, p))


def case_max_total_tokens(env, prov):
    """The never model spends 110, 111 and 112 tokens (input 100 + turn, output 10) in turns
    1 to 3: --max-total-tokens 300 lets a third request go (231 spent) and no fourth."""
    rc, res, s, _, err, _ = episode(env, prov, "never", "--max-total-tokens", "300")
    reqs = prov.read()["by_model"]["never"]["requests"]
    if s.get("stop_reason") != "max_total_tokens" or s.get("turns") != 3 or reqs != 3:
        it.fail("never: want max_total_tokens after 3 turns: %s, %d requests" % (s, reqs))
    if res["status"] in ("agent_error", "infra_error", "pass"):
        it.fail("never: a model stopped by its token budget is graded, not %s" % res["status"])
    if res.get("agent", {}).get("stop_reason") != "max_total_tokens":
        it.fail("result.json's agent.stop_reason: %s" % res.get("agent"))


def case_max_turns(env, prov):
    rc, res, s, _, err, _ = episode(env, prov, "never", "--max-turns", "3")
    if s.get("stop_reason") != "max_turns" or s.get("turns") != 3:
        it.fail("never: want max_turns after 3: %s" % s)
    if res["status"] in ("agent_error", "infra_error", "pass"):
        it.fail("never: a model that stops at max turns is graded, not %s" % res["status"])


def case_screenshot(api, model="screenshot"):
    """A vision model sees the picture of take_screenshot, or of the computer tool's screenshot
    action (full image, a GUI task); the fake checks the image's shape and that it is a PNG."""
    def case(env, prov):
        import shutil
        if not it.image_exists(it.FULL_IMAGE):
            raise it.Skip("the full image is missing: run 'sandboxctl build' first")
        tdir = os.path.join(env.dir, "tasks")
        shutil.copytree(os.path.join(it.TASKS, "sales_revenue"), os.path.join(tdir, "sales_gui"))
        y = os.path.join(tdir, "sales_gui", "task.yaml")
        text = it.read(y).replace("id: sales_revenue", "id: sales_gui").replace("gui: false", "gui: true")
        # No built-in generator under the new id: the copy runs its committed files.
        text = "\n".join(l for l in text.splitlines() if not l.startswith("generator:")) + "\n"
        with open(y, "w") as f:
            f.write(text)
        rc, res, s, log, err, _ = episode(env, prov, model, "--tasks-dir", tdir,
                                          "--image", it.FULL_IMAGE, api=api,
                                          task="sales_gui")
        if not prov.read()["saw_image"] or s.get("stop_reason") != "complete_task":
            it.fail("%s: the screenshot did not reach the model: %s\n%s" % (api, s, err))
        if "<image " not in log or "base64," in log:
            it.fail("%s: model.jsonl must hold the image as size + hash, not its bytes" % api)
    return case


def case_usage(env, prov):
    p = subprocess.run([it.SANDBOXCTL, "run", "--task", "sales_revenue", "--model", "x"],
                       capture_output=True, text=True)
    if p.returncode != 2 or "--agent llm" not in p.stderr:
        it.fail("--model without --agent llm: %d %s" % (p.returncode, p.stderr))
    p = subprocess.run([os.path.join(it.BUILD, "cmd", "agents", "sandbox-llm-agent")],
                       capture_output=True, text=True)
    if p.returncode != 2 or "--model is required" not in p.stderr:
        it.fail("no --model: %d %s" % (p.returncode, p.stderr))


CASES = {
    "openai": expect_pass("solve"),
    "anthropic": expect_pass("solve", "anthropic"),
    "parallel": expect_pass("parallel"),
    "parallel-anthropic": expect_pass("parallel", "anthropic"),
    "retry-429": case_retry("flaky429", 0.9),
    "retry-429-date": case_retry("flaky429date", 1.8),
    "retry-500": case_retry("flaky500"),
    "unauthorized": case_failure("unauthorized", "provider_error"),
    "malformed": case_failure("malformed", "malformed_reply"),
    "keeps-failing": case_keeps_failing,
    "closed-port": case_closed_port,
    "huge-replies": case_huge_replies,
    "big-turns": case_big_turns("openai"),
    "big-turns-anthropic": case_big_turns("anthropic"),
    "escapes": case_escapes,
    "endless": case_endless,
    "retry-past-deadline": case_retry_past_deadline,
    "flags": case_flags("openai"),
    "flags-anthropic": case_flags("anthropic"),
    "default-params": case_default_params,
    "max-total-tokens": case_max_total_tokens,
    "max-turns": case_max_turns,
    "usage": case_usage,
    "screenshot": case_screenshot("openai"),
    "screenshot-anthropic": case_screenshot("anthropic"),
    "computer-anthropic": case_screenshot("anthropic", "computer"),
}


def main():
    names = sys.argv[1:] or list(CASES)
    it.ensure_dev_image()
    for name in names:
        env, prov = it.Env(), Provider()
        try:
            CASES[name](env, prov)
            print("ok", name)
        except it.Skip as e:
            print("skip", name, e)
            sys.exit(it.SKIP)
        finally:
            prov.stop()
            env.cleanup()


if __name__ == "__main__":
    main()

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


def episode(env, prov, model, *extra, api="openai", task="sales_revenue"):
    os.environ["OPENAI_API_KEY"] = KEY
    os.environ["ANTHROPIC_API_KEY"] = KEY
    t0 = time.time()
    rc, res, run_dir, err = env.run(task, "llm-" + model, "--agent", "llm", "--model", model,
                                    "--api", api, "--base-url", prov.url, *extra)
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
        return s
    return case


def case_retry(model):
    def case(env, prov):
        rc, res, s, _, err, took = episode(env, prov, model)
        if res["status"] != "pass" or s.get("retries", 0) < 1:
            it.fail("%s: want a pass after a retry: %s %s\n%s" % (model, res["status"], s, err))
        if model == "flaky429" and took < 1.0:
            it.fail("429 with Retry-After: 1 was retried before 1 s (%.2f s)" % took)
    return case


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


def case_max_turns(env, prov):
    rc, res, s, _, err, _ = episode(env, prov, "never", "--max-turns", "3")
    if s.get("stop_reason") != "max_turns" or s.get("turns") != 3:
        it.fail("never: want max_turns after 3: %s" % s)
    if res["status"] in ("agent_error", "infra_error", "pass"):
        it.fail("never: a model that stops at max turns is graded, not %s" % res["status"])


def case_screenshot(api):
    """A vision model sees take_screenshot's picture (full image, a GUI task)."""
    def case(env, prov):
        import shutil
        if not it.image_exists("sandboxctl/sandbox:latest"):
            raise it.Skip("the full image is missing: run 'sandboxctl build' first")
        tdir = os.path.join(env.dir, "tasks")
        shutil.copytree(os.path.join(it.TASKS, "sales_revenue"), os.path.join(tdir, "sales_gui"))
        y = os.path.join(tdir, "sales_gui", "task.yaml")
        text = it.read(y).replace("id: sales_revenue", "id: sales_gui").replace("gui: false", "gui: true")
        # No built-in generator under the new id: the copy runs its committed files.
        text = "\n".join(l for l in text.splitlines() if not l.startswith("generator:")) + "\n"
        with open(y, "w") as f:
            f.write(text)
        rc, res, s, log, err, _ = episode(env, prov, "screenshot", "--tasks-dir", tdir,
                                          "--image", "sandboxctl/sandbox:latest", api=api,
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
    "retry-429": case_retry("flaky429"),
    "retry-500": case_retry("flaky500"),
    "unauthorized": case_failure("unauthorized", "provider_error"),
    "malformed": case_failure("malformed", "malformed_reply"),
    "max-turns": case_max_turns,
    "usage": case_usage,
    "screenshot": case_screenshot("openai"),
    "screenshot-anthropic": case_screenshot("anthropic"),
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

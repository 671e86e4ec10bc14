# SPDX-License-Identifier: MIT
"""A checker for trajectory.json against ATIF v1.4 (Harbor RFC 0001): the
fields each object must have, their types, step ids from 1 in order, every
tool call answered by an observation result, timestamps that parse as
ISO 8601. check() returns the parsed document or raises AssertionError with
the path of the first field that is wrong."""
import datetime
import json

SOURCES = {"system", "user", "agent"}
METRICS = {"prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd",
           "prompt_token_ids", "completion_token_ids", "logprobs", "extra"}
FINAL = {"total_prompt_tokens", "total_completion_tokens", "total_cached_tokens",
         "total_cost_usd", "total_steps", "extra"}
ROOT = {"schema_version", "session_id", "agent", "steps", "notes", "final_metrics", "extra"}
STEP = {"step_id", "timestamp", "source", "model_name", "reasoning_effort", "message",
        "reasoning_content", "tool_calls", "observation", "metrics", "extra"}
AGENT_ONLY = {"model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"}


def need(cond, where, what):
    if not cond:
        raise AssertionError("trajectory.json: %s: %s" % (where, what))


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def timestamp(v, where):
    need(isinstance(v, str), where, "timestamp not a string")
    try:
        t = datetime.datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        raise AssertionError("trajectory.json: %s: timestamp %r is not ISO 8601" % (where, v))
    need(t.tzinfo is not None, where, "timestamp without a time zone")
    return t


def check(path, session_id=None):
    with open(path, "rb") as f:
        raw = f.read()
    doc = json.loads(raw.decode("utf-8"))  # strict UTF-8
    need(isinstance(doc, dict), "root", "not an object")
    need(not set(doc) - ROOT, "root", "unknown keys %s" % sorted(set(doc) - ROOT))
    need(doc.get("schema_version") == "ATIF-v1.4", "schema_version", repr(doc.get("schema_version")))
    need(isinstance(doc.get("session_id"), str) and doc["session_id"], "session_id", "missing")
    if session_id is not None:
        need(doc["session_id"] == session_id, "session_id", "%r, want %r" % (doc["session_id"], session_id))
    a = doc.get("agent")
    need(isinstance(a, dict), "agent", "not an object")
    for k in ("name", "version"):
        need(isinstance(a.get(k), str) and a[k], "agent." + k, "missing")
    need("model_name" not in a or isinstance(a["model_name"], str), "agent.model_name", "not a string")
    need("extra" not in a or isinstance(a["extra"], dict), "agent.extra", "not an object")
    steps = doc.get("steps")
    need(isinstance(steps, list) and steps, "steps", "missing or empty")
    prev = None
    for i, s in enumerate(steps):
        w = "steps[%d]" % i
        need(isinstance(s, dict), w, "not an object")
        need(not set(s) - STEP, w, "unknown keys %s" % sorted(set(s) - STEP))
        need(s.get("step_id") == i + 1 and is_int(s["step_id"]), w + ".step_id",
             "%r, want %d" % (s.get("step_id"), i + 1))
        need(s.get("source") in SOURCES, w + ".source", repr(s.get("source")))
        need(isinstance(s.get("message"), str), w + ".message", "not a string")
        if "timestamp" in s:
            t = timestamp(s["timestamp"], w + ".timestamp")
            need(prev is None or t >= prev, w + ".timestamp", "goes back in time")
            prev = t
        if s["source"] != "agent":
            need(not set(s) & AGENT_ONLY, w, "agent-only fields on a %s step" % s["source"])
        ids = []
        for j, tc in enumerate(s.get("tool_calls", [])):
            wt = "%s.tool_calls[%d]" % (w, j)
            need(isinstance(tc, dict), wt, "not an object")
            need(isinstance(tc.get("tool_call_id"), str) and tc["tool_call_id"], wt + ".tool_call_id", "missing")
            need(isinstance(tc.get("function_name"), str) and tc["function_name"], wt + ".function_name", "missing")
            need(isinstance(tc.get("arguments"), dict), wt + ".arguments", "not an object")
            ids.append(tc["tool_call_id"])
        need(isinstance(s.get("tool_calls", []), list), w + ".tool_calls", "not a list")
        if "observation" in s:
            res = s["observation"].get("results")
            need(isinstance(res, list), w + ".observation.results", "not a list")
            for j, r in enumerate(res):
                wr = "%s.observation.results[%d]" % (w, j)
                need(isinstance(r, dict), wr, "not an object")
                need("source_call_id" not in r or r["source_call_id"] in ids, wr + ".source_call_id",
                     "%r names no tool call of this step" % r.get("source_call_id"))
                need(r.get("content") is None or isinstance(r["content"], str), wr + ".content", "not a string")
            answered = {r.get("source_call_id") for r in res}
        else:
            answered = set()
        need(set(ids) <= answered, w, "tool calls without a result: %s" % sorted(set(ids) - answered))
        if "metrics" in s:
            m = s["metrics"]
            need(isinstance(m, dict) and not set(m) - METRICS, w + ".metrics", "bad keys")
            for k in ("prompt_tokens", "completion_tokens", "cached_tokens"):
                need(k not in m or (is_int(m[k]) and m[k] >= 0), w + ".metrics." + k, repr(m.get(k)))
    fm = doc.get("final_metrics")
    if fm is not None:
        need(isinstance(fm, dict) and not set(fm) - FINAL, "final_metrics", "bad keys")
        need(fm.get("total_steps", len(steps)) == len(steps), "final_metrics.total_steps", "not len(steps)")
        for k in ("total_prompt_tokens", "total_completion_tokens", "total_cached_tokens"):
            if k in fm:
                want = sum(s.get("metrics", {}).get(k[6:], 0) for s in steps)
                need(is_int(fm[k]) and fm[k] == want, "final_metrics." + k, "%r, steps sum to %d" % (fm[k], want))
    return doc


def tool_calls(doc):
    """[(function_name, arguments, content)] in step order."""
    out = []
    for s in doc["steps"]:
        res = {r.get("source_call_id"): r.get("content") for r in s.get("observation", {}).get("results", [])}
        out += [(tc["function_name"], tc["arguments"], res.get(tc["tool_call_id"])) for tc in s.get("tool_calls", [])]
    return out

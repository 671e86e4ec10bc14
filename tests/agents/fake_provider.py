#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A strict fake model endpoint on 127.0.0.1 for the model agent's tests.

It speaks OpenAI Chat Completions (POST /v1/chat/completions) and Anthropic
Messages (POST /v1/messages), checks every request the way a real provider
would reject it (headers, the key, tool schemas, every tool call answered by
id and in order, images after a screenshot, no key in the body), and answers
from a script chosen by the model name:

  solve       get_sheet_info → read_range → write_range → complete_task (sales_revenue)
  parallel    the same, with list_files in the same reply as write_range
  flaky429    429 with Retry-After: 1 once, then solve
  flaky500    500 once, then solve
  unauthorized  401 whose message echoes the key (the agent must redact it)
  malformed   200 with a body that is not a reply
  never       list_files forever (for --max-turns)
  screenshot  take_screenshot, then expects its image in the next request, then complete_task
  computer    the same through the computer tool: computer {action: "screenshot"}
  down500     500 to every request (a provider that keeps failing)
  flaky429date  429 with Retry-After as an HTTP date 3 s ahead once, then solve
  busy429     429 with Retry-After an hour ahead (an HTTP date), to every request
  huge31      a 31 MiB reply (Content-Length said): its text in content
  hugearray   a 31 MiB array in content, chunked (no length said)
  manyvalues  a 3.6 MB reply of 1.2 million JSON values (small in bytes, big parsed)
  manycalls   a reply that calls list_files 300 times
  bigturns    8 turns of a 3 MiB text + read_range A1:Y10000 (a 1.25 MB answer), then
              complete_task: the conversation's budget and model.jsonl's growth
  escapes     text with terminal escapes (title, clear screen, a green PASS, CSI, a bidi
              override) and list_files, then a 400 whose message has the same
  sse         an endless event stream (text/event-stream, a ping every 0.2 s)
  endless     an endless chunked JSON body, as fast as it goes
  trickle     a chunked JSON body that begins, then gains a byte a second forever
  headerflood a reply behind 200 KiB of response headers
  controls    1 MiB of raw control bytes in the content (6 MiB once printed)

The sizes of every 200 reply body are in reply_bytes; the biggest request body
in max_request.

Every request's max_tokens, temperature, seed and system text are recorded
in the state file under params["API/MODEL"] (each distinct set once).

A request that breaks the rules gets 400 and is listed in the state file
(violations), which the test asserts is empty.
"""
import base64
import binascii
import email.utils
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = sys.argv[2] if len(sys.argv) > 2 else "sk-test-key"
STATE = sys.argv[1]
NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
state = {"requests": 0, "violations": [], "by_model": {}, "saw_image": False, "params": {},
         "reply_bytes": [], "max_request": 0}
ESCAPES = ("\x1b]0;title\x07 \x1b[2J \x1b[32mPASS\x1b[0m sales_revenue 100.00% \u009b31m "
           "\u202eSSAP")
MiB = 1 << 20
lock = threading.Lock()
OPENAI_KEYS = {"model", "messages", "tools", "max_tokens", "temperature", "seed"}
ANTHROPIC_KEYS = {"model", "messages", "tools", "max_tokens", "temperature", "system"}


def save():
    with open(STATE + ".tmp", "w") as f:
        json.dump(state, f)
    os.replace(STATE + ".tmp", STATE)


class Violation(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise Violation(msg)


# ---- checking requests --------------------------------------------------------

def check_schema(s, where):
    """A JSON Schema as OpenAI's and Anthropic's validators take it: every array says its items."""
    need(isinstance(s, dict), "%s: schema is not an object" % where)
    types = s.get("type")
    types = types if isinstance(types, list) else [types]
    if "array" in types:
        need(isinstance(s.get("items"), dict), "%s: array schema without items" % where)
    for k, sub in (s.get("properties") or {}).items():
        check_schema(sub, "%s.%s" % (where, k))
    for k in ("items", "additionalProperties", "not"):
        if isinstance(s.get(k), dict):
            check_schema(s[k], "%s.%s" % (where, k))
    for k in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for i, sub in enumerate(s.get(k) or []):
            check_schema(sub, "%s.%s[%d]" % (where, k, i))
    for k in ("$defs", "definitions"):
        for name, sub in (s.get(k) or {}).items():
            check_schema(sub, "%s.%s.%s" % (where, k, name))


def png_b64(data, where):
    """data is base64 of a PNG picture."""
    need(isinstance(data, str) and data, "%s: no image data" % where)
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise Violation("%s: image data is not base64" % where)
    need(raw.startswith(b"\x89PNG\r\n\x1a\n"), "%s: image data is not a PNG" % where)


def check_openai_parts(content, where):
    """A user message's content: a string, or text and image_url parts."""
    if isinstance(content, str):
        return
    need(isinstance(content, list) and content, "%s: content is neither text nor parts" % where)
    for j, part in enumerate(content):
        w = "%s.content[%d]" % (where, j)
        need(isinstance(part, dict), "%s: part is not an object" % w)
        if part.get("type") == "text":
            need(set(part) == {"type", "text"} and isinstance(part["text"], str),
                 "%s: bad text part" % w)
        elif part.get("type") == "image_url":
            need(set(part) == {"type", "image_url"}, "%s: image_url part has other keys" % w)
            iu = part["image_url"]
            need(isinstance(iu, dict) and set(iu) <= {"url", "detail"}, "%s: bad image_url" % w)
            m = re.match(r"^data:image/(png|jpeg|gif|webp);base64,(.*)$", iu.get("url", ""), re.S)
            need(m, "%s: image url is not a data: URL of an image" % w)
            if m.group(1) == "png":
                png_b64(m.group(2), w)
        else:
            raise Violation("%s: unknown part type %r" % (w, part.get("type")))


def check_anthropic_block(b, where, in_result=False):
    need(isinstance(b, dict), "%s: block is not an object" % where)
    t = b.get("type")
    if t == "text":
        need(isinstance(b.get("text"), str) and b["text"], "%s: empty text block" % where)
    elif t == "image":
        src = b.get("source")
        need(set(b) == {"type", "source"} and isinstance(src, dict), "%s: bad image block" % where)
        need(set(src) == {"type", "media_type", "data"} and src["type"] == "base64",
             "%s: image source is not {type: base64, media_type, data}" % where)
        need(src["media_type"] in ("image/png", "image/jpeg", "image/gif", "image/webp"),
             "%s: bad media_type %r" % (where, src["media_type"]))
        if src["media_type"] == "image/png":
            png_b64(src["data"], where)
    elif t == "tool_result" and not in_result:
        need(set(b) <= {"type", "tool_use_id", "content", "is_error"}, "%s: bad tool_result" % where)
        need(isinstance(b.get("tool_use_id"), str), "%s: tool_result without tool_use_id" % where)
        need(isinstance(b.get("is_error", False), bool), "%s: is_error not a boolean" % where)
        c = b.get("content", "")
        if isinstance(c, list):
            for j, sub in enumerate(c):
                check_anthropic_block(sub, "%s.content[%d]" % (where, j), in_result=True)
        else:
            need(isinstance(c, str), "%s: tool_result content is neither text nor blocks" % where)
    elif t == "tool_use" and not in_result:
        need(isinstance(b.get("id"), str) and isinstance(b.get("input"), dict),
             "%s: bad tool_use" % where)
    else:
        raise Violation("%s: block type %r not allowed here" % (where, t))


def check_openai(h, body):
    need(h.get("Authorization") == "Bearer " + KEY, "no or wrong Authorization header")
    need(set(body) <= OPENAI_KEYS, "unknown keys %s" % (set(body) - OPENAI_KEYS))
    need(isinstance(body.get("model"), str), "model missing")
    msgs = body.get("messages")
    need(isinstance(msgs, list) and msgs, "messages missing")
    need(msgs[0].get("role") == "system" and isinstance(msgs[0].get("content"), str),
         "first message is not the system prompt")
    need(msgs[1].get("role") == "user", "second message is not the user's")
    for t in body.get("tools", []):
        need(t.get("type") == "function", "tool without type function")
        fn = t.get("function", {})
        need(NAME_RE.match(fn.get("name", "")), "bad tool name %r" % fn.get("name"))
        need(isinstance(fn.get("description"), str), "tool without description")
        p = fn.get("parameters")
        need(isinstance(p, dict) and p.get("type") == "object", "parameters not an object schema")
        check_schema(p, fn["name"])
    i = 0
    while i < len(msgs):
        m = msgs[i]
        need(m.get("role") in ("system", "user", "assistant", "tool"), "bad role")
        if m.get("role") == "user":
            check_openai_parts(m.get("content"), "messages[%d]" % i)
            # Parts come only first (the task) or right after the tool answers whose images they carry.
            need(isinstance(m["content"], str) or i == 1 or msgs[i - 1].get("role") == "tool",
                 "messages[%d]: an image message that follows no tool answers" % i)
        if m.get("role") == "assistant" and m.get("tool_calls"):
            ids = [c["id"] for c in m["tool_calls"]]
            for c in m["tool_calls"]:
                json.loads(c["function"]["arguments"])
            answers = msgs[i + 1:i + 1 + len(ids)]
            need([a.get("role") for a in answers] == ["tool"] * len(ids),
                 "tool calls not each answered by a tool message")
            need([a.get("tool_call_id") for a in answers] == ids,
                 "tool answers out of order or with wrong ids")
            for a in answers:
                need(isinstance(a.get("content"), str), "tool content is not text")
            i += len(ids)
        elif m.get("role") == "tool":
            raise Violation("a tool message that answers no call")
        i += 1
    if "max_tokens" in body:
        need(isinstance(body["max_tokens"], int) and body["max_tokens"] > 0, "bad max_tokens")


def check_anthropic(h, body):
    need(h.get("x-api-key") == KEY, "no or wrong x-api-key")
    need(h.get("anthropic-version") == "2023-06-01", "no anthropic-version")
    need(set(body) <= ANTHROPIC_KEYS, "unknown keys %s" % (set(body) - ANTHROPIC_KEYS))
    need(isinstance(body.get("max_tokens"), int) and body["max_tokens"] > 0, "max_tokens required")
    need(isinstance(body.get("system"), str), "system is not text")
    msgs = body.get("messages")
    need(isinstance(msgs, list) and msgs and msgs[0].get("role") == "user",
         "messages must start with the user's")
    for a, b in zip(msgs, msgs[1:]):
        need(a.get("role") != b.get("role"), "roles must alternate")
    for t in body.get("tools", []):
        need(NAME_RE.match(t.get("name", "")), "bad tool name")
        need(isinstance(t.get("input_schema"), dict) and t["input_schema"].get("type") == "object",
             "input_schema not an object schema")
        check_schema(t["input_schema"], t["name"])
    for i, m in enumerate(msgs):
        c = m.get("content")
        if isinstance(c, list):
            need(c, "messages[%d]: empty content" % i)
            for j, b in enumerate(c):
                check_anthropic_block(b, "messages[%d].content[%d]" % (i, j))
                need(m["role"] == "user" or b.get("type") in ("text", "tool_use"),
                     "messages[%d]: %s in an assistant message" % (i, b.get("type")))
        else:
            need(isinstance(c, str) and c, "messages[%d]: content is neither text nor blocks" % i)
    for i, m in enumerate(msgs):
        if m["role"] != "assistant" or not isinstance(m.get("content"), list):
            continue
        ids = [b["id"] for b in m["content"] if b.get("type") == "tool_use"]
        if not ids:
            continue
        need(i + 1 < len(msgs), "tool_use not answered")
        nxt = msgs[i + 1]["content"]
        need(isinstance(nxt, list), "tool_use answered by text, not tool_result blocks")
        got = [b.get("tool_use_id") for b in nxt if isinstance(b, dict) and b.get("type") == "tool_result"]
        need(got == ids, "tool_result ids %s do not answer %s in order" % (got, ids))
        # The API takes tool_result blocks only before anything else in the message.
        need(all(b.get("type") == "tool_result" for b in nxt[:len(ids)]),
             "tool_result blocks are not first in the user message")


# ---- the scripts --------------------------------------------------------------

def tool_texts_openai(msgs):
    return [m["content"] for m in msgs if m.get("role") == "tool"]


def tool_texts_anthropic(msgs):
    out = []
    for m in msgs:
        if m["role"] == "user" and isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    out.append(" ".join(c.get("text", "") for c in b["content"] if c.get("type") == "text"))
    return out


def image_answers(msgs, anthropic, call_id):
    """Whether the answer to call_id carries a PNG in the protocol's own place: an image block
    inside the tool_result (Anthropic), or an image_url part in the user message right after
    the tool messages (OpenAI: tool messages are text only). check_* validated the shapes."""
    for i, m in enumerate(msgs):
        if anthropic and m["role"] == "user" and isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_result" and b.get("tool_use_id") == call_id:
                    return any(isinstance(c, dict) and c.get("type") == "image" and
                               c["source"]["media_type"] == "image/png" for c in b.get("content", []))
        if not anthropic and m.get("role") == "tool" and m.get("tool_call_id") == call_id:
            j = i
            while j < len(msgs) and msgs[j].get("role") == "tool":
                j += 1
            nxt = msgs[j] if j < len(msgs) else {}
            return nxt.get("role") == "user" and isinstance(nxt.get("content"), list) and any(
                p.get("type") == "image_url" and p["image_url"]["url"].startswith("data:image/png;")
                for p in nxt["content"])
    return False


def solve_step(step, texts, parallel):
    F = {"file_path": "sales_data.ods", "sheet_name": "Sheet1"}
    if step == 0:
        return [("get_sheet_info", dict(F))]
    if step == 1:
        rows = json.loads(texts[-1])["row_count"]
        return [("read_range", dict(F, start_cell="A2", end_cell="D%d" % rows))]
    if step == 2:
        values = json.loads(texts[-1])["values"]
        out = [["Revenue"]] + [[round(float(r[2]) * float(r[3]) + 1e-9, 2)] for r in values]
        calls = [("write_range", dict(F, start_cell="E1", values=out))]
        if parallel:
            calls.append(("list_files", {}))
        return calls
    return [("complete_task", {"summary": "done by the fake model"})]


SCREENSHOT_CALLS = {"screenshot": ("take_screenshot", {}),
                    "computer": ("computer", {"action": "screenshot"})}


def plan(model, step, msgs, texts, anthropic):
    """(status, calls or None, extra headers)"""
    if model == "unauthorized":
        return 401, {"error": {"message": "Incorrect API key provided: %s" % KEY,
                               "type": "invalid_request_error"}}, {}
    if model == "malformed":
        return 200, {"choices": "nope", "content": "nope"}, {}
    if model == "never":
        return 200, [("list_files", {})], {}
    if model == "down500":
        return 500, {"error": {"message": "the fake is down", "type": "server_error"}}, {}
    if model == "escapes" and step > 0:
        return 400, {"error": {"message": "bad request " + ESCAPES}}, {}
    if model == "bigturns":
        if step < 8:
            return 200, [("read_range", {"file_path": "sales_data.ods", "sheet_name": "Sheet1",
                                         "start_cell": "A1", "end_cell": "Y10000"})], {}
        return 200, [("complete_task", {"summary": "big turns done"})], {}
    if model == "escapes":
        return 200, [("list_files", {})], {}
    if model == "manycalls":
        return 200, [("list_files", {})] * 300, {}
    if model == "busy429":
        return 429, {"error": {"message": "come back in an hour"}}, {
            "Retry-After": email.utils.formatdate(time.time() + 3600, usegmt=True)}
    if model in SCREENSHOT_CALLS:
        if step == 0:
            return 200, [SCREENSHOT_CALLS[model]], {}
        call_id = "toolu_0_0" if anthropic else "call_0_0"
        if not image_answers(msgs, anthropic, call_id):
            raise Violation("no PNG in the answer to %s's screenshot" % SCREENSHOT_CALLS[model][0])
        state["saw_image"] = True
        return 200, [("complete_task", {"summary": "saw the screen"})], {}
    return 200, solve_step(step, texts, model == "parallel"), {}


def reply_openai(model, step, calls):
    tc = [{"id": "call_%d_%d" % (step, i), "type": "function",
           "function": {"name": n, "arguments": json.dumps(a)}} for i, (n, a) in enumerate(calls)]
    return {"id": "chatcmpl-%d" % step, "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "finish_reason": "tool_calls",
                         "message": {"role": "assistant", "content": "step %d" % step,
                                     "tool_calls": tc}}],
            "usage": {"prompt_tokens": 100 + step, "completion_tokens": 10,
                      "prompt_tokens_details": {"cached_tokens": 50}}}


def reply_anthropic(model, step, calls):
    content = [{"type": "text", "text": "step %d" % step}]
    content += [{"type": "tool_use", "id": "toolu_%d_%d" % (step, i), "name": n, "input": a}
                for i, (n, a) in enumerate(calls)]
    return {"id": "msg_%d" % step, "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": "tool_use",
            "usage": {"input_tokens": 100 + step, "output_tokens": 10,
                      "cache_read_input_tokens": 50}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, status, obj, headers=None):
        data = json.dumps(obj).encode()
        if status == 200:
            state["reply_bytes"].append(len(data))
        head = "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n" % (
            status, self.responses.get(status, ("",))[0], len(data))
        head += "".join("%s: %s\r\n" % kv for kv in (headers or {}).items())
        # One write: headers and body in separate segments meet delayed ACKs (40 ms).
        try:
            self.wfile.write(head.encode() + b"\r\n" + data)
            self.wfile.flush()
        except OSError:
            self.close_connection = True  # refused by the agent before its end

    def answer_bytes(self, status, data):
        """A body as it is, not JSON the fake made (raw control bytes in a string)."""
        head = "HTTP/1.1 %d OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (
            status, len(data))
        try:
            self.wfile.write(head.encode() + data)
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def stream(self, content_type, first, more, pause):
        """A chunked body: first, then more every pause seconds until the client goes."""
        self.wfile.write(("HTTP/1.1 200 OK\r\nContent-Type: %s\r\n"
                          "Transfer-Encoding: chunked\r\n\r\n" % content_type).encode())
        try:
            data = first
            while True:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
                data = more
                if pause:
                    time.sleep(pause)
        except OSError:
            pass  # the agent hung up, as it should
        self.close_connection = True

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        streamer = None
        with lock:
            state["requests"] += 1
            state["max_request"] = max(state["max_request"], n)
            try:
                streamer = self.handle_model(raw)
            except (Violation, ValueError, KeyError, TypeError, IndexError) as e:
                state["violations"].append("%s: %s" % (self.path, e))
                self.answer(400, {"error": {"message": "fake provider: %s" % e}})
            save()
        if streamer:  # endless: not under the lock
            streamer()

    def handle_model(self, raw):
        need(KEY.encode() not in raw, "the key is in the request body")
        need(self.headers.get("Content-Type", "").startswith("application/json"), "not JSON")
        body = json.loads(raw)
        anthropic = self.path == "/v1/messages"
        need(anthropic or self.path == "/v1/chat/completions", "unknown path %s" % self.path)
        (check_anthropic if anthropic else check_openai)(self.headers, body)
        model = body["model"]
        params = {"max_tokens": body.get("max_tokens"), "temperature": body.get("temperature"),
                  "seed": body.get("seed"),
                  "system": body.get("system") if anthropic else body["messages"][0]["content"]}
        seen_params = state["params"].setdefault(("anthropic/" if anthropic else "openai/") + model, [])
        if params not in seen_params:
            seen_params.append(params)
        seen = state["by_model"].setdefault(model, {"requests": 0, "failed_once": False})
        seen["requests"] += 1
        if model in ("flaky429", "flaky429date", "flaky500") and not seen["failed_once"]:
            seen["failed_once"] = True
            if model == "flaky429":
                return self.answer(429, {"error": {"message": "slow down"}}, {"Retry-After": "1"})
            if model == "flaky429date":
                when = email.utils.formatdate(time.time() + 3, usegmt=True)
                return self.answer(429, {"error": {"message": "slow down"}}, {"Retry-After": when})
            return self.answer(500, {"error": {"message": "internal"}})
        msgs = body["messages"]
        step = sum(1 for m in msgs if m.get("role") == "assistant")
        streams = {"sse": ("text/event-stream", b": ping\n\n", b"data: {}\n\n", 0.2),
                   "endless": ("application/json", b"[", b"0," * 32768, 0),
                   "trickle": ("application/json", b'{"choices": [', b" ", 1.0)}
        if model in streams:
            return lambda: self.stream(*streams[model])
        if model == "huge31":
            rep = {"choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": "x" * (31 * MiB)}}],
                   "content": [{"type": "text", "text": "x"}]}
            return self.answer(200, rep)
        if model == "controls":  # 1 MiB of raw control bytes in a string: 6 MiB when printed
            body = (b'{"choices": [{"index": 0, "finish_reason": "stop", "message": '
                    b'{"role": "assistant", "content": "' + b"\x01" * MiB + b'"}}]}')
            return self.answer_bytes(200, body)
        if model == "headerflood":  # 200 KiB of headers before a proper reply
            return self.answer(200, reply_openai(model, 0, []),
                               {"X-Pad-%d" % i: "x" * 100 for i in range(2000)})
        if model == "hugearray":
            return lambda: self.stream_array(31 * MiB)
        if model == "manyvalues":
            return self.answer(200, {"choices": [{"index": 0, "message": {
                "role": "assistant", "content": [0] * 1200000}}], "content": [0]})
        texts = tool_texts_anthropic(msgs) if anthropic else tool_texts_openai(msgs)
        status, calls, headers = plan(model, step, msgs, texts, anthropic)
        if not isinstance(calls, list):
            return self.answer(status, calls, headers)
        rep = reply_anthropic(model, step, calls) if anthropic else reply_openai(model, step, calls)
        if model == "bigturns" and step < 8:
            text = "step %d " % step + "x" * (3 * MiB)
            if anthropic:
                rep["content"][0]["text"] = text
            else:
                rep["choices"][0]["message"]["content"] = text
        if model == "escapes" and step == 0:
            if anthropic:
                rep["content"][0]["text"] = ESCAPES
            else:
                rep["choices"][0]["message"]["content"] = ESCAPES
        self.answer(200, rep, headers)

    def stream_array(self, size):
        """{"choices":[{"message":{"content":[0,0,...]}}]}, size bytes, chunked."""
        head = b'{"choices":[{"index":0,"message":{"role":"assistant","content":['
        chunk = b"0," * 32768
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n")
        try:
            for data in [head] + [chunk] * (size // len(chunk)) + [b"0]}}]}", b""]:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        except OSError:
            pass
        self.close_connection = True


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state["port"] = srv.server_address[1]
    save()
    srv.serve_forever()


if __name__ == "__main__":
    main()

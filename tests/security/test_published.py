#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""--network published: the port is a door like the relay's, and /control is not on it.

A live outside-agent run with --network published on the real engine (the slim
image: the firewall needs iptables). The published port is reachable by any
local user and, as 127.0.0.1:8080, by the tool code the agent runs inside the
sandbox. Every request without the run's token gets 401 (no token, a guessed
one, a wrong Bearer, user nobody); /control gets 403 even with the token,
however it is spelt; tool code posting {"deadline": 1} to
127.0.0.1:8080/control/deadline, with or without the token, is refused and the
run is not shortened; tool code cannot find the token in its environment or in
any /proc file it can read, nor reach the server's unix socket; no process
sandboxctl exec'd (its bridges, spied on in a wrapped image) has it in its
environment, though the container's Config.Env carries it for PID 1. Then the
legitimate agent (examples/rest_agent.sh, with the URL sandboxctl gave) passes.
Usage: test_published.py
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import test_integration as it  # noqa: E402
from test_relay_auth import as_nobody, http  # noqa: E402

JSON = {"Content-Type": "application/json"}

# Tool code: what it gets from 127.0.0.1:8080 for each (method, path, token?).
PROBE = r"""
import json, os, socket, sys, urllib.request, urllib.error
token = sys.argv[1]
def code(method, path, body=None, bearer=None):
    h = {"Content-Type": "application/json"}
    if bearer:
        h["Authorization"] = "Bearer " + bearer
    req = urllib.request.Request("http://127.0.0.1:8080" + path, data=body, method=method,
                                 headers=h)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
dl = b'{"deadline": 1}'
out = {
  "deadline": code("POST", "/control/deadline", dl),
  "deadline_token": code("POST", "/" + token + "/control/deadline", dl),
  "deadline_bearer": code("POST", "/control/deadline", dl, bearer=token),
  "deadline_pct": code("POST", "/" + token + "/%63ontrol/deadline", dl),
  "file": code("GET", "/control/file/cash_flows.ods"),
  "complete": code("POST", "/control/complete", b"{}"),
  "tools": code("POST", "/tools/call",
                b'{"tool_name":"list_files","arguments":{}}'),
  "health": code("GET", "/health"),
}
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect("/run/sandbox/mcp.sock")
    out["unix"] = "connected"
except OSError as e:
    out["unix"] = type(e).__name__
secret = token
seen = [k for k in os.environ if "TOKEN" in k]
# Every process but tool code's own (uid 1001: this probe holds the token as the agent gave it).
for pid in os.listdir("/proc"):
    for f in ("environ", "cmdline"):
        try:
            if pid.isdigit() and os.stat("/proc/" + pid).st_uid != os.getuid():
                with open("/proc/%s/%s" % (pid, f), "rb") as fh:
                    if secret.encode() in fh.read():
                        seen.append("/proc/%s/%s" % (pid, f))
        except OSError:
            pass
out["token_seen"] = seen
print(json.dumps(out))
"""


# sandboxctl's bridge, wrapped: each exec of it leaves its environment in /tmp
# (0600, uid 1000) for the check below, then runs the real one.
SPY_BRIDGE = b"""#!/bin/sh
umask 077
env > /tmp/.exec-env-$$
exec /usr/local/bin/sandbox-bridge.real "$@"
"""
SPY_IMAGE = "sandboxctl-test/published-spy:latest"
# As uid 1000, by an exec of the test's own (not through sandboxctl): which of those
# environments hold the token.
EXEC_PROBE = r"""
import glob, sys
files = glob.glob("/tmp/.exec-env-*")
seen = [f for f in files if sys.argv[1] in open(f).read()]
print(len(files), ",".join(seen) or "-")
"""


def execs_with_token(rid, token):
    """(how many bridges sandboxctl exec'd, [the env files of those holding the token])."""
    cid = it.containers(rid)[0]["Id"]
    st, ex = it.engine("POST", "/containers/%s/exec" % cid, json.dumps(
        {"User": "1000:1000", "Cmd": ["python3", "-c", EXEC_PROBE, token], "AttachStdout": True,
         "AttachStderr": True}), headers=JSON)
    if st != 201:
        it.fail("probe exec: %s %s" % (st, ex))
    st, raw = it.engine("POST", "/exec/%s/start" % ex["Id"],
                        json.dumps({"Detach": False, "Tty": False}), headers=JSON)
    out, i = b"", 0
    while i + 8 <= len(raw):  # the multiplexed stream: 8-byte frame headers
        n = int.from_bytes(raw[i + 4:i + 8], "big")
        if raw[i] == 1:
            out += raw[i + 8:i + 8 + n]
        i += 8 + n
    words = out.decode().split()
    if len(words) != 2:
        it.fail("probe exec: %r" % raw[:500])
    return int(words[0]), [] if words[1] == "-" else words[1].split(",")


def main():
    image = it.pick_image()
    if image == it.DEV_IMAGE:
        image = it.SLIM_IMAGE
        if not it.image_exists(image):
            raise it.Skip("--network published needs iptables: the real image "
                          "(sandboxctl build --slim)")
    sys.path.insert(0, os.path.join(it.SRC, "tests", "lib"))
    import wrapped_image
    wrapped_image.make(it.engine, image, SPY_IMAGE, "/usr/local/bin/sandbox-bridge", SPY_BRIDGE)
    env = it.Env()
    try:
        rid = env.new_id("pubauth")
        p = subprocess.Popen(env.args(rid, "banking_reserve", SPY_IMAGE, "--network", "published",
                                      "--json", "--timeout", "60"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        env.procs.append(p)
        line = p.stdout.readline()
        conn = json.loads(line) if line.startswith("{") else {}
        if "rest_url" not in conn:
            p.wait(timeout=60)
            it.fail("the run did not start: %s\n%s" % (line, p.stderr.read()))
        t0 = time.time()
        base, rest, token = conn["endpoint"], conn["rest_url"], conn["authorization"].split()[1]
        if not base.startswith("http://127.0.0.1:") or rest != base + "/" + token:
            it.fail("the agent's URL is not the published port with the token: %s" % conn)
        shell = json.dumps({"tool_name": "execute_shell",
                            "arguments": {"command": "echo pwned"}}).encode()
        # From the host, without the token: the attacks and the relay's list.
        attempts = [
            ("GET", base + "/control/file/cash_flows.ods", None, {}),
            ("POST", base + "/control/deadline", b'{"deadline": 1}', JSON),
            ("POST", base + "/control/complete", b"{}", JSON),
            ("POST", base + "/tools/call", shell, JSON),
            ("POST", base + "/task/complete", b"{}", JSON),
            ("GET", base + "/health", None, {}),
            ("POST", base + "/mcp", b"{}", JSON),
            ("GET", base + "/mcp/sse", None, {}),
            ("GET", base + "/" + "0" * 32 + "/task/status", None, {}),
            ("GET", base + "/" + token + "x/task/status", None, {}),
            ("GET", base + "/" + token[:-1] + "/task/status", None, {}),
            ("GET", base + "/task/status", None, {"Authorization": "Bearer " + "f" * 32}),
            ("GET", base + "/task/status", None, {"Authorization": "Basic " + token}),
            ("GET", base + "/task/status", None, {"X-Forwarded-Prefix": "/" + token}),
        ]
        for method, url, body, headers in attempts:
            st, _ = http(method, url, body, headers)
            if st != 401:
                it.fail("%s %s without the token: HTTP %d, want 401" % (method, url, st))
        for method, path, body in (("POST", "/control/deadline", '{"deadline": 1}'),
                                   ("GET", "/control/file/cash_flows.ods", None),
                                   ("POST", "/tools/call", shell.decode())):
            st = as_nobody(method, base + path, body)
            if st != 401:
                it.fail("user nobody: %s %s gave %d, want 401" % (method, path, st))
        # With the token: the agent's door, but never the host's API.
        control = [("GET", rest + "/control/file/cash_flows.ods", None, {}),
                   ("POST", rest + "/control/deadline", b'{"deadline": 1}', JSON),
                   ("POST", rest + "/control/complete", b"{}", JSON),
                   ("GET", rest + "/control/status?wait=0", None, {}),
                   ("GET", rest + "/%63ontrol/status", None, {}),
                   ("GET", base + "/control/status", None, {"Authorization": "Bearer " + token})]
        for method, url, body, headers in control:
            st, _ = http(method, url, body, headers)
            if st != 403:
                it.fail("the agent's %s %s: HTTP %d, want 403" %
                        (method, url.replace(token, "<token>"), st))
        # Tool code, as an agent would have it run: the port is 127.0.0.1:8080 inside.
        st, body = http("POST", rest + "/tools/call", json.dumps({
            "tool_name": "execute_python",
            "arguments": {"code": "import sys; sys.argv = ['x', %r]\n" % token +
                          PROBE}}).encode(), JSON)
        res = json.loads(body) if st == 200 else {}
        out = (res.get("result") or {}).get("stdout", "")
        try:
            got = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            it.fail("tool code probe: HTTP %d %s" % (st, body[:2000]))
        want = {"deadline": 401, "deadline_token": 403, "deadline_bearer": 403,
                "deadline_pct": 403, "file": 401, "complete": 401, "tools": 401, "health": 401,
                "unix": "PermissionError", "token_seen": []}
        if got != want:
            it.fail("tool code inside the sandbox got %s, want %s" % (got, want))
        # sandboxctl's own execs (its bridges): Config.Env carries the token for PID 1,
        # and an exec inherits Config.Env unless sandboxctl blanks it there.
        bridges, exec_seen = execs_with_token(rid, token)
        if exec_seen or not bridges:
            it.fail("bridges sandboxctl exec'd with the token in their environment: %s "
                    "(of %d)" % (exec_seen, bridges))
        # Not shortened: the task still has its minute, the run is still going.
        time.sleep(2)
        st, body = http("GET", rest + "/v1/task/status")
        status = json.loads(body) if st == 200 else {}
        if st != 200 or status.get("status") != "running" or \
                not status.get("remaining") or status["remaining"] < 45 or p.poll() is not None:
            it.fail("the attacks changed the run: HTTP %d %s (run %s)" % (st, body, p.poll()))
        # The legitimate agent, with the URL it was given, solves the task.
        a = subprocess.run(["sh", os.path.join(it.SRC, "examples/rest_agent.sh")],
                           env=dict(os.environ, SANDBOX_REST_URL=rest), capture_output=True,
                           text=True, timeout=120)
        if a.returncode != 0:
            it.fail("rest_agent.sh through the published port: %d\n%s" % (a.returncode,
                                                                           a.stderr))
        p.wait(timeout=60)
        result = json.loads(it.read(os.path.join(env.runs, rid, "result.json")))
        if result["status"] != "pass" or result["ended_by"] != "complete_task":
            it.fail("the run did not pass by its agent: %s %s" % (result["status"],
                                                                   result["ended_by"]))
        for name in ("result.json", "container.log", "transcript.jsonl"):
            path = os.path.join(env.runs, rid, name)
            if os.path.exists(path) and token in it.read(path):
                it.fail("the token leaked into %s" % name)
        it.check_gone(rid)
        print("ok: %d tokenless requests 401 (host, user nobody), %d /control with the token "
              "403, tool code refused on 127.0.0.1:8080 and the socket, no token in its "
              "reach; the agent passed in %.1f s of a 60 s run"
              % (len(attempts) + 3, len(control), time.time() - t0))
    finally:
        env.cleanup()
        wrapped_image.remove(it.engine, SPY_IMAGE)


if __name__ == "__main__":
    it.run_main(main)

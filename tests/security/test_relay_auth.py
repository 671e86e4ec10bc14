#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The relay is the run's alone: attacks from other local processes fail.

A live outside-agent run on the real engine; the attacker knows the port (any
local user can list listening sockets) but not the token. Each attempt must
get 401 and leave the run running; the run's owner, with the token from
connection.json (0600), still gets through; nothing the run writes leaks the
token. A second live run's agent, holding a valid token of its own, is one
more attacker: its token opens its own relay and not the first run's, whose
result is the owner's alone. Usage: test_relay_auth.py
"""
import json
import os
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import test_integration as it  # noqa: E402


def http(method, url, body=None, headers=None):
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def as_nobody(method, url, body=None):
    """curl as user nobody (uid 65534): another local user on the same host."""
    cmd = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
           "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", method, url]
    if body is not None:
        cmd += ["-H", "Content-Type: application/json", "-d", body]
    return int(subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout or 0)


def start(env, tag):
    """An outside-agent run: (its id, the process, connection.json's line)."""
    rid = env.new_id(tag)
    p = subprocess.Popen(env.args(rid, "sales_revenue", it.pick_image(), "--json", "--timeout", "120"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    env.procs.append(p)
    return rid, p, json.loads(p.stdout.readline())


def ended(env, rid, p):
    """The run's result.json once its process has exited."""
    p.wait(timeout=60)
    return json.loads(it.read(os.path.join(env.runs, rid, "result.json")))


def main():
    it.ensure_dev_image()
    env = it.Env()
    try:
        rid, p, conn = start(env, "auth")
        rid2, p2, conn2 = start(env, "other")
        base, rest, token = conn["endpoint"], conn["rest_url"], conn["authorization"].split()[1]
        other = conn2["authorization"].split()[1]
        if other == token or conn2["endpoint"] == base:
            it.fail("two runs share a token or a port: %s %s" % (conn, conn2))
        if len(token) < 32 or token not in rest:
            it.fail("the token is not a 128-bit secret in the URL: %s" % conn)
        mode = os.stat(os.path.join(env.runs, rid, "connection.json")).st_mode
        if stat.S_IMODE(mode) != 0o600:
            it.fail("connection.json is %o, not 0600" % stat.S_IMODE(mode))
        shell = json.dumps({"name": "execute_shell", "arguments": {"command": "echo pwned"}}).encode()
        attempts = [
            ("GET", base + "/task/status", None, {}),
            ("POST", base + "/tools/call", shell, {"Content-Type": "application/json"}),
            ("POST", base + "/task/complete", b"{}", {"Content-Type": "application/json"}),
            ("POST", base + "/mcp", b"{}", {"Content-Type": "application/json"}),
            ("GET", base + "/" + "0" * 32 + "/task/status", None, {}),  # a guessed token
            ("GET", base + "/" + token + "x/task/status", None, {}),  # the token plus a byte
            ("GET", base + "/" + token[:-1] + "/task/status", None, {}),  # one byte short
            ("GET", base + "/task/status", None, {"Authorization": "Bearer " + "f" * 32}),
            ("GET", base + "/task/status", None, {"Authorization": "Basic " + token}),
            # The other run's agent: a token that is valid, for another relay.
            ("GET", base + "/" + other + "/task/status", None, {}),
            ("POST", base + "/" + other + "/tools/call", shell, {"Content-Type": "application/json"}),
            ("POST", base + "/" + other + "/task/complete", b"{}",
             {"Content-Type": "application/json"}),
            ("POST", base + "/task/complete", b"{}", {"Content-Type": "application/json",
                                                      "Authorization": "Bearer " + other}),
            ("POST", base + "/" + other + "/mcp", b"{}", {"Content-Type": "application/json"}),
        ]
        for method, url, body, headers in attempts:
            st, _ = http(method, url, body, headers)
            if st != 401:
                it.fail("%s %s without the token: HTTP %d, want 401" % (method, url, st))
        for method, path, body in (("POST", "/task/complete", "{}"), ("GET", "/task/status", None),
                                   ("POST", "/tools/call", shell.decode())):
            st = as_nobody(method, base + path, body)
            if st != 401:
                it.fail("user nobody: %s %s gave %d, want 401" % (method, path, st))
        # The run is still the owner's: running, and reachable with the token both ways.
        # Our /v1/task/status always answers (the reference's is 404 until a task starts);
        # an image built before /v1 existed has only /task/status.
        st, body = http("GET", rest + "/v1/task/status")
        if st == 404:
            st, body = http("GET", rest + "/task/status")
        if st != 200 or json.loads(body).get("status") == "completed":
            it.fail("the attacks changed the run: %d %s" % (st, body))
        st, _ = http("GET", base + "/health", headers={"Authorization": "Bearer " + token})
        if st != 200:
            it.fail("Bearer with the right token: %d" % st)
        # The server's control API is the host's: the agent's own token does not open it.
        control = [("GET", rest + "/control/status?wait=0", None, {}),
                   ("GET", rest + "/control/file/sales_data.ods", None, {}),
                   ("POST", rest + "/control/complete", b"{}", {"Content-Type": "application/json"}),
                   # A later deadline would let get_task_status promise time the host will not give.
                   ("POST", rest + "/control/deadline", b'{"deadline": 9999999999}',
                    {"Content-Type": "application/json"}),
                   ("GET", rest + "/%63ontrol/screenshot", None, {}),
                   ("GET", rest + "/v1/../Control/status", None, {}),
                   ("GET", base + "/control/status", None, {"Authorization": "Bearer " + token})]
        for method, url, body, headers in control:
            st, _ = http(method, url, body, headers)
            if st != 403:
                it.fail("an agent's %s %s: HTTP %d, want 403" % (method, url.replace(token, "<token>"), st))
        if p.poll() is not None:
            it.fail("the run ended during the attacks")
        # The other token is good where it belongs: the second run ends by its own agent.
        st, _ = http("POST", conn2["rest_url"] + "/task/complete", b"{}",
                     {"Content-Type": "application/json"})
        if st != 200:
            it.fail("the second run's own complete_task: %d" % st)
        res2 = ended(env, rid2, p2)
        if res2["ended_by"] != "complete_task" or res2["relay"]["unauthorized"] != 0:
            it.fail("the second run, used as the attacker: %s %s" %
                    (res2["ended_by"], res2["relay"]))
        time.sleep(0.5)
        if p.poll() is not None:
            it.fail("the first run ended with the second")
        st, _ = http("POST", rest + "/task/complete", b"{}", {"Content-Type": "application/json"})
        if st != 200:
            it.fail("the owner's complete_task: %d" % st)
        res = ended(env, rid, p)
        if res["relay"].get("forbidden") != len(control):
            it.fail("want every /control attempt counted as forbidden: %s" % res["relay"])
        if res["ended_by"] != "complete_task" or res["relay"]["unauthorized"] < len(attempts) + 3:
            it.fail("want ended by complete_task with every refusal counted: %s %s" %
                    (res["ended_by"], res["relay"]))
        for name in ("result.json", "transcript.jsonl", "agent.log", "container.log"):
            path = os.path.join(env.runs, rid, name)
            if os.path.exists(path) and token in it.read(path):
                it.fail("the token leaked into %s" % name)
        transcript = it.read(os.path.join(env.runs, rid, "transcript.jsonl"))
        if "pwned" in transcript or res["agent"].get("exit_code") not in (None, 0):
            it.fail("an attacker's call reached the first run's sandbox: %s" % transcript[-2000:])
        it.check_gone(rid)
        it.check_gone(rid2)
        print("ok: %d attacks refused with 401 (5 with the other run's valid token), the "
              "owner's run went on and ended by its own complete_task" % (len(attempts) + 3))
    finally:
        env.cleanup()


if __name__ == "__main__":
    it.run_main(main)

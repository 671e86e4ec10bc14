#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""--listen unix: the relay on a 0600 socket in the run directory.

A live outside-agent run on the real engine with --listen unix. The socket
must be 0600 and named in connection.json; user nobody cannot connect at
all; the owner without the token gets 401, with it the run; the socket is
gone when the run ends. Usage: test_relay_unix.py
"""
import json
import os
import signal
import socket
import stat
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import test_integration as it  # noqa: E402
from unix_http import read_to_eof  # noqa: E402  (tests/lib, on the path test_integration set)


def over_unix(path, method, target, body=b""):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(20)
    s.connect(path)
    s.sendall(("%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n"
               "Connection: close\r\n\r\n" % (method, target, len(body))).encode() + body)
    data = read_to_eof(s)
    s.close()
    return int(data.split(b" ", 2)[1]), data.split(b"\r\n\r\n", 1)[-1]


def main():
    signal.alarm(200)
    it.ensure_dev_image()
    env = it.Env()
    rid = env.new_id("unix")
    p = subprocess.Popen(env.args(rid, "sales_revenue", it.pick_image(), "--json", "--timeout",
                                  "120", "--listen", "unix"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    env.procs.append(p)
    try:
        conn = json.loads(p.stdout.readline())
        path = conn.get("unix_socket", "")
        token = conn["authorization"].split()[1]
        if path != os.path.join(os.path.abspath(env.runs), rid, "relay.sock") or \
                conn["endpoint"] != "unix:" + path or not conn["rest_url"].startswith(
                    "http://localhost/" + token):
            it.fail("connection.json does not describe the socket: %s" % conn)
        st = os.lstat(path)
        if not stat.S_ISSOCK(st.st_mode) or stat.S_IMODE(st.st_mode) != 0o600:
            it.fail("relay.sock is %o, want a 0600 socket" % st.st_mode)
        # Another local user cannot even connect.
        r = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
                            "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                            "--unix-socket", path, "http://localhost/%s/v1/task/status" % token],
                           capture_output=True, text=True, timeout=20)
        if r.stdout.strip() != "000":
            it.fail("user nobody reached the unix relay: HTTP %s" % r.stdout)
        code, _ = over_unix(path, "GET", "/v1/task/status")
        if code != 401:
            it.fail("no token over the unix socket: HTTP %d, want 401" % code)
        # Our /v1/task/status always answers (the reference's is 404 until a task
        # starts); an image built before /v1 existed has only /task/status.
        code, body = over_unix(path, "GET", "/%s/v1/task/status" % token)
        if code == 404:
            code, body = over_unix(path, "GET", "/%s/task/status" % token)
        if code != 200 or json.loads(body).get("status") == "completed":
            it.fail("the owner over the unix socket: %d %s" % (code, body))
        code, _ = over_unix(path, "POST", "/%s/task/complete" % token, b"{}")
        if code != 200:
            it.fail("complete_task over the unix socket: HTTP %d" % code)
        p.wait(timeout=60)
        res = json.loads(it.read(os.path.join(env.runs, rid, "result.json")))
        if res["ended_by"] != "complete_task" or res["relay"]["unauthorized"] != 1:
            it.fail("want ended by complete_task, one refusal: %s %s" %
                    (res["ended_by"], res["relay"]))
        if os.path.lexists(path):
            it.fail("relay.sock is left behind")
        it.check_gone(rid)
        print("ok: 0600 socket, nobody cannot connect, token required, removed at the end")
    finally:
        env.cleanup()


if __name__ == "__main__":
    try:
        main()
    except it.Skip as e:
        print("skip:", e)
        sys.exit(it.SKIP)

# SPDX-License-Identifier: MIT
"""POST/GET /control/reset, the server's side of a reset in place: without
SANDBOX_INIT_FD (a sandbox not started for reuse) both answer 404; with it,
malformed orders get one 400/422 and nothing reaches PID 1, a good one gets
202 with Connection: close and exactly one struct sbx_reset_order (magic,
id, deadline) on the descriptor after the reply; tool code neither inherits
the descriptor nor sees the variable; GET serves RUN_DIR/reset.json as is."""

import json
import os
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import mcp_harness as h  # noqa: E402
from itest import stop_process  # noqa: E402
from unix_http import UnixHTTP  # noqa: E402

ORDER = struct.Struct("=IIQq")
MAGIC = 0x52584253


def call(sock, method, path, body=None):
    c = UnixHTTP(sock)
    c.request(method, path, body=body)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data, r


def start(ws, sock, env, pass_fds=()):
    ready = ws + ".ready"
    p = subprocess.Popen([h.SERVER, "--workspace", ws, "--unix", sock, "--ready-file", ready],
                         env=env, pass_fds=pass_fds, stdin=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while not os.path.exists(ready):
        assert p.poll() is None and time.time() < deadline, "server did not start"
        time.sleep(0.02)
    os.unlink(ready)
    return p


def main():
    with h.workspace() as ws:
        run_dir = ws + ".run"
        os.makedirs(run_dir)
        sock = ws + ".sock"
        env = dict(os.environ, SANDBOX_RUN_DIR=run_dir)
        env.pop("SANDBOX_INIT_FD", None)
        p = start(ws, sock, env)
        try:
            for m in ("POST", "GET"):
                st, data, _ = call(sock, m, "/control/reset", b"{}" if m == "POST" else None)
                assert st == 404 and (m == "GET" or b"not started for reuse" in data), (m, st, data)
        finally:
            stop_process(p, timeout=10)
        print("no reuse: 404: ok")

        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env["SANDBOX_INIT_FD"] = str(theirs.fileno())
        fd = theirs.fileno()
        p = start(ws, sock, env, pass_fds=(fd,))
        theirs.close()
        mine.settimeout(0.3)
        try:
            now = int(time.time())
            for body, want in ((b"nope", 400), (b"{}", 422), (b'{"reset":0,"deadline":%d}' % now, 422),
                               (b'{"reset":1,"deadline":-5}', 422),
                               (b'{"reset":"1","deadline":%d}' % now, 422),
                               (b'{"reset":1,"deadline":1e300}', 422)):
                st, data, _ = call(sock, "POST", "/control/reset", body)
                assert st == want, (body, st, data)
            try:
                got = mine.recv(64)
                raise AssertionError("a refused order reached PID 1: %r" % got)
            except socket.timeout:
                pass
            # Tool code: no descriptor, no variable.
            st, data, _ = call(sock, "POST", "/tools/call", json.dumps(
                {"tool_name": "execute_shell",
                 "arguments": {"command": "env | grep -c SANDBOX_INIT_FD; "
                               "test -e /proc/self/fd/%d && echo open || echo closed" % fd}}))
            out = json.loads(data)["result"]["stdout"].split()
            assert st == 200 and out == ["0", "closed"], (st, data)
            st, data, r = call(sock, "POST", "/control/reset",
                               b'{"reset":7,"deadline":%d}' % (now + 600))
            assert st == 202 and json.loads(data)["resetting"] == 7, (st, data)
            assert (r.getheader("Connection") or "").lower() == "close", r.getheaders()
            magic, flags, rid, deadline = ORDER.unpack(mine.recv(64))
            assert (magic, flags, rid, deadline) == (MAGIC, 0, 7, now + 600), (magic, rid, deadline)
            st, _, _ = call(sock, "GET", "/control/reset")
            assert st == 404, st
            verdict = b'{"reset":7,"clean":true}\n'
            with open(os.path.join(run_dir, "reset.json"), "wb") as f:
                f.write(verdict)
            st, data, _ = call(sock, "GET", "/control/reset")
            assert st == 200 and data == verdict, (st, data)
        finally:
            stop_process(p, timeout=10)
            mine.close()
        print("orders checked, one struct after the 202, tool code sees nothing: ok")


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: MIT
"""The host's control API over the unix socket the host reaches through the
relay: the /control/status long-poll (at once when changed, on the change,
at the wait, at the deadline, at shutdown), /control/file's raw bytes and its
confinement (.., absolute, encoded, symlink out, FIFO, directory, over the
cap), /control/screenshot with a display (PNG bytes, its headers) and without,
/control/complete, /control/deadline (a warm sandbox's episode deadline,
before and while the task runs; refusals), /control/sandbox/exec and /file
(serve's /v1/sandboxes; here sandbox-io is forked, not spawned)."""

import http.client
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import mcp_harness as h  # noqa: E402
from unix_http import UnixHTTP as UnixHTTPConnection  # noqa: E402


def get(base, method, path, body=None):
    """(status, raw body, headers, seconds) on a fresh connection."""
    c = UnixHTTPConnection(base[len("unix:"):])
    t = time.monotonic()
    c.request(method, path, body=body)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data, r, time.monotonic() - t


def status(base, query=""):
    s, data, _, took = get(base, "GET", "/control/status" + query)
    assert s == 200, (query, s, data)
    return json.loads(data), took


def check_status(base):
    b, took = status(base)
    assert b["status"] == "pending" and isinstance(b["version"], int) and took < 0.5, (b, took)
    v0 = b["version"]
    # Nothing changes: it answers at the wait, with the same version.
    b, took = status(base, "?since=%d&wait=300" % v0)
    assert b["version"] == v0 and 0.28 <= took < 2, (b, took)
    # The client is behind: at once.
    b, took = status(base, "?since=%d&wait=5000" % (v0 + 7))
    assert took < 0.5, took
    # A change wakes the waiter long before its wait.
    threading.Timer(0.2, lambda: get(base, "POST", "/task/start",
                                     json.dumps({"timeout_seconds": 1.0}))).start()
    b, took = status(base, "?since=%d&wait=10000" % v0)
    assert b["status"] == "running" and b["version"] > v0 and 0.15 <= took < 2, (b, took)
    # By state name; the deadline is a change too (the timer thread wakes it).
    b, took = status(base, "?since=running&wait=10000")
    assert b["status"] == "timed_out" and took < 2.5, (b, took)
    for bad in ("?wait=abc", "?wait=-1", "?since=bogus", "?since=running&wait=1e3"):
        s, data, _, _ = get(base, "GET", "/control/status" + bad)
        assert s == 422, (bad, s, data)
    s, _, _, _ = get(base, "POST", "/control/status")
    assert s == 405, s


def check_complete(base):
    b, _ = status(base)
    v = b["version"]
    threading.Timer(0.2, lambda: get(base, "POST", "/control/complete", b"{}")).start()
    b, took = status(base, "?since=%d&wait=10000" % v)
    assert b["status"] == "completed" and took < 2, (b, took)
    s, data, _, _ = get(base, "POST", "/control/complete", b"{}")
    assert s == 200 and json.loads(data)["status"] == "completed", (s, data)
    s, _, _, _ = get(base, "GET", "/control/complete")
    assert s == 405, s


def check_deadline(base):
    # Pending: the deadline given is the one the task starts counting to.
    s, data, _, _ = get(base, "POST", "/control/deadline",
                        json.dumps({"deadline": time.time() + 100}))
    assert s == 200 and json.loads(data)["status"] == "pending", (s, data)
    get(base, "POST", "/task/start", b"{}")
    b, _ = status(base)
    assert b["status"] == "running" and 98 < b["timeout_seconds"] <= 100, b
    # Running: a new one replaces it, counted from the start.
    s, data, _, _ = get(base, "POST", "/control/deadline",
                        json.dumps({"deadline": time.time() + 40}))
    b = json.loads(data)
    assert s == 200 and 38 < b["timeout_seconds"] <= 40.5 and b["remaining"] <= 40, (s, b)
    for bad in (b"", b"[]", b"{}", b'{"deadline":"soon"}', b'{"deadline":-5}',
                b'{"deadline":0}', b'{"deadline":1e300}', b"{not json"):
        s, data, _, _ = get(base, "POST", "/control/deadline", bad)
        assert s in (400, 422), (bad, s, data)
    b, _ = status(base)
    assert 38 < b["timeout_seconds"] <= 40.5, b  # refusals changed nothing
    s, _, _, _ = get(base, "GET", "/control/deadline")
    assert s == 405, s


def check_files(base, ws):
    blob = bytes(range(256)) * 64 + b"\0end"
    with open(os.path.join(ws, "out.bin"), "wb") as f:
        f.write(blob)
    os.makedirs(os.path.join(ws, "sub dir"))
    with open(os.path.join(ws, "sub dir", "r\u00e9sum\u00e9.txt"), "w") as f:
        f.write("caf\u00e9\n")
    s, data, r, _ = get(base, "GET", "/control/file/out.bin")
    assert s == 200 and data == blob and r.getheader("Content-Length") == str(len(blob)), s
    s, data, _, _ = get(base, "GET", "/control/file/sub%20dir/r%C3%A9sum%C3%A9.txt")
    assert s == 200 and data == "caf\u00e9\n".encode(), (s, data)
    s, data, _, _ = get(base, "GET", "/control/file/" + os.path.realpath(ws) + "/out.bin")
    assert s == 200 and data == blob, s  # absolute inside the workspace, as the tools take it
    s, data, _, _ = get(base, "GET", "/control/file/missing.ods")
    assert s == 404 and json.loads(data)["success"] is False, (s, data)

    os.symlink("/etc/passwd", os.path.join(ws, "link"))
    os.symlink("../" + os.path.basename(ws) + ".outside", os.path.join(ws, "uplink"))
    with open(ws + ".outside", "w") as f:
        f.write("secret")
    os.mkfifo(os.path.join(ws, "pipe"))
    with open(os.path.join(ws, "big.bin"), "wb") as f:
        f.truncate((16 << 20) + 1)  # one byte over the server's cap (sparse)
    with open(os.path.join(ws, "cap.bin"), "wb") as f:
        f.truncate(16 << 20)  # exactly the cap: served
    try:
        for path, want in (("../etc/passwd", 422), ("..%2F..%2Fetc%2Fpasswd", 422),
                           ("sub%20dir/../../x", 422), ("/etc/passwd", 422),
                           ("//etc/passwd", 422), ("%2Fetc%2Fpasswd", 422),
                           ("link", 422), ("uplink", 422), ("pipe", 422), ("sub%20dir", 422),
                           ("big.bin", 413)):
            s, data, _, took = get(base, "GET", "/control/file/" + path)
            assert s == want, (path, s, data)
            assert b"root:" not in data and b"secret" not in data, (path, data)
            assert took < 5, (path, took)  # the FIFO is not waited on
        s, data, _, _ = get(base, "GET", "/control/file/cap.bin")
        assert s == 200 and len(data) == 16 << 20, (s, len(data))
    finally:
        os.unlink(ws + ".outside")
    s, _, _, _ = get(base, "POST", "/control/file/out.bin", b"x")
    assert s == 405, s
    s, _, _, _ = get(base, "GET", "/control/nothing")
    assert s == 404, s


def check_screenshot(base):
    s, data, _, _ = get(base, "GET", "/control/screenshot")
    assert s == 404 and "No display" in json.loads(data)["error"], (s, data)


def check_screenshot_on_a_display(ws):
    """With a display (a private Xvfb, when installed): PNG bytes and the window header."""
    if not shutil.which("Xvfb"):
        print("screenshot on a display: skipped (no Xvfb)")
        return
    r, w = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0", "640x480x24",
                             "-nolisten", "tcp", "-noreset"], pass_fds=(w,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    try:
        with os.fdopen(r) as f:
            display = ":" + f.readline().strip()
        with h.http_server(ws, "--display", display, unix=ws + ".sock3") as (base, _):
            s, data, resp, _ = get(base, "GET", "/control/screenshot")
            assert s == 200 and data[:8] == b"\x89PNG\r\n\x1a\n", (s, data[:16])
            assert struct.unpack(">II", data[16:24]) == (640, 480), data[16:24]
            assert resp.getheader("Content-Type") == "image/png"
            assert resp.getheader("Content-Length") == str(len(data))
            assert resp.getheader("X-Reloaded") == "false" and not resp.getheader("X-Window-Shown")
            s, data, resp, _ = get(base, "GET", "/control/screenshot?window=no%20such%20window")
            assert s == 200 and resp.getheader("X-Window-Shown") == "false", (s, resp.getheaders())
        print("screenshot on a display: ok")
    finally:
        xvfb.terminate()
        xvfb.wait(timeout=10)


def check_shutdown(ws):
    """A long-poll in flight does not hold the server's exit for its wait."""
    sock = ws + ".sock2"
    with h.http_server(ws, unix=sock) as (base, proc):
        b, _ = status(base)
        def poll():
            try:
                get(base, "GET", "/control/status?since=%d&wait=30000" % b["version"])
            except (http.client.HTTPException, OSError):
                pass  # answered or cut by the shutdown: either is fine, a wait is not
        t = threading.Thread(target=poll)
        t.daemon = True
        t.start()
        time.sleep(0.3)
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
        assert time.monotonic() - start < 5, time.monotonic() - start


def tcp(port, method, path, body=None, headers=None):
    """(status, body) from the server's TCP listener."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read() if "event-stream" not in (r.getheader("Content-Type") or "") \
        else b"".join(r.fp.readline() for _ in range(3))
    c.close()
    return r.status, data


def check_published_port(ws):
    """--unix with --http and $SANDBOX_HTTP_TOKEN (sandboxctl run --network published):
    the port needs the token as the relay does and never serves /control; the socket
    does; code the tools run does not inherit the token."""
    token = "0123456789abcdef0123456789abcdef"
    sock = ws + ".sock4"
    env = dict(os.environ, SANDBOX_HTTP_TOKEN=token)
    with h.http_server(ws, "--http", "127.0.0.1:0", unix=sock, env=env) as (base, proc):
        assert base == "unix:" + sock, base
        line = b""
        while b"ready" not in line:
            line = proc.stderr.readline()
            assert line, "no ready line"
        port = int(line.split(b"http://127.0.0.1:")[1].split()[0])
        call = json.dumps({"tool_name": "execute_shell", "arguments": {"command": "env"}})
        bearer = {"Authorization": "Bearer " + token}
        for method, path, body, hd in (
                ("GET", "/health", None, {}), ("GET", "/control/status", None, {}),
                ("POST", "/control/deadline", '{"deadline": 1}', {}),
                ("POST", "/tools/call", call, {}), ("GET", "/mcp/sse", None, {}),
                ("GET", "/" + token[:-1] + "/health", None, {}),
                ("GET", "/" + token + "0/health", None, {}),
                ("GET", "/x/" + token + "/health", None, {}),
                ("GET", "/health", None, {"Authorization": "Bearer " + "0" * 32}),
                ("GET", "/health", None, {"Authorization": "Basic " + token}),
                ("GET", "/health", None, {"X-Forwarded-Prefix": "/" + token})):
            st, data = tcp(port, method, path, body, hd)
            assert st == 401 and b"token" in data, (method, path, hd, st, data)
        for method, path, hd in (("GET", "/" + token + "/control/status", {}),
                                 ("POST", "/" + token + "/control/deadline", {}),
                                 ("POST", "/" + token + "/control/sandbox/exec", {}),
                                 ("PUT", "/" + token + "/control/sandbox/file?path=x", {}),
                                 ("GET", "/control/sandbox/file?path=x", bearer),
                                 ("GET", "/" + token + "/%63ontrol/file/x", {}),
                                 ("GET", "/control/status", bearer)):
            st, data = tcp(port, method, path, '{"deadline": 1}', hd)
            assert st == 403 and b"/control" in data, (method, path, st, data)
        for path, hd in (("/" + token, {}), ("/" + token + "/", {}),
                         ("/" + token + "/v1/health", {}), ("/v1/health", bearer)):
            st, data = tcp(port, "GET", path, None, hd)
            assert st == 200 and b"status" in data, (path, st, data)
        st, data = tcp(port, "POST", "/" + token + "/tools/call", call,
                       {"Content-Type": "application/json"})
        out = json.loads(data)["result"]["stdout"]
        assert st == 200 and "SANDBOX_HTTP_TOKEN" not in out and token not in out, (st, data)
        # The legacy SSE endpoint points back through the token; a client's own
        # X-Forwarded-Prefix is not believed on this port.
        st, data = tcp(port, "GET", "/" + token + "/mcp/sse")
        assert st == 200 and b"data: /" + token.encode() + b"/mcp/messages?" in data, data
        st, data = tcp(port, "GET", "/mcp/sse", None, dict(bearer, **{"X-Forwarded-Prefix": "/x"}))
        assert st == 200 and b"data: /mcp/messages?" in data, data
        # Any local user reaches the port: 100 tokenless half-open connections (the
        # server's slots: 64) evict each other, not the agent.
        held = []
        for _ in range(100):
            c = socket.create_connection(("127.0.0.1", port), timeout=5)
            c.sendall(b"GET /health HTTP/1.1\r\n")
            held.append(c)
        for _ in range(5):
            t = time.monotonic()
            st, data = tcp(port, "GET", "/" + token + "/health")
            assert st == 200 and time.monotonic() - t < 5, (st, data, time.monotonic() - t)
        for c in held:
            c.close()
        s, data, _, _ = get(base, "GET", "/control/status")
        assert s == 200 and json.loads(data)["status"] == "running", (s, data)  # the call started it
    # Fails closed: a port anyone may reach is not served without a token.
    for extra, environ, want in (
            (["--http", "0.0.0.0:0", "--listen-any"], {}, b"needs $SANDBOX_HTTP_TOKEN"),
            (["--http", "127.0.0.1:0"], {"SANDBOX_HTTP_TOKEN": "short"}, b"16-64 URL-safe"),
            (["--http", "127.0.0.1:0"], {"SANDBOX_HTTP_TOKEN": "a" * 20 + "/"},
             b"16-64 URL-safe")):
        e = {k: v for k, v in os.environ.items() if k != "SANDBOX_HTTP_TOKEN"}
        e.update(environ)
        p = subprocess.run([h.SERVER, "--workspace", ws] + extra, env=e, capture_output=True,
                           timeout=10)
        assert p.returncode == 2 and want in p.stderr, (extra, p.returncode, p.stderr)


def sandbox_call(base, cmd, **kw):
    s, data, _, _ = get(base, "POST", "/control/sandbox/exec", json.dumps(dict(cmd=cmd, **kw)))
    assert s == 200, (cmd, s, data)
    return json.loads(data)


def check_sandbox_api(base, ws):
    """/control/sandbox/ (serve's /v1/sandboxes) run here by a forked sandbox-io: no spawner."""
    d = sandbox_call(base, ["sh", "-c", "pwd; cat; printf %s \"$FOO\"; exit 4"], stdin="in\n",
                     env={"FOO": "bar"}, cwd="sub", workdir=ws)
    assert d["returncode"] == 4 and d["stdout"] == ws + "/sub\nin\nbar", d
    d = sandbox_call(base, ["printf", "\\377\\000"], workdir=ws)
    assert d["stdout"] == "" and d["stdout_b64"] == "/wA=", d
    d = sandbox_call(base, ["no-such-program-xyz"], workdir=ws)
    assert d["returncode"] == 127 and "not found" in d["stderr"], d
    t = time.monotonic()
    d = sandbox_call(base, ["sh", "-c", "(sleep 120 &); sleep 122"], timeout=0.5, workdir=ws)
    assert d["timed_out"] and d["returncode"] == 124 and time.monotonic() - t < 5, d
    for bad in ({}, {"cmd": []}, {"cmd": [1]}, {"cmd": ["ls"], "env": {"A=B": "x"}},
                {"cmd": ["ls"], "timeout": 0}, {"cmd": ["ls"], "stdin_b64": "!!"}):
        s, data, _, _ = get(base, "POST", "/control/sandbox/exec", json.dumps(bad))
        assert s == 400 and json.loads(data)["error"] == "bad_request", (bad, s, data)
    q = "/control/sandbox/file?workdir=%s&path=" % ws
    s, data, _, _ = get(base, "PUT", q + "a/b/c.bin", b"\x00\xff" * 1000)
    assert s == 204, (s, data)
    s, data, _, _ = get(base, "GET", q + "a/b/c.bin")
    assert s == 200 and data == b"\x00\xff" * 1000, (s, len(data))
    for path, want, code in (("nope", 404, "file_not_found"), ("a/b", 409, "is_a_directory"),
                             ("a/b/c.bin/x", 404, "file_not_found")):
        s, data, _, _ = get(base, "GET", q + path)
        assert s == want and json.loads(data)["error"] == code, (path, s, data)
    s, data, _, _ = get(base, "GET", "/control/sandbox/file")
    assert s == 400, (s, data)
    s, data, _, _ = get(base, "DELETE", q + "x")
    assert s == 405, (s, data)


def main():
    with h.workspace() as ws:
        with h.http_server(ws, unix=ws + ".sock") as (base, _):
            os.mkdir(os.path.join(ws, "sub"))
            check_sandbox_api(base, ws)
            shutil.rmtree(os.path.join(ws, "sub"))
            shutil.rmtree(os.path.join(ws, "a"))
            print("sandbox exec and files: ok")
        check_published_port(ws)
        print("published port: token required, no /control, token not inherited: ok")
        sock = ws + ".sock"
        with h.http_server(ws, unix=sock) as (base, _):
            check_status(base)
            print("status long-poll: ok")
            get(base, "POST", "/task/start", json.dumps({"timeout_seconds": 60}))
            check_complete(base)
            print("complete: ok")
            check_files(base, ws)
            print("files and confinement: ok")
            check_screenshot(base)
            print("screenshot without a display: ok")
        with h.http_server(ws, unix=sock) as (base, _):
            check_deadline(base)
            print("deadline: ok")
        check_screenshot_on_a_display(ws)
        check_shutdown(ws)
        print("shutdown with a long-poll in flight: ok")


if __name__ == "__main__":
    main()

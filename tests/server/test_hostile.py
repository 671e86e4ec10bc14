# SPDX-License-Identifier: MIT
"""Hostile input against a running sandbox-mcp: malformed JSON, a 100 MB
body, 10,000-deep nesting, wrong id types, bad tool arguments, path escapes,
a symlink to /etc/shadow, a fork bomb and a 10 GB allocation through
execute_python, and two agents saving big workbooks at once (their parts are
deflated on threads of their own). Each must get a clear error or the right
file, and a ping must still be answered afterwards. The server runs as an unprivileged user when the test
is root, as it does in the sandbox, so RLIMIT_NPROC applies to the bomb."""

import http.client
import json
import os
import shutil
import socket
import sys
import threading
import time
import zipfile
from xml.sax.saxutils import escape

sys.path.insert(0, os.path.dirname(__file__))
import mcp_harness as h  # noqa: E402

NOBODY = 65534
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    else:
        print("ok:", what)


class Conn:
    def __init__(self, base):
        self.host, self.port = base[len("http://"):].rsplit(":", 1)
        self.c = http.client.HTTPConnection(self.host, int(self.port), timeout=120)
        self.sid = None

    def post(self, path, body, headers=None):
        hdrs = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.sid:
            hdrs["Mcp-Session-Id"] = self.sid
        hdrs.update(headers or {})
        try:
            self.c.request("POST", path, body=body, headers=hdrs)
            r = self.c.getresponse()
            data = r.read()
        except (ConnectionError, http.client.HTTPException):
            self.c.close()
            self.c = http.client.HTTPConnection(self.host, int(self.port), timeout=120)
            raise
        return r.status, data, r

    def rpc(self, method, params=None, id=1):
        msg = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            msg["params"] = params
        status, data, r = self.post("/mcp", json.dumps(msg))
        return status, json.loads(data) if data else None

    def init(self):
        status, data, r = self.post("/mcp", json.dumps({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "hostile", "version": "1"}}}))
        assert status == 200, data
        self.sid = r.getheader("Mcp-Session-Id")
        self.post("/mcp", json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def call(self, tool, args):
        status, r = self.rpc("tools/call", {"name": tool, "arguments": args})
        return r

    def alive(self, after):
        fresh = Conn("http://%s:%s" % (self.host, self.port))
        status, r = fresh.rpc("ping", id=99)
        check(status == 200 and r.get("result") == {}, f"still serving after {after}")


def tool_error(r):
    res = r.get("result", {})
    return res.get("isError") and res["content"][0]["text"]


def hostile(base, ws):
    c = Conn(base)
    c.init()

    s, d, _ = c.post("/mcp", b"{not json")
    check(s == 400 and json.loads(d)["error"]["code"] == -32700, "malformed JSON -> 400/-32700")
    c.alive("malformed JSON")

    s, d, _ = c.post("/tools/call", b"{not json")
    check(s == 400 and json.loads(d)["success"] is False, "REST malformed -> 400")

    # 100 MB declared body: refused before it is read.
    big = Conn(base)
    try:
        s, d, _ = big.post("/mcp", b"x" * (100 << 20))
        check(s == 413 and b"too large" in d, "100 MB body -> 413")
    except (ConnectionError, http.client.HTTPException, OSError) as e:
        # The server may close while the client is still sending; that is a refusal too.
        check(True, f"100 MB body refused ({type(e).__name__})")
    c.alive("a 100 MB body")

    deep = "[" * 10000 + "]" * 10000
    s, d, _ = c.post("/mcp", deep)
    check(s == 400 and "nesting" in json.loads(d)["error"]["message"], "10,000-deep nesting -> 400")
    c.alive("deep nesting")

    for bad in ({}, [1], True, 1.5e300, None):
        s, d, _ = c.post("/mcp", json.dumps({"jsonrpc": "2.0", "id": bad, "method": "ping"}))
        body = json.loads(d) if d else {}
        if isinstance(bad, float):
            check(s == 200 and body.get("id") == bad, "float id echoed")
        else:
            check(s == 200 and body.get("error", {}).get("code") == -32600, f"id {bad!r} -> -32600")
    c.alive("wrong id types")

    F = {"file_path": "cash_flows.ods", "sheet_name": "Sheet1"}
    e = tool_error(c.call("read_cell", {"file_path": "cash_flows.ods"}))
    check(e and "missing required argument 'cell_reference'" in e, f"missing argument: {e}")
    e = tool_error(c.call("read_cell", {**F, "cell_reference": "A1", "evil": 1}))
    check(e and "unexpected argument 'evil'" in e, f"extra argument: {e}")
    e = tool_error(c.call("read_cell", {**F, "cell_reference": ["A1"]}))
    check(e and "expected string" in e, f"wrong-typed argument: {e}")
    s, d, _ = c.post("/tools/call", json.dumps({"tool_name": "read_cell", "arguments": {**F, "cell_reference": 3}}))
    check(s == 422, f"REST wrong type -> 422 ({s})")
    s, d, _ = c.post("/tools/call", json.dumps({"tool_name": "fake_tool", "arguments": {}}))
    check(s == 404 and json.loads(d)["error"] == "Unknown tool: fake_tool", "REST unknown tool -> 404")
    c.alive("bad arguments")

    for path in ("../../etc/passwd", "/etc/passwd", "a/../../etc/passwd"):
        e = tool_error(c.call("read_cell", {"file_path": path, "cell_reference": "A1"}))
        check(e and "outside the workspace" in e, f"{path}: {e}")
    os.symlink("/etc/shadow", os.path.join(ws, "shadow.ods"))
    e = tool_error(c.call("read_cell", {"file_path": "shadow.ods", "cell_reference": "A1"}))
    check(e and "outside the workspace" in e, f"symlink to /etc/shadow: {e}")
    e = tool_error(c.call("write_cell", {"file_path": "shadow.ods", "cell_reference": "A1", "value": 1}))
    check(e and "outside the workspace" in e, f"write through symlink: {e}")
    r = c.rpc("resources/read", {"uri": "file:///etc/shadow"})[1]
    check(r.get("error", {}).get("code") == -32002, "resources/read /etc/shadow -> -32002")
    c.alive("path escapes")

    # A long call on one connection does not hold up another.
    slow = Conn(base)
    slow.init()
    t = threading.Thread(target=lambda: slow.call("execute_python", {"code": "import time; time.sleep(3)"}))
    t.start()
    time.sleep(0.5)
    t0 = time.time()
    c.alive("(during a running execute_python)")
    check(time.time() - t0 < 0.5, "ping answered while another connection runs code")
    t.join()

    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    r = c.call("execute_python", {"code": bomb, "timeout": 5})
    e = tool_error(r)
    check(e == "Code execution timed out after 5 seconds", f"fork bomb -> {e}")
    for _ in range(50):  # SIGKILL to a few hundred processes takes a moment; zombies do not count
        left = [p for p in os.listdir("/proc")
                if p.isdigit() and _uid(p) == NOBODY and _comm(p).startswith("python") and not _zombie(p)]
        if not left:
            break
        time.sleep(0.1)
    check(not left or os.geteuid() != 0, f"fork bomb fully killed ({len(left)} left)")
    c.alive("a fork bomb")

    r = c.call("execute_python", {"code": "x = bytearray(10 * 1024**3)\nprint(len(x))"})
    e = tool_error(r)
    check(e and "out of memory" in e and r["result"]["structuredContent"]["error_code"] == "E_MEMORY",
          f"10 GB allocation -> {e}")
    c.alive("a 10 GB allocation")

    s, d, _ = c.post("/mcp", b"{}", {"Host": "evil.example:80"})
    check(s == 403, "foreign Host -> 403")
    s, d, _ = c.post("/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
                     {"Origin": "http://evil.example"})
    check(s == 403, "foreign Origin -> 403")
    s, d, _ = c.post("/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
                     {"Origin": "http://localhost:3000"})
    check(s == 200, "loopback Origin accepted")
    s, d, _ = c.post("/mcp", json.dumps({"jsonrpc": "2.0", "method": "notifications/whatever"}))
    check(s == 202 and d == b"", "notification -> 202, empty body")
    s, d, _ = c.post("/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
                     {"Mcp-Session-Id": "0" * 32})
    check(s == 404, "unknown session -> 404")
    s, d, _ = c.post("/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
                     {"Content-Type": "text/plain"})
    check(s == 415, "wrong Content-Type -> 415")
    c.alive("header checks")


def big_saves(base, ws):
    """Two connections write 24,000 cells each into two workbooks at once: each
    save's content.xml (about 2 MB) goes through the zip writer's deflate
    thread. Both files must read back whole (zip CRCs, the cells' values)."""
    names = ["big_a.ods", "big_b.ods"]
    for n in names:
        shutil.copy(os.path.join(ws, "cash_flows.ods"), os.path.join(ws, n))
        if os.geteuid() == 0:
            os.chown(os.path.join(ws, n), NOBODY, NOBODY)
    results = {}

    def write(name):
        c = Conn(base)
        c.init()
        rows = [["%s-%d-%d-padding" % (name, r, col) for col in range(60)] for r in range(400)]
        results[name] = c.call("write_range", {"file_path": name, "sheet_name": "Sheet1",
                                               "start_cell": "A2", "values": rows})

    threads = [threading.Thread(target=write, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    c = Conn(base)
    c.init()
    for n in names:
        res = (results.get(n) or {}).get("result", {})
        check(not res.get("isError") and res.get("structuredContent", {}).get("cells_written")
              == 24000, f"{n}: 24,000 cells written and saved")
        # The file as another reader sees it (the server answers reads from its cache).
        with zipfile.ZipFile(os.path.join(ws, n)) as z:
            content = z.read("content.xml")
            check(z.testzip() is None and len(content) == z.getinfo("content.xml").file_size
                  and len(content) > (1 << 20) and content.count(b"-padding") == 24000
                  and b"%s-399-59-padding" % n.encode() in content,
                  f"{n}: zip CRCs and sizes hold, content.xml (over one 1 MiB chunk) has every cell")
        got = c.call("read_cell", {"file_path": n, "sheet_name": "Sheet1",
                                   "cell_reference": "BH401"})
        value = got.get("result", {}).get("structuredContent", {}).get("value")
        check(value == "%s-399-59-padding" % n, f"{n}: its last cell reads back ({value!r})")
    c.alive("two big saves at once")


def hostile_formulas():
    """Issue 24: formulas too long or too deep, without cached values, in a
    workbook tool code writes (no LibreOffice on PATH, so the native
    evaluator alone). recalculate and complete_task must answer, naming the
    limit, and the server keep serving; a long chain within the bounds still
    computes. On main the first 50,000-term chain crashed the server."""
    chains = ["+1", "*1", "&1", "^1"]
    cells = ["1" + op * 49999 for op in chains]
    cells += ["(" * 5000 + "1" + ")" * 5000, "-" * 8000 + "1", "1" + "%" * 100,
              "SUM(" * 65 + "1" + ")" * 65, "1" + "+1" * 4000]
    row = "".join('<table:table-cell table:formula="of:=%s"/>' % escape(f) for f in cells)
    with h.workspace() as ws:
        env = dict(os.environ, PATH="/nonexistent")
        with h.http_server(ws, "--task-timeout", "600", env=env) as (base, proc):
            c = Conn(base)
            c.init()
            s, d, _ = c.post("/task/start", json.dumps({"task_id": "t-formulas"}))
            check(s == 200, f"task started: {s} {d[:200]}")
            # One for recalculate, one for complete_task (recalculate gives the first values).
            for name in ("hostile.ods", "hostile2.ods"):
                with zipfile.ZipFile(os.path.join(ws, "cash_flows.ods")) as zin, \
                        zipfile.ZipFile(os.path.join(ws, name), "w") as zout:
                    for info in zin.infolist():
                        data = zin.read(info.filename)
                        if info.filename == "content.xml":
                            data = data.replace(b"</table:table-row>", b"</table:table-row>"
                                                b"<table:table-row>" + row.encode() +
                                                b"</table:table-row>", 1)
                        zout.writestr(info, data)
            r = c.call("recalculate", {"file_path": "hostile.ods"})
            text = json.dumps(r)
            check("formula longer than 8192 characters (limit)" in text,
                  f"recalculate names the length limit: {text[:300]}")
            c.alive("recalculating a 50,000-term formula")
            v = c.call("read_cell", {"file_path": "hostile.ods", "sheet_name": "Sheet1",
                                     "cell_reference": "I2"})
            check("4001" in json.dumps(v), f"a 4,001-term chain computes: {json.dumps(v)[:300]}")
            r = c.call("complete_task", {"summary": "done"})
            st = r.get("result", {}).get("structuredContent", {})
            check(st.get("status") == "completed" and "formula longer than 8192 characters (limit)"
                  in json.dumps(st.get("recalc")),
                  f"complete_task completes, naming the limit: {json.dumps(r)[:300]}")
            c.alive("complete_task with hostile formulas")
            check(proc.poll() is None, "server survives hostile formulas")


def _uid(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Uid:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def _zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def _comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def hostile_stdio():
    """The same over stdio: junk lines get errors, the line after still works."""
    import subprocess

    with h.workspace() as ws:
        lines = [b"{not json", b"[" * 10000 + b"]" * 10000, b'{"jsonrpc":"2.0","id":{},"method":"ping"}',
                 b"x" * (65 << 20), b'{"jsonrpc":"2.0","id":"last","method":"ping"}']
        p = subprocess.run([h.SERVER, "--workspace", ws, "--stdio"], input=b"\n".join(lines) + b"\n",
                           capture_output=True, timeout=120)
        out = [json.loads(x) for x in p.stdout.splitlines()]
        codes = [o.get("error", {}).get("code") for o in out]
        check(codes[:4] == [-32700, -32700, -32600, -32700], f"stdio junk answered {codes}")
        check(out[-1] == {"jsonrpc": "2.0", "id": "last", "result": {}}, "stdio ping after junk")
        check(p.returncode == 0, "stdio exits 0 at EOF")


def hostile_env():
    """A bad $SANDBOX_EXEC_MAX_PROCESSES (sandboxctl sets it under gVisor) is refused at
    start with one line: it is tool code's process limit, never silently the default."""
    import subprocess

    with h.workspace() as ws:
        for bad in ("0", "abc", "70000", "-5", ""):
            p = subprocess.run([h.SERVER, "--workspace", ws, "--stdio"], input=b"",
                               capture_output=True, timeout=30,
                               env=dict(os.environ, SANDBOX_EXEC_MAX_PROCESSES=bad))
            err = p.stderr.decode().strip().splitlines()
            check(p.returncode == 2 and len(err) == 1 and
                  "SANDBOX_EXEC_MAX_PROCESSES='%s'" % bad in err[0],
                  f"SANDBOX_EXEC_MAX_PROCESSES={bad!r}: exit {p.returncode}, {err}")


def main():
    hostile_formulas()
    hostile_stdio()
    hostile_env()
    with h.workspace() as ws:
        user = None
        if os.geteuid() == 0:
            user = NOBODY
            os.chmod(ws, 0o755)
            for root, dirs, files in os.walk(ws):
                for n in dirs + files:
                    os.chown(os.path.join(root, n), NOBODY, NOBODY)
            os.chown(ws, NOBODY, NOBODY)
        with h.http_server(ws, "--task-timeout", "600", user=user) as (base, proc):
            hostile(base, ws)
            big_saves(base, ws)
            check(proc.poll() is None, "server process still running")
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)


if __name__ == "__main__":
    main()

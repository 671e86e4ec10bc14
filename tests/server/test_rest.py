# SPDX-License-Identifier: MIT
"""The REST API of the reference system and the task session, over TCP and
over a unix socket (how the host reaches the sandbox through a Docker exec
relay): /health, /tools, /tools/call status codes, /resources, /task/start,
/task/status, /task/complete, the 408 after the deadline, the status file,
and late-arriving task files."""

import http.client
import json
import os
import shutil
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from unix_http import UnixHTTP as UnixHTTPConnection  # noqa: E402
import mcp_harness as h  # noqa: E402


def connect(base):
    if base.startswith("unix:"):
        return UnixHTTPConnection(base[5:])
    host, port = base[len("http://"):].rsplit(":", 1)
    return http.client.HTTPConnection(host, int(port), timeout=60)


def req(c, method, path, body=None):
    c.request(method, path, body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    return r.status, json.loads(data) if data else None, r


def call(c, tool, **args):
    return req(c, "POST", "/tools/call", {"tool_name": tool, "arguments": args})


def rest(base, ws, status_file):
    c = connect(base)  # one keep-alive connection for everything
    # The reference's shapes on its paths; ours under /v1/ (tests/compat has the rest).
    s, b, _ = req(c, "GET", "/health")
    assert s == 200 and b == {"status": "ok", "workspace": os.path.realpath(ws)}, b
    s, b, _ = req(c, "GET", "/v1/health")
    assert s == 200 and b["status"] == "healthy", b
    s, b, _ = req(c, "GET", "/tools")
    assert s == 200 and any(t["name"] == "read_cell" and "parameters" in t for t in b), b
    for path in ("/v1/tools", "/tools?format=mcp"):
        s, b, _ = req(c, "GET", path)
        assert s == 200 and any(t["name"] == "read_cell" for t in b["tools"]), b
    s, b, _ = req(c, "GET", "/task/status")
    assert s == 404 and b["error"] == "No active task", (s, b)
    s, b, _ = req(c, "GET", "/v1/task/status")
    assert s == 200 and b["status"] == "pending" and b["started_at"] is None, b
    s, b, _ = req(c, "POST", "/task/start", {"task_id": "t-1", "timeout_seconds": 2})
    assert s == 200 and b["status"] == "running" and b["timeout_seconds"] == 2, b

    F = {"file_path": "cash_flows.ods", "sheet_name": "Sheet1"}
    s, b, _ = call(c, "read_cell", **F, cell_reference="A1")
    assert s == 200 and b == {"success": True, "error": None, "result": {
        "cell_reference": "A1", "value": "Period", "value_type": "string", "formula": None}}, b
    s, b, _ = call(c, "write_cell", **F, cell_reference="D1", value="Required_Reserve")
    assert s == 200 and b["result"]["new_value"] == "Required_Reserve", b
    s, b, _ = call(c, "read_cell", file_path="x.ods", sheet_name="Sheet1", cell_reference="A1")
    assert s == 422 and b["error"] == "File not found: x.ods", (s, b)
    s, b, _ = call(c, "read_cell", file_path="cash_flows.ods", sheet_name="BadSheet", cell_reference="A1")
    assert s == 422 and b["error"] == "Sheet 'BadSheet' not found", (s, b)
    s, b, _ = call(c, "read_cell", **F, cell_reference="ZZZ")
    assert s == 422 and b["error"] == "Invalid cell reference: ZZZ", (s, b)
    s, b, _ = call(c, "fake_tool")
    assert s == 404 and b["error"] == "Unknown tool: fake_tool", (s, b)
    s, b, _ = req(c, "POST", "/tools/call", {"arguments": {}})
    assert s == 400, (s, b)

    # A task file that arrives after the server started is served at once.
    shutil.copy(h.ODS, os.path.join(ws, "late.ods"))
    s, b, _ = call(c, "list_sheets", file_path="late.ods")
    assert s == 200 and b["result"]["sheets"] == [
        {"name": "Sheet1", "row_count": 101, "col_count": 3}], b
    s, b, _ = req(c, "GET", "/resources")
    assert s == 200 and {"uri": "file://late.ods", "name": "late.ods"}.items() <= next(
        r for r in b if r["name"] == "late.ods").items(), b
    s, b, _ = req(c, "GET", "/v1/resources")
    assert s == 200 and any(r["name"] == "late.ods" and r["uri"].startswith("file:///")
                            for r in b["resources"]), b

    s, b, _ = req(c, "GET", "/task/status")
    assert b["status"] == "running" and 0 < b["remaining"] <= 2, b
    assert "cash_flows.ods" in b["files_modified"], b
    time.sleep(2.3)
    s, b, _ = call(c, "read_cell", **F, cell_reference="A1")
    assert s == 408 and b["error"] == "Task has timed out", (s, b)
    s, b, _ = req(c, "GET", "/task/status")
    assert b["status"] == "timed_out", b
    with open(status_file) as f:
        st = json.load(f)
    assert st["status"] == "timed_out" and st["task_id"] == "t-1", st
    s, b, _ = req(c, "POST", "/task/complete")
    assert s == 408, (s, b)

    # A new episode; completing it writes the status file again.
    s, b, _ = req(c, "POST", "/task/start", {"task_id": "t-2"})
    assert s == 200 and b["status"] == "running", b
    # A formula without a value is recalculated (LibreOffice) before completion.
    s, b, _ = call(c, "set_formula", **F, cell_reference="D2", formula="=B2*C2")
    assert s == 200, b
    s, b, _ = req(c, "POST", "/task/complete")
    assert s == 200 and b["status"] == "completed", b
    with open(os.path.join(ws, ".task_complete")) as f:
        assert json.load(f)["task_id"] == "t-2"
    s2, b2, _ = req(c, "GET", "/task/status")
    assert s2 == 404, (s2, b2)
    s2, b2, _ = req(c, "GET", "/v1/task/status")
    assert s2 == 200 and b2["status"] == "completed", b2
    if shutil.which("soffice") and base.startswith("http"):
        assert b["recalculated"] == ["cash_flows.ods"], b
        s, b, _ = call(c, "read_cell", **F, cell_reference="D2")
        assert abs(b["result"]["value"] - 257624.09 * 0.1031) < 1e-6, b
    s, b, _ = call(c, "write_cell", **F, cell_reference="D3", value=1)
    assert s == 422 and "completed" in b["error"], (s, b)
    with open(status_file) as f:
        st = json.load(f)
    assert st["status"] == "completed" and st["task_id"] == "t-2", st


def concurrent_writes(base):
    """Eight connections write distinct cells at once; every write must land."""
    import threading

    errors = []

    def worker(k):
        c = connect(base)
        for i in range(20):
            s, b, _ = call(c, "write_cell", file_path="cash_flows.ods", sheet_name="Sheet1",
                           cell_reference=f"{'EFGHIJKL'[k]}{i + 1}", value=k * 100 + i)
            if s != 200:
                errors.append((s, b))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    c = connect(base)
    s, b, _ = call(c, "read_range", file_path="cash_flows.ods", sheet_name="Sheet1",
                   start_cell="E1", end_cell="L20")
    got = b["result"]["values"]
    assert all(got[i][k] == k * 100 + i for i in range(20) for k in range(8)), got


def deadline_from_env():
    """SANDBOX_TASK_DEADLINE (unix seconds, set by sandboxctl run) and SANDBOX_TASK_TIMEOUT
    give the task its timeout, so get_task_status reports it; --task-timeout still wins."""
    saved = {k: os.environ.pop(k, None) for k in ("SANDBOX_TASK_DEADLINE", "SANDBOX_TASK_TIMEOUT")}
    try:
        for env, extra, lo, hi in (({"SANDBOX_TASK_DEADLINE": str(int(time.time()) + 100)}, (), 97, 100.5),
                                   ({"SANDBOX_TASK_TIMEOUT": "42"}, (), 42, 42),
                                   ({"SANDBOX_TASK_DEADLINE": str(int(time.time()) + 100)},
                                    ("--task-timeout", "7"), 7, 7),
                                   ({"SANDBOX_TASK_DEADLINE": "0"}, (), None, None)):
            os.environ.update(env)
            with h.workspace() as ws, h.http_server(ws, *extra) as (base, _):
                c = connect(base)
                for path in ("/v1/task/status", None):
                    if path is None:
                        s, b, _ = call(c, "get_task_status")
                        b = b["result"]
                    else:
                        s, b, _ = req(c, "GET", path)
                    t = b["timeout_seconds"]
                    assert (t is None and lo is None) or (lo is not None and lo <= t <= hi), (env, extra, b)
            for k in env:
                del os.environ[k]
    finally:
        for k, v in saved.items():
            if v is not None:
                os.environ[k] = v


def main():
    deadline_from_env()
    print("task deadline from the environment: ok")
    with h.workspace() as ws, h.http_server(ws) as (base, _):
        concurrent_writes(base)
    print("concurrent writes: ok")
    for transport in ("tcp", "unix"):
        with h.workspace() as ws:
            status_file = ws + ".status.json"
            sock = ws + ".sock" if transport == "unix" else None
            try:
                with h.http_server(ws, "--status-file", status_file, unix=sock) as (base, _):
                    rest(base, ws, status_file)
                    if sock:
                        assert os.stat(sock).st_mode & 0o777 == 0o660
            finally:
                for p in (status_file,):
                    if os.path.exists(p):
                        os.unlink(p)
            if sock:
                assert not os.path.exists(sock), "unix socket left behind"
        print(f"REST over {transport}: ok")


if __name__ == "__main__":
    main()

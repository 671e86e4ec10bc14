# SPDX-License-Identifier: MIT
"""sandbox-mcp as a drop-in for the reference system (issue 12).

A client that behaves like the reference's (ref_client.py) runs against
`sandbox-mcp --http` on the reference's own task files and changes nothing
but the URL: its check script (the 17 checks of `sandbox_manager.py run
--demo`, the GUI ones on Xvfb), every tool with the reference's argument
names, each difference the issue lists (one check each), the task life cycle
with the .task_complete marker its wait_for_agent polls, and the scripted
banking_reserve solve graded by `sandboxctl grade` to 315/315 against the
reference's own oracle.

    SANDBOX_MCP=build/server/sandbox-mcp SANDBOXCTL=build/cmd/sandboxctl \
        python3 tests/compat/test_compat.py
"""

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "server"))
import mcp_harness as h  # noqa: E402
import ref_client as rc  # noqa: E402

SOURCE_ROOT = os.path.abspath(os.environ.get("SBX_SOURCE_ROOT", os.path.join(HERE, "..", "..")))
BUILD_ROOT = os.environ.get("SBX_BUILD_ROOT", os.path.join(SOURCE_ROOT, "build"))
SANDBOXCTL = os.environ.get("SANDBOXCTL", os.path.join(BUILD_ROOT, "cmd", "sandboxctl"))
TASK = os.path.join(SOURCE_ROOT, "tests", "compat", "data", "banking_reserve")
START = os.path.join(TASK, "starting_files", "cash_flows.ods")

# The reference's 17 tools (its README: 9 programmatic, 8 computer use).
PROGRAMMATIC = ["read_cell", "write_cell", "read_range", "write_range", "set_formula",
                "list_sheets", "get_sheet_info", "list_files", "execute_python"]
COMPUTER_USE = ["take_screenshot", "click", "double_click", "type_text", "key_press",
                "mouse_move", "drag", "get_cursor_position"]
F = {"file_path": "cash_flows.ods", "sheet_name": "Sheet1"}

failures = []


def check(cond, what):
    print("  [%s] %s" % ("PASS" if cond else "FAIL", what))
    if not cond:
        failures.append(what)
    return cond


def workspace():
    return h.workspace(START, prefix="sbx-compat-")


@contextlib.contextmanager
def server(ws, *extra, env=None):
    """sandbox-mcp --http on ws (tests/server/mcp_harness.py); yields the reference's client."""
    with h.http_server(ws, *extra, env=env) as (url, _):
        yield rc.MCPClient(url)


@contextlib.contextmanager
def xvfb():
    """A 1280x720 display like the reference's, or None when Xvfb is missing."""
    if not shutil.which("Xvfb"):
        yield None
        return
    for n in range(140, 180):
        if os.path.exists("/tmp/.X11-unix/X%d" % n) or os.path.exists("/tmp/.X%d-lock" % n):
            continue
        p = subprocess.Popen(["Xvfb", ":%d" % n, "-screen", "0", "1280x720x24", "-nolisten", "tcp"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        until = time.time() + 10
        while not os.path.exists("/tmp/.X11-unix/X%d" % n) and time.time() < until:
            if p.poll() is not None:
                break
            time.sleep(0.05)
        if p.poll() is None:
            try:
                yield ":%d" % n
            finally:
                p.terminate()
                p.wait()
            return
    yield None


def check_script(c, ws, display):
    """The reference's `sandbox_manager.py run --demo` checks, as it runs them."""
    print("[DEMO] Running automated MCP tool checks...")
    check(c.health()["status"] == "ok", "Health endpoint responds")
    names = c.tool_names()
    expected = PROGRAMMATIC + (COMPUTER_USE if display else [])
    check(all(n in names for n in expected),
          "Tools endpoint returns the reference's %d tools (of %d)" % (len(expected), len(names)))
    for n in ("read_cell", "write_cell", "set_formula"):
        check(n in names, "Mode 2: %s tool available" % n)
    if display:
        for n in ("take_screenshot", "click", "type_text"):
            check(n in names, "Mode 1: %s tool available" % n)
    files = c.call_tool("list_files")["files"]
    check(files == ["cash_flows.ods"], "Workspace has files: %s" % files)
    v = c.call_tool("read_cell", **F, cell_reference="A1")["value"]
    check(v == "Period", "read_cell A1 = %r" % v)
    rows = c.call_tool("read_range", **F, start_cell="A1", end_cell="C3")["values"]
    check(len(rows) == 3, "read_range returns %d rows" % len(rows))
    n = c.call_tool("get_sheet_info", **F)["row_count"]
    check(n == 101, "Sheet has %d rows (expected 101)" % n)
    r = c.call_tool("write_cell", **F, cell_reference="D1", value="Required_Reserve")
    check(r["success"] is True, "write_cell D1 header")
    if display:
        shot = c.call_tool("take_screenshot")
        check(shot["width"] == 1280 and len(shot["image_base64"]) > 1000,
              "take_screenshot (%dpx wide, %d chars)" % (shot["width"], len(shot["image_base64"])))
        r = c.call_tool("click", x=400, y=300)
        check(r["success"] is True, "click(400, 300)")
    status, body = c.start_task(task_id="banking_reserve", timeout_seconds=300)
    check(status == 200, "task/start")
    status, body = c.task_status()
    check(status == 200 and body["status"] == "running", "task/status shows running")


def attempt(what, fn):
    """One check that may crash the way a reference client would: a crash fails it."""
    try:
        return check(fn(), what)
    except Exception as e:  # noqa: BLE001 - the reference's clients crash on shapes, so may we
        return check(False, "%s (crashed: %s: %s)" % (what, type(e).__name__, e))


def differences(c, ws):
    """One check per row of the issue's table: each fails on the server before issue 12."""
    print("[ROWS] The reference's shapes on its own paths...")
    attempt("GET /health is {status: ok, workspace}",
            lambda: c._request("GET", "/health") == (200, {"status": "ok", "workspace": os.path.realpath(ws)}))

    def tools_bare_list():
        status, body = c._request("GET", "/tools")
        return (isinstance(body, list) and all(set(t) == {"name", "description", "parameters"} for t in body)
                and all(isinstance(t["parameters"], list) for t in body))
    attempt("GET /tools is a bare list of {name, description, parameters}", tools_bare_list)

    def function_schemas():
        ok_types = {"string", "integer", "number", "boolean", "array", "object"}
        funcs = c.openai_tools()
        rd = next(f for f in funcs if f["function"]["name"] == "read_cell")["function"]["parameters"]
        return (all(p["type"] in ok_types and (p["type"] != "array" or p["items"])
                    for f in funcs for p in f["function"]["parameters"]["properties"].values())
                and set(rd["required"]) == {"file_path", "cell_reference"} and "sheet_name" in rd["properties"])
    attempt("llm_agent: the tool list becomes valid function-calling schemas", function_schemas)

    def resources():
        status, body = c._request("GET", "/resources")
        return isinstance(body, list) and any(
            r["uri"] == "file://cash_flows.ods" and r["name"] == "cash_flows.ods" for r in body)
    attempt("GET /resources is a bare list with uri file://<name>", resources)

    attempt("list_sheets is {file_path, sheets:[{name, row_count, col_count}]}",
            lambda: c.call_tool("list_sheets", file_path="cash_flows.ods") == {
                "file_path": "cash_flows.ods", "sheets": [{"name": "Sheet1", "row_count": 101, "col_count": 3}]})

    def exit_fails():
        status, body = c.call("execute_python", code="import sys\nprint('partial')\nsys.exit(2)")
        return (status == 200 and body["success"] is False and "partial" in body["result"]["stdout"]
                and body["result"]["return_code"] == 2 and body["error"])
    attempt("execute_python with a non-zero exit: success false, output kept", exit_fails)

    def syntax_fails():
        status, body = c.call("execute_python", code="def broken(:\n")
        return body["success"] is False and "SyntaxError" in (body["error"] or "")
    attempt("execute_python with a syntax error: success false", syntax_fails)

    def works():
        status, body = c.call("execute_python", code="print(6 * 7)")
        return (body["success"] is True and body["result"]["stdout"] == "42\n"
                and body["result"]["return_code"] == 0)
    attempt("execute_python that works: success true, stdout, return_code", works)


def lifecycle(ws):
    print("[TASK] The task life cycle and the marker...")
    marker = os.path.join(ws, ".task_complete")
    with server(ws) as c:
        attempt("GET /task/status with no task: 404", lambda: c.task_status()[0] == 404)
        status, body = c.start_task(task_id="first", timeout_seconds=300)
        check(status == 200 and body["status"] == "running" and body["task_id"] == "first", "task/start")
        time.sleep(1.1)

        def replaces():
            status, body = c.start_task(task_id="second", timeout_seconds=60)
            return (status == 200 and body["task_id"] == "second" and body["status"] == "running"
                    and body["timeout_seconds"] == 60 and body["elapsed"] < 1
                    and c.task_status()[1]["task_id"] == "second")
        attempt("task/start while running replaces the task", replaces)
        check(not os.path.exists(marker), "no marker before completion")
        status, body = c.complete_task()
        check(status == 200 and body["status"] == "completed", "task/complete")
        attempt("wait_for_agent sees .task_complete in the workspace", lambda: rc.wait_for_agent(ws, timeout=3))

        def marker_holds_status():
            with open(marker) as f:
                m = json.load(f)
            return m["task_id"] == "second" and m["status"] == "completed"
        attempt("the marker holds the status", marker_holds_status)
        attempt("GET /task/status after completion: 404", lambda: c.task_status()[0] == 404)
        check(".task_complete" not in c.call_tool("list_files")["files"], "list_files does not show the marker")
        status, body = c.start_task(task_id="third")
        check(status == 200 and not os.path.exists(marker), "a new task removes the marker")
        # Ours stays beside it.
        attempt("/v1/task/status: 200 always",
                lambda: c._request("GET", "/v1/task/status")[1]["status"] == "running")
        attempt("/v1/task/start keeps a running task",
                lambda: (lambda b: b.get("already_running") is True and b["task_id"] == "third")(
                    c._request("POST", "/v1/task/start", {"task_id": "fourth"})[1]))


def every_tool(c, ws, display):
    print("[TOOLS] Every tool with the reference's argument names...")
    r = c.call_tool("read_cell", **F, cell_reference="B2")
    check(set(r) >= {"cell_reference", "value", "value_type"} and r["cell_reference"] == "B2"
          and isinstance(r["value"], float), "read_cell: %s" % r)
    for ref, value in (("E1", "text"), ("E2", 42), ("E3", 2.5), ("E4", True)):
        r = c.call_tool("write_cell", **F, cell_reference=ref, value=value)
        check(r["success"] is True and r["cell_reference"] == ref and r["new_value"] == value,
              "write_cell %s = %r: %s" % (ref, value, r))
    r = c.call_tool("read_range", **F, start_cell="E1", end_cell="E4")
    check(r["start_cell"] == "E1" and r["end_cell"] == "E4"
          and [row[0] for row in r["values"]] == ["text", 42, 2.5, True], "read_range: %s" % r)
    r = c.call_tool("write_range", **F, start_cell="F1", values=[[1, 2], [3, 4]])
    check(r["success"] is True and r["cells_written"] == 4, "write_range: %s" % r)
    r = c.call_tool("set_formula", **F, cell_reference="F3", formula="=SUM(F1:G2)")
    check(r["success"] is True and r["cell_reference"] == "F3" and r["formula"] == "=SUM(F1:G2)",
          "set_formula: %s" % r)
    r = c.call_tool("list_sheets", file_path="cash_flows.ods")
    check(r["sheets"][0]["name"] == "Sheet1", "list_sheets")
    r = c.call_tool("get_sheet_info", **F)
    check(r["sheet_name"] == "Sheet1" and r["headers"][:3] == ["Period", "Cash_Flow_Amount", "Rate_Point"],
          "get_sheet_info: headers %s" % r["headers"][:3])
    r = c.call_tool("list_files")
    check(r["files"] == ["cash_flows.ods"], "list_files: %s" % r)
    r = c.call_tool("execute_python", code="import os; print(sorted(os.listdir('.')))")
    check("cash_flows.ods" in r["stdout"] and r["stderr"] == "" and r["return_code"] == 0,
          "execute_python {stdout, stderr, return_code}")
    if display:
        r = c.call_tool("take_screenshot")
        check(r["width"] == 1280 and r["height"] == 720 and "timestamp" in r, "take_screenshot")
        for tool, args in (("click", {"x": 10, "y": 20, "button": 1}), ("double_click", {"x": 10, "y": 20}),
                           ("mouse_move", {"x": 30, "y": 40})):
            r = c.call_tool(tool, **args)
            check(r["success"] is True and r["x"] == args["x"] and r["y"] == args["y"], "%s: %s" % (tool, r))
        r = c.call_tool("type_text", text="hello")
        check(r["success"] is True and r["text_typed"] == "hello", "type_text: %s" % r)
        r = c.call_tool("key_press", key="ctrl+s")
        check(r["success"] is True and r["key"] == "ctrl+s", "key_press: %s" % r)
        r = c.call_tool("drag", start_x=10, start_y=10, end_x=50, end_y=60)
        check(r["success"] is True, "drag: %s" % r)
        r = c.call_tool("get_cursor_position")
        check(r == {"x": 50, "y": 60} or (r.get("x"), r.get("y")) == (50, 60), "get_cursor_position: %s" % r)

    print("[ERRORS] The reference's error texts (ours: 422 for bad arguments, not 500)...")
    for args, text in (({"file_path": "nonexistent.ods", "sheet_name": "Sheet1", "cell_reference": "A1"},
                        "File not found: "),
                       ({"file_path": "cash_flows.ods", "sheet_name": "BadSheet", "cell_reference": "A1"},
                        "Sheet 'BadSheet' not found"),
                       ({**F, "cell_reference": "ZZZ"}, "Invalid cell reference: ZZZ")):
        status, body = c.call("read_cell", **args)
        check(body["success"] is False and body["result"] is None and body["error"].startswith(text),
              "read_cell error %r (HTTP %d)" % (body["error"], status))
    status, body = c.call("fake_tool")
    check(status == 404 and body == {"success": False, "result": None, "error": "Unknown tool: fake_tool"},
          "Unknown tool: fake_tool (404)")
    status, body = c.call("execute_python", code="import time; time.sleep(5)", timeout=1)
    check(body["success"] is False and body["error"] == "Code execution timed out after 1 seconds",
          "execute_python timeout text")
    # The reference's write_cell wrote outside its workspace; ours refuses.
    outside = os.path.join(os.path.dirname(ws), "outside-%d.ods" % os.getpid())
    status, body = c.call("write_cell", file_path="../" + os.path.basename(outside), sheet_name="Sheet1",
                          cell_reference="A1", value="x")
    check(status == 422 and not os.path.exists(outside), "write_cell outside the workspace: refused (%d)" % status)


def import_task(solved):
    """tasks import: the reference's grading as it is, or --answer-ranges (ours: it validates)."""
    print("[IMPORT] sandboxctl tasks import...")
    out = tempfile.mkdtemp(prefix="sbx-compat-import-")
    try:
        p = subprocess.run([SANDBOXCTL, "tasks", "validate", TASK], capture_output=True, text=True)
        check(p.returncode == 0 and "read as a reference task" in p.stdout,
              "tasks validate reads task.json as a reference task")
        whole, ranges = os.path.join(out, "whole"), os.path.join(out, "ranges")
        # --id keeps the reference's id, so the two read the same; without it the id is
        # the folder's name (below), so `run --task NAME` reports as NAME.
        p = subprocess.run([SANDBOXCTL, "tasks", "import", TASK, "--out", whole, "--id", "banking_reserve"],
                           capture_output=True, text=True)
        check(p.returncode == 0 and os.path.exists(os.path.join(whole, "task.yaml"))
              and os.path.exists(os.path.join(whole, "starting_files", "cash_flows.ods")),
              "tasks import writes task.yaml and the files")
        shows = [json.loads(subprocess.run([SANDBOXCTL, "tasks", "show", t, "--json"], capture_output=True,
                                           text=True, check=True).stdout) for t in (TASK, whole)]
        for k in ("reference", "path", "cases"):
            for s in shows:
                s.pop(k, None)
        check(shows[0] == shows[1], "the imported task.yaml is the task task.json is read as")
        p = subprocess.run([SANDBOXCTL, "tasks", "import", TASK, "--out", ranges, "--answer-ranges"],
                           capture_output=True, text=True)
        check(p.returncode == 0 and "it validates" in p.stdout, "tasks import --answer-ranges: %s" % p.stdout.strip())
        p = subprocess.run([SANDBOXCTL, "tasks", "validate", ranges], capture_output=True, text=True)
        check(p.returncode == 0, "the --answer-ranges import validates")
        shown = json.loads(subprocess.run([SANDBOXCTL, "tasks", "show", ranges, "--json"],
                                          capture_output=True, text=True, check=True).stdout)
        check(shown["id"] == "ranges", "an import without --id is named after its folder: %s" % shown["id"])
        p = subprocess.run([SANDBOXCTL, "tasks", "import", TASK, "--out", os.path.join(out, "badid"),
                            "--id", "no/such id"], capture_output=True, text=True)
        check(p.returncode == 2 and "task id 'no/such id'" in p.stderr
              and not os.path.exists(os.path.join(out, "badid")), "a bad --id is refused before writing")
        g = json.loads(subprocess.run([SANDBOXCTL, "grade", "--task", ranges, solved, "--json"],
                                      capture_output=True, text=True).stdout)
        check(g["status"] == "PASS" and [c["graded"] for c in g["cases"]] == [101, 303],
              "the solved workbook under it: %s, cases graded %s" % (g["status"], [c["graded"] for c in g["cases"]]))
        bad = os.path.join(out, "bad")
        shutil.copytree(TASK, bad)
        with open(os.path.join(bad, "task.json"), "w") as f:
            json.dump({"id": "x", "description": "d", "grading": {"numeric_tolerance": 0.01, "tolerance": 1}}, f)
        p = subprocess.run([SANDBOXCTL, "tasks", "validate", bad], capture_output=True, text=True)
        check(p.returncode == 2 and "task.json: $.grading: unknown key 'tolerance'" in p.stdout + p.stderr,
              "an unknown key is an error with its JSON path")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def solve_and_grade(ws):
    print("[SOLVE] demo_agent.py on banking_reserve, then the grader...")
    with server(ws) as c:
        c.wait_until_up()
        reserves = rc.demo_agent(c, log=lambda s: print("    " + s))
        check(len(reserves) == 100, "100 reserves written")
        check(rc.wait_for_agent(ws, timeout=10), "wait_for_agent: the agent finished")
    out = subprocess.run([SANDBOXCTL, "grade", "--task", TASK, os.path.join(ws, "cash_flows.ods"), "--json"],
                         capture_output=True, text=True)
    g = json.loads(out.stdout)
    check(out.returncode == 0 and g["status"] == "PASS" and g["matched"] == 315 and g["graded"] == 315,
          "GRADING RESULT: %s %d/%d cells (against the reference's own oracle)"
          % (g["status"], g["matched"], g["graded"]))
    section(import_task, os.path.join(ws, "cash_flows.ods"))


def section(fn, *args):
    """A section that crashes (as the reference's client does on a foreign shape) fails, the rest run."""
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001
        check(False, "%s crashed: %s: %s" % (fn.__name__, type(e).__name__, e))


def main():
    with xvfb() as display:
        gui = ["--display", display] if display else []
        with workspace() as ws, server(ws, *gui) as c:
            section(lambda: (c.wait_until_up(), check_script(c, ws, display)))
        if not display:
            print("  (no Xvfb: the computer-use checks were skipped)")
        with workspace() as ws, server(ws, *gui) as c:
            section(differences, c, ws)
            section(every_tool, c, ws, display)
    # Without a display the computer-use tools are not listed, as in a slim image.
    with workspace() as ws, server(ws) as c:
        attempt("no display: no computer-use tools listed",
                lambda: not any(n in c.tool_names() for n in COMPUTER_USE))
    with workspace() as ws:
        section(lifecycle, ws)
    with workspace() as ws:
        section(solve_and_grade, ws)
    if failures:
        print("\n%d check(s) failed:\n  %s" % (len(failures), "\n  ".join(failures)))
        sys.exit(1)
    print("\nall checks passed")


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: MIT
"""A REST client that behaves like the reference system's own clients do.

The reference's scripts (sandbox_manager.py, demo_agent.py, llm_agent.py) are
not available to us, so this is written from its documented API (shared/seeds,
MCP-NOTES.md): the same endpoints, the same request bodies, the same way of
reading the answers, and the same assumptions. Where a reference client would
crash or misread an answer (a dict where it expects a list, "healthy" where
it compares with "ok"), so does this one: that is the point of the test.

Standard library only, like a script a user copies next to their agent.
"""

import json
import os
import time
import urllib.error
import urllib.request


class ToolError(RuntimeError):
    def __init__(self, status, body):
        super().__init__("HTTP %d: %s" % (status, body.get("error") if isinstance(body, dict) else body))
        self.status = status
        self.body = body


class MCPClient:
    """The reference's client: base URL in, JSON dicts and lists out."""

    def __init__(self, base_url, timeout=60):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    def _request(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base_url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw)
            except ValueError:
                return e.code, raw.decode(errors="replace")

    # -- sandbox_manager.py: wait for the server, then its demo checks --------

    def health(self):
        status, body = self._request("GET", "/health")
        if status != 200 or body.get("status") != "ok":
            raise RuntimeError("MCP server not healthy: %r" % (body,))
        return body

    def wait_until_up(self, timeout=30):
        until = time.time() + timeout
        while True:
            try:
                return self.health()
            except (OSError, RuntimeError):
                if time.time() > until:
                    raise
                time.sleep(0.05)

    def list_tools(self):
        status, body = self._request("GET", "/tools")
        if status != 200:
            raise ToolError(status, body)
        # The reference's /tools is a bare list: `len(tools)`, `t["name"]`.
        return body

    def tool_names(self):
        return [t["name"] for t in self.list_tools()]

    def list_resources(self):
        status, body = self._request("GET", "/resources")
        if status != 200:
            raise ToolError(status, body)
        return body

    def call(self, tool_name, **arguments):
        """POST /tools/call; returns the whole {success, result, error} answer and status."""
        return self._request("POST", "/tools/call", {"tool_name": tool_name, "arguments": arguments})

    def call_tool(self, tool_name, **arguments):
        """demo_agent.py's helper: the result, or an exception on success false."""
        status, body = self.call(tool_name, **arguments)
        if status != 200 or not body.get("success"):
            raise ToolError(status, body)
        return body["result"]

    # -- the task session ------------------------------------------------------

    def start_task(self, task_id=None, timeout_seconds=None):
        body = {}
        if task_id is not None:
            body["task_id"] = task_id
        if timeout_seconds is not None:
            body["timeout_seconds"] = timeout_seconds
        return self._request("POST", "/task/start", body)

    def task_status(self):
        return self._request("GET", "/task/status")

    def complete_task(self):
        return self._request("POST", "/task/complete", {})

    # -- llm_agent.py: the tool list becomes OpenAI function definitions ------

    def openai_tools(self):
        out = []
        for t in self.list_tools():
            props, required = {}, []
            for p in t["parameters"]:
                prop = {"type": p["type"], "description": p.get("description", "")}
                if p["type"] == "array":
                    prop["items"] = p.get("items", {})
                props[p["name"]] = prop
                if p.get("required"):
                    required.append(p["name"])
            out.append({"type": "function", "function": {
                "name": t["name"], "description": t["description"],
                "parameters": {"type": "object", "properties": props, "required": required}}})
        return out


def wait_for_agent(shared_dir, timeout=300, poll=0.1):
    """sandbox_manager.py's wait: the agent is done when the marker appears in the workspace."""
    marker = os.path.join(shared_dir, ".task_complete")
    until = time.time() + timeout
    while time.time() < until:
        if os.path.exists(marker):
            return True
        time.sleep(poll)
    return False


def interpolated_reserves(rows):
    """demo_agent.py's computation: rows are [period, cash_flow, rate_or_empty]."""
    known = [(float(r[0]), float(r[2])) for r in rows if r[2] not in (None, "")]
    out = []
    for r in rows:
        period, cf = float(r[0]), float(r[1])
        if r[2] not in (None, ""):
            rate = float(r[2])
        else:
            lo = max((k for k in known if k[0] < period), key=lambda k: k[0], default=None)
            hi = min((k for k in known if k[0] > period), key=lambda k: k[0], default=None)
            if lo is None or hi is None:
                rate = (lo or hi)[1]
            else:
                rate = lo[1] + (hi[1] - lo[1]) * (period - lo[0]) / (hi[0] - lo[0])
        out.append(round(cf * rate, 2))
    return out


def demo_agent(client, file_name="cash_flows.ods", log=print):
    """The reference's scripted agent: list_files, get_sheet_info, read_range, compute,
    write_cell + write_range, task/complete."""
    log("[1] Starting task session...")
    client.start_task(task_id="banking_reserve")
    log("[2] Listing workspace files...")
    files = client.call_tool("list_files")["files"]
    assert file_name in files, files
    log("[3] Reading sheet info...")
    info = client.call_tool("get_sheet_info", file_path=file_name, sheet_name="Sheet1")
    rows = info["row_count"]
    log("    %d rows, %d cols, Headers: %s" % (rows, info["col_count"], info["headers"]))
    data = client.call_tool("read_range", file_path=file_name, sheet_name="Sheet1",
                            start_cell="A2", end_cell="C%d" % rows)["values"]
    reserves = interpolated_reserves(data)
    log("[8] Writing %d reserve values..." % len(reserves))
    client.call_tool("write_cell", file_path=file_name, sheet_name="Sheet1",
                     cell_reference="D1", value="Required_Reserve")
    client.call_tool("write_range", file_path=file_name, sheet_name="Sheet1",
                     start_cell="D2", values=[[v] for v in reserves])
    log("[10] Signaling task completion...")
    status, body = client.complete_task()
    if status != 200:
        raise ToolError(status, body)
    return reserves

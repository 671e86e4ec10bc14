# SPDX-License-Identifier: MIT
"""sandbox-mcp with the official MCP Python SDK as the client, over stdio,
Streamable HTTP and legacy SSE: initialize, list tools, call every
spreadsheet tool on a real ODS, read a resource, get a tool error as
isError, and see progress notifications for a long tool call."""

import asyncio
import base64
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
import mcp_harness as h  # noqa: E402

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.sse import sse_client  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

EXPECTED_TOOLS = {
    "read_cell", "write_cell", "read_range", "write_range", "set_formula", "list_sheets",
    "get_sheet_info", "list_files", "create_sheet", "rename_sheet", "delete_sheet",
    "insert_rows", "delete_rows", "clear_range", "find_cells", "recalculate",
    "complete_task", "execute_python", "execute_shell",
}
F = {"file_path": "cash_flows.ods", "sheet_name": "Sheet1"}


def check(cond, what):
    if not cond:
        raise AssertionError(what)


async def ok(session, name, args):
    r = await session.call_tool(name, args)
    text = r.content[0].text if r.content else ""
    check(not r.is_error, f"{name}{args} failed: {text}")
    check(r.structured_content is not None, f"{name}: no structuredContent")
    return r.structured_content


async def exercise(session, label):
    await session.send_ping()
    tools = (await session.list_tools()).tools
    names = {t.name for t in tools}
    check(EXPECTED_TOOLS <= names, f"{label}: missing tools {EXPECTED_TOOLS - names}")
    for t in tools:
        check(t.annotations is not None, f"{label}: {t.name} has no annotations")
        check(t.annotations.open_world_hint is False, f"{label}: {t.name} openWorldHint")

    s = await ok(session, "list_files", {})
    check("cash_flows.ods" in s["files"], f"{label}: list_files {s}")
    s = await ok(session, "list_sheets", {"file_path": "cash_flows.ods"})
    check([x["name"] for x in s["sheets"]] == ["Sheet1"], f"{label}: list_sheets {s}")
    s = await ok(session, "get_sheet_info", F)
    check(s["row_count"] == 101 and s["headers"][:3] == ["Period", "Cash_Flow_Amount", "Rate_Point"],
          f"{label}: get_sheet_info {s}")
    s = await ok(session, "read_cell", {**F, "cell_reference": "B2"})
    check(abs(s["value"] - 257624.09) < 1e-6, f"{label}: read_cell {s}")
    s = await ok(session, "read_range", {**F, "start_cell": "A1", "end_cell": "C2"})
    check(s["values"][1][0] == 1, f"{label}: read_range {s}")
    s = await ok(session, "write_cell", {**F, "cell_reference": "D1", "value": "Required_Reserve"})
    check(s["success"], f"{label}: write_cell {s}")
    s = await ok(session, "write_range", {**F, "start_cell": "E1", "values": [[1, 2.5, True, "x"]]})
    check(s["cells_written"] == 4, f"{label}: write_range {s}")
    s = await ok(session, "set_formula", {**F, "cell_reference": "D2", "formula": "=B2*C2"})
    check(s["formula"] == "=B2*C2", f"{label}: set_formula {s}")
    s = await ok(session, "read_range", {**F, "start_cell": "D1", "end_cell": "H2", "mode": "formulas"})
    check(s["values"][0] == ["Required_Reserve", 1, 2.5, True, "x"] and s["values"][1][0] == "=B2*C2",
          f"{label}: read back {s}")
    s = await ok(session, "clear_range", {**F, "start_cell": "E1", "end_cell": "H1"})
    check(s["cells_cleared"] == 4, f"{label}: clear_range {s}")
    s = await ok(session, "find_cells", {"file_path": "cash_flows.ods", "query": "Required"})
    check(s["count"] == 1, f"{label}: find_cells {s}")
    await ok(session, "create_sheet", {"file_path": "cash_flows.ods", "sheet_name": "Notes"})
    await ok(session, "rename_sheet", {"file_path": "cash_flows.ods", "sheet_name": "Notes", "new_name": "N"})
    await ok(session, "insert_rows", {"file_path": "cash_flows.ods", "sheet_name": "N", "row": 1})
    await ok(session, "delete_rows", {"file_path": "cash_flows.ods", "sheet_name": "N", "row": 1})
    s = await ok(session, "delete_sheet", {"file_path": "cash_flows.ods", "sheet_name": "N"})
    check(s["sheets"] == ["Sheet1"], f"{label}: delete_sheet {s}")
    s = await ok(session, "execute_python", {"code": "print(6*7)"})
    check(s["stdout"] == "42\n" and s["exit_code"] == 0, f"{label}: execute_python {s}")
    s = await ok(session, "execute_shell", {"command": "ls"})
    check("cash_flows.ods" in s["stdout"], f"{label}: execute_shell {s}")
    s = await ok(session, "get_task_status", {})
    check(s["status"] == "running" and "cash_flows.ods" in s["files_modified"], f"{label}: status {s}")
    if shutil.which("soffice"):
        s = await ok(session, "recalculate", {"file_path": "cash_flows.ods"})
        check(s["formulas"] == 1 and s["formulas_with_values"] == 1, f"{label}: recalculate {s}")
        s = await ok(session, "read_cell", {**F, "cell_reference": "D2"})
        check(abs(s["value"] - 257624.09 * 0.1031) < 1e-6, f"{label}: recalculated value {s}")

    # A tool failure is a result with isError, not a protocol error.
    r = await session.call_tool("read_cell", {"file_path": "cash_flows.ods", "sheet_name": "BadSheet",
                                              "cell_reference": "A1"})
    check(r.is_error and r.content[0].text == "Sheet 'BadSheet' not found", f"{label}: isError {r}")
    r = await session.call_tool("read_cell", {"file_path": "cash_flows.ods"})
    check(r.is_error and "cell_reference" in r.content[0].text, f"{label}: validation {r}")

    # Resources: the workspace files.
    res = (await session.list_resources()).resources
    ods = [x for x in res if str(x.uri).endswith("cash_flows.ods")]
    check(ods, f"{label}: resources {res}")
    rr = await session.read_resource(ods[0].uri)
    data = base64.b64decode(rr.contents[0].blob)
    check(data[:2] == b"PK", f"{label}: resource is not the ODS")

    # Progress notifications during a long call.
    seen = []

    async def on_progress(progress, total, message):
        seen.append(progress)

    s = (await session.call_tool("execute_python", {"code": "import time; time.sleep(2.5); print('done')"},
                                 progress_callback=on_progress)).structured_content
    check(s["stdout"] == "done\n", f"{label}: slow call {s}")
    print(f"{label}: ok ({len(tools)} tools, {len(seen)} progress notifications)")
    return seen


async def over_stdio(ws):
    params = StdioServerParameters(command=h.SERVER, args=["--workspace", ws, "--stdio"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(init.server_info.name == "sandbox-mcp", "stdio: serverInfo")
            seen = await exercise(session, "stdio")
            check(len(seen) >= 1, "stdio: no progress notifications")
            s = await ok(session, "complete_task", {"summary": "done"})
            check(s["status"] == "completed" and s["success"], f"stdio: complete_task {s}")
            r = await session.call_tool("write_cell", {**F, "cell_reference": "A1", "value": 1})
            check(r.is_error, "stdio: writes refused after completion")


async def over_streamable_http(base):
    async with streamable_http_client(base + "/mcp") as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            seen = await exercise(session, "streamable-http")
            check(len(seen) >= 1, "streamable-http: no progress notifications over SSE")


async def over_auto_client(base):
    """mcp.Client in its default mode probes server/discover first, then falls back."""
    from mcp import Client

    async with Client(base + "/mcp") as client:
        tools = await client.list_tools()
        check(len(tools.tools) >= len(EXPECTED_TOOLS), "auto client: tools")
        r = await client.call_tool("read_cell", {**F, "cell_reference": "A1"})
        check(not r.is_error and r.structured_content["value"] == "Period", f"auto client: {r}")
    print("auto-negotiating Client: ok")


async def over_sse(base):
    async with sse_client(base + "/mcp/sse") as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await exercise(session, "legacy-sse")


async def main():
    with h.workspace() as ws:
        await over_stdio(ws)
    with h.workspace() as ws, h.http_server(ws) as (base, _):
        await over_streamable_http(base)
    with h.workspace() as ws, h.http_server(ws) as (base, _):
        await over_auto_client(base)
    with h.workspace() as ws, h.http_server(ws) as (base, _):
        await over_sse(base)


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(), 240))

# SPDX-License-Identifier: MIT
"""MCP 2026-07-28 through sandboxctl's relay, to a real sandbox on the engine.

relay: an outside-agent run; the official SDK 2.3.0 Client in its default
  mode negotiates 2026-07-28 through the relay (the routing headers and the
  envelope pass, no session id), lists and calls tools and completes the
  task; the relay still refuses the /control paths (403) and a token that is
  not the run's (401) to a request in either revision; the transcript records
  each MCP message's revision.
stdio: `sandboxctl mcp` (its stdio bridge to the relay) with the SDK Client
  in its default mode over stdio: 2026-07-28 as well, and legacy when forced.

Usage: test_mcp2026_relay.py relay|stdio
"""
import asyncio
import json
import os
import subprocess
import sys
import time

import requests

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import test_integration as it  # noqa: E402

from mcp import Client, StdioServerParameters  # noqa: E402

V = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": V, "io.modelcontextprotocol/clientCapabilities": {}}


def check(cond, what):
    if not cond:
        it.fail(what)


def modern(url, method, params=None):
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**(params or {}), "_meta": ENVELOPE}}
    return requests.post(url, data=json.dumps(body), timeout=30, headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": V, "Mcp-Method": method})


def legacy(url, method):
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {}}
    return requests.post(url, data=json.dumps(body), timeout=30, headers={"Content-Type": "application/json"})


def image():
    """This tree's image: with real images, the one whose content hash is this tree's (made
    if missing, as the image-build test would), not whichever :latest another tree tagged last."""
    if os.environ.get("SBX_RUN_TEST_IMAGE") != "real":
        return it.pick_image()
    p = subprocess.run([it.SANDBOXCTL, "build", "--slim", "--quiet"], capture_output=True, text=True,
                       timeout=900)
    check(p.returncode == 0 and p.stdout.strip(), f"sandboxctl build --slim: {p.stderr[-400:]}")
    return p.stdout.split()[0]


def case_relay(env):
    p, rid, url = it.start_background(env, "mcp2026", image=image())

    # The relay's refusals hold whatever revision a request speaks.
    base, token = url.rsplit("/", 1)
    other = base + "/" + ("A" if token[0] != "A" else "B") + token[1:]
    for send in (modern, legacy):
        r = send(url + "/control/status", "tools/list")
        check(r.status_code == 403, f"{send.__name__}: /control through the relay: {r.status_code}")
        r = send(url + "/Control/../control/complete", "tools/list")
        check(r.status_code in (403, 404), f"{send.__name__}: a dotted /control: {r.status_code}")
        r = send(other + "/mcp", "tools/list")
        check(r.status_code == 401, f"{send.__name__}: a token not the run's: {r.status_code}")
    r = modern(url + "/mcp", "server/discover")
    check(r.status_code == 200 and r.json()["result"]["supportedVersions"] == [V], f"discover: {r.text}")
    check("Mcp-Session-Id" not in r.headers, "a session id at 2026-07-28 through the relay")

    async def sdk():
        async with Client(url + "/mcp") as c:
            check(c.protocol_version == V, f"SDK through the relay negotiated {c.protocol_version}")
            names = [t.name for t in (await c.list_tools()).tools]
            check("list_files" in names, f"tools: {names}")
            r = await c.call_tool("list_files", {})
            check(not r.is_error and "cash_flows.ods" in json.dumps(r.structured_content), f"list_files: {r}")
            r = await c.call_tool("read_cell", {"file_path": "nope.ods", "cell_reference": "A1"})
            check(r.is_error, f"an isError result through the relay: {r}")
            await c.call_tool("complete_task", {"summary": "2026-07-28 through the relay"})

    asyncio.run(sdk())
    code = p.wait(timeout=60)
    res = json.loads(it.read(os.path.join(env.runs, rid, "result.json")))
    check(res["ended_by"] == "complete_task", f"complete_task at {V} did not end the run: {code} {res}")
    check(res["relay"]["forbidden"] >= 4, f"relay.forbidden: {res['relay']}")
    lines = it.transcript(os.path.join(env.runs, rid))
    mcp = [l for l in lines if l.get("path") == "/mcp"]
    check(mcp and all(l.get("mcp_version") == V for l in mcp if "message" in l),
          "transcript: an /mcp message without its revision: %s" %
          [l for l in mcp if l.get("mcp_version") != V and "message" in l][:2])
    check({l["dir"] for l in mcp} == {"agent->server", "server->agent"}, "transcript: both directions")
    it.check_gone(rid)
    print("  SDK Client at %s through the relay; /control 403, foreign token 401 in both revisions; "
          "transcript: %d /mcp lines with their revision" % (V, len(mcp)))


def case_stdio(env):
    ref = image()

    def params(rid):
        return StdioServerParameters(command=it.SANDBOXCTL, args=[
            "mcp", "--task", "banking_reserve", "--tasks-dir", it.TASKS, "--image", ref,
            "--runs-dir", env.runs, "--run-id", rid, "--test-label"])

    async def session(rid, mode):
        async with Client(params(rid), mode=mode) as c:
            version = c.protocol_version
            names = [t.name for t in (await c.list_tools()).tools]
            r = await c.call_tool("read_cell", {"file_path": "cash_flows.ods", "cell_reference": "A1"})
            await c.call_tool("complete_task", {})
            return version, names, r

    for mode, want in (("auto", V), ("legacy", "2025-11-25")):
        rid = env.new_id("mcp2026-" + mode)
        version, names, r = asyncio.run(session(rid, mode))
        check(version == want, f"sandboxctl mcp, mode {mode}: negotiated {version}")
        check("read_range" in names and not r.is_error, f"mode {mode}: {names} {r}")
        for _ in range(100):
            if os.path.exists(os.path.join(env.runs, rid, "result.json")):
                break
            time.sleep(0.1)
        res = json.loads(it.read(os.path.join(env.runs, rid, "result.json")))
        check(res["ended_by"] == "complete_task", f"mode {mode}: {res}")
        lines = it.transcript(os.path.join(env.runs, rid))
        check(any(l.get("mcp_version") == want for l in lines), f"mode {mode}: transcript without {want}")
        it.check_gone(rid)
    # A hostile client on the bridge: a tool name carrying CR LF cannot add a header to the
    # relayed request (it travels base64'd in Mcp-Name) and gets one precise error.
    rid = env.new_id("mcp2026-hostile")
    p = subprocess.Popen([params(rid).command] + params(rid).args, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    env.procs.append(p)
    evil = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "read_cell\r\nMcp-Name: list_files\r\nX: y", "arguments": {}, "_meta": ENVELOPE}}
    p.stdin.write(json.dumps(evil) + "\n")
    p.stdin.flush()
    answer = json.loads(p.stdout.readline())
    check(answer["id"] == 7 and answer["error"]["code"] == -32602 and "Unknown tool" in answer["error"]["message"],
          f"a CR LF tool name through the bridge: {answer}")
    p.stdin.close()
    p.wait(timeout=60)
    it.check_gone(rid)
    print("  sandboxctl mcp over stdio: %s by default, 2025-11-25 forced; a CR LF name: -32602" % V)


if __name__ == "__main__":
    it.run_case({"relay": case_relay, "stdio": case_stdio}, alarm_s=280)

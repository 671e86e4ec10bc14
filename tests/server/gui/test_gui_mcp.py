# SPDX-License-Identifier: MIT
"""The GUI tools through the real sandbox-mcp binary, with the official MCP
Python SDK as the client over stdio, on a private Xvfb: the tools are
listed with schemas and annotations, a screenshot arrives as PNG image
content, pointer tools and the Anthropic-style computer tool work, bad
coordinates are isError results, and a server without a display answers
"No display available" instead of failing."""

import asyncio
import base64
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SERVER = os.environ["SANDBOX_MCP"]
GUI_TOOLS = {
    "take_screenshot", "click", "double_click", "right_click", "type_text", "key_press",
    "mouse_move", "drag", "get_cursor_position", "scroll", "computer",
}


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def start_xvfb():
    r, w = os.pipe()
    proc = subprocess.Popen(
        ["Xvfb", "-displayfd", str(w), "-screen", "0", "1280x720x24", "-nolisten", "tcp",
         "-noreset"], pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    with os.fdopen(r) as f:
        number = f.readline().strip()
    check(number.isdigit(), "Xvfb did not report a display")
    return proc, ":" + number


def png_size(data):
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG")
    return struct.unpack(">II", data[16:24])


async def call(session, name, args=None, error=False):
    r = await session.call_tool(name, args or {})
    text = r.content[0].text if r.content and r.content[0].type == "text" else ""
    if error:
        check(r.is_error, f"{name}{args}: expected an error, got {r.structured_content}")
        return " ".join(c.text for c in r.content if c.type == "text")
    check(not r.is_error, f"{name}{args} failed: {text}")
    check(r.structured_content is not None, f"{name}: no structuredContent")
    return r


async def with_display(ws, display):
    params = StdioServerParameters(command=SERVER, args=["--workspace", ws, "--display", display])
    async with stdio_client(params) as (rd, wr), ClientSession(rd, wr) as session:
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}
        check(GUI_TOOLS <= set(tools), f"missing GUI tools: {GUI_TOOLS - set(tools)}")
        for name in GUI_TOOLS:
            t = tools[name]
            check(t.input_schema.get("additionalProperties") is False, f"{name}: open schema")
            check(t.output_schema is not None, f"{name}: no outputSchema")
            check(t.annotations is not None, f"{name}: no annotations")
        check(tools["take_screenshot"].annotations.read_only_hint is True, "screenshot readOnly")

        r = await call(session, "take_screenshot")
        images = [c for c in r.content if c.type == "image"]
        check(len(images) == 1 and images[0].mime_type == "image/png", "no PNG image content")
        check(png_size(base64.b64decode(images[0].data)) == (1280, 720), "screenshot size")
        check(r.structured_content["width"] == 1280, "width")
        check(png_size(base64.b64decode(r.structured_content["image_base64"])) == (1280, 720),
              "image_base64")

        await call(session, "mouse_move", {"x": 321, "y": 123})
        pos = (await call(session, "get_cursor_position")).structured_content
        check((pos["x"], pos["y"]) == (321, 123), f"cursor at {pos}")

        r = await call(session, "computer", {"action": "left_click", "coordinate": [640, 360]})
        check(r.structured_content["success"] is True, "computer left_click")
        check(any(c.type == "image" for c in r.content), "no screenshot after left_click")
        pos = (await call(session, "computer", {"action": "cursor_position"})).structured_content
        check((pos["x"], pos["y"]) == (640, 360), f"computer cursor at {pos}")
        r = await call(session, "computer", {"action": "zoom", "region": [0, 0, 320, 200]})
        images = [c for c in r.content if c.type == "image"]
        check(png_size(base64.b64decode(images[0].data)) == (320, 200), "zoom size")
        await call(session, "key_press", {"key": "ctrl+s"})
        await call(session, "type_text", {"text": "héllo €"})
        await call(session, "scroll", {"x": 10, "y": 10, "direction": "down", "amount": 2})

        msg = await call(session, "click", {"x": 5000, "y": 10}, error=True)
        check("outside the screen" in msg, f"off-screen click: {msg}")
        msg = await call(session, "key_press", {"key": "ctrl+Nope"}, error=True)
        check("Unknown key 'Nope'" in msg, f"bad key: {msg}")
        msg = await call(session, "computer", {"action": "fly"}, error=True)
        check("action" in msg, f"bad action: {msg}")


async def without_display(ws):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    params = StdioServerParameters(command=SERVER, args=["--workspace", ws], env=env)
    async with stdio_client(params) as (rd, wr), ClientSession(rd, wr) as session:
        await session.initialize()
        msg = await call(session, "take_screenshot", error=True)
        check("No display available" in msg, f"no display: {msg}")
        msg = await call(session, "computer", {"action": "screenshot"}, error=True)
        check("No display available" in msg, f"no display (computer): {msg}")


def main():
    ws = tempfile.mkdtemp(prefix="sbx-gui-mcp-")
    xvfb, display = start_xvfb()
    try:
        asyncio.run(asyncio.wait_for(with_display(ws, display), 120))
        asyncio.run(asyncio.wait_for(without_display(ws), 60))
    finally:
        xvfb.send_signal(signal.SIGTERM)
        xvfb.wait(timeout=10)
        shutil.rmtree(ws, ignore_errors=True)
    print("gui tools over MCP stdio: ok")


if __name__ == "__main__":
    sys.exit(main())

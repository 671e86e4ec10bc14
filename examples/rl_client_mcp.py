#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""N episodes of `sandboxctl serve` at once with asyncio and the official MCP
Python SDK (pip install mcp): each claims an episode (rl_client.Episode),
connects to its mcp_url, lists the workspace, calls complete_task, and prints
the reward finish() returns. A policy being trained would act between.

    sandboxctl serve --pool 4 > url.txt &
    python3 examples/rl_client_mcp.py "$(head -1 url.txt)" banking_reserve 4
"""
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rl_client import Episode  # noqa: E402

from mcp import ClientSession  # noqa: E402
from mcp.client import streamable_http  # noqa: E402

connect = (getattr(streamable_http, "streamable_http_client", None) or
           getattr(streamable_http, "streamablehttp_client"))


async def episode(url, task, i):
    ep = Episode(url)
    prompt, mcp_url = await asyncio.to_thread(ep.reset, task, None, None, {"worker": i})
    async with connect(mcp_url) as streams:
        async with ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            await s.call_tool("list_files", {})
            # ... the policy reads `prompt` and calls tools here ...
            await s.call_tool("complete_task", {"summary": "episode %d" % i})
    reward = await asyncio.to_thread(ep.finish)
    return i, reward, ep.result["status"], ep.info["warm"]


async def main():
    url, task = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "banking_reserve"
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    for i, reward, status, warm in await asyncio.gather(*(episode(url, task, i) for i in range(n))):
        print("episode %d: reward %s (%s)%s" % (i, reward, status, " warm" if warm else ""))


if __name__ == "__main__":
    asyncio.run(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""N episodes of `sandboxctl serve` at once with asyncio and the official MCP
Python SDK (pip install mcp ./python): each claims an episode (sandboxctl.AsyncClient),
connects to its mcp_url, lists the workspace, calls complete_task, and prints
the reward finish() returns. A policy being trained would act between.

    sandboxctl serve --pool 4 > url.txt &
    python3 examples/rl_client_mcp.py "$(head -1 url.txt)" banking_reserve 4
"""
import asyncio
import sys

from mcp import ClientSession
from mcp.client import streamable_http
from sandboxctl import AsyncClient

connect = (getattr(streamable_http, "streamable_http_client", None) or
           getattr(streamable_http, "streamablehttp_client"))


async def episode(client, task, i):
    ep = await client.claim(task, tags={"worker": i})
    async with connect(ep.mcp_url) as streams:
        async with ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            await s.call_tool("list_files", {})
            # ... the policy reads ep.prompt and calls tools here ...
            await s.call_tool("complete_task", {"summary": "episode %d" % i})
    result = await client.finish(ep)
    return i, result["reward"], result["status"], ep.warm


async def main():
    url, task = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "banking_reserve"
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    async with AsyncClient(url) as client:
        results = await asyncio.gather(*(episode(client, task, i) for i in range(n)))
    for i, reward, status, warm in results:
        print("episode %d: reward %s (%s)%s" % (i, reward, status, " warm" if warm else ""))


if __name__ == "__main__":
    asyncio.run(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An agent on the official MCP Python SDK (pip install mcp), to copy from.

    sandboxctl run --task sales_revenue --agent 'python3 examples/python_agent.py'

`sandboxctl run` starts it on the host with the sandbox's endpoint in
SANDBOX_MCP_URL and the task in SANDBOX_TASK / SANDBOX_TASK_PROMPT. It:

1. connects over Streamable HTTP and lists the tools;
2. reads the prompt: a resource whose URI or name says "prompt" when the
   server offers one, else SANDBOX_TASK_PROMPT (and it lists the workspace
   files, which the server offers as resources);
3. solves the task with tools (read_range, write_range, ...): here a small
   scripted solver per task, where a real agent would ask a model;
4. calls complete_task, which ends the episode; the run then grades the
   saved outputs.

Exit status 0 when it called complete_task, 1 when it has no solver or a
tool failed (the run records that as agent_error).
"""
import asyncio
import json
import os
import sys

from mcp import ClientSession

try:  # the SDK renamed the client in 1.2x; accept both
    from mcp.client.streamable_http import streamable_http_client as connect
except ImportError:
    from mcp.client.streamable_http import streamablehttp_client as connect


def log(*a):
    print("python-agent:", *a, file=sys.stderr, flush=True)


class Tools:
    """tools/call with the structured result (or the JSON in the text content)."""

    def __init__(self, session):
        self.s = session

    async def __call__(self, name, **args):
        res = await self.s.call_tool(name, args)
        text = res.content[0].text if res.content else ""
        # Field names: camelCase before SDK 2, snake_case after.
        if getattr(res, "is_error", None) or getattr(res, "isError", None):
            raise RuntimeError("%s: %s" % (name, text))
        structured = getattr(res, "structured_content", None) or \
            getattr(res, "structuredContent", None)
        if structured:
            return structured
        return json.loads(text) if text[:1] in "[{" else {"text": text}

    async def rows(self, file, sheet, start, end):
        return (await self("read_range", file_path=file, sheet_name=sheet, start_cell=start,
                           end_cell=end))["values"]

    async def column(self, file, sheet, cell, header, values):
        await self("write_range", file_path=file, sheet_name=sheet, start_cell=cell,
                   values=[[header]] + [[v] for v in values])


def round2(x):
    """Halves away from zero, as the prompts say (Python's round() goes to even)."""
    from decimal import ROUND_HALF_UP, Decimal
    return float(Decimal(repr(x)).quantize(Decimal("0.01"), ROUND_HALF_UP))


async def sales_revenue(t):
    f, s = "sales_data.ods", "Sheet1"
    n = (await t("get_sheet_info", file_path=f, sheet_name=s))["row_count"]
    rows = await t.rows(f, s, "C2", "D%d" % n)
    await t.column(f, s, "E1", "Revenue", [round2(q * p) for q, p in rows])
    return "Revenue for %d lines" % (n - 1)


async def banking_reserve(t):
    f, s = "cash_flows.ods", "Sheet1"
    rows = await t.rows(f, s, "A2", "C101")
    known = {int(p): r for p, _, r in rows if r not in (None, "")}
    out = []
    for period, cf, _ in rows:
        p = int(period)
        lo = max(k for k in known if k <= p)
        hi = min(k for k in known if k >= p)
        rate = known[p] if p in known else \
            known[lo] + (known[hi] - known[lo]) * (p - lo) / (hi - lo)
        out.append(round2(cf * rate))
    await t.column(f, s, "D1", "Required_Reserve", out)
    return "reserves for %d periods" % len(out)


async def price_lookup(t):
    f = "orders.ods"
    prices = {sku: p for sku, _, p in await t.rows(f, "Prices", "A2", "C26")}
    orders = await t.rows(f, "Orders", "A2", "C61")
    await t.column(f, "Orders", "D1", "Unit_Price", [prices[sku] for _, sku, _ in orders])
    await t.column(f, "Orders", "E1", "Line_Total",
                   [round2(q * prices[sku]) for _, sku, q in orders])
    return "prices for %d orders" % len(orders)


SOLVERS = {"sales_revenue": sales_revenue, "banking_reserve": banking_reserve,
           "price_lookup": price_lookup}


async def read_prompt(session):
    """The prompt resource when the server has one, else the environment's copy."""
    resources = (await session.list_resources()).resources
    log("%d resources: %s" % (len(resources), ", ".join(str(r.uri) for r in resources[:8])))
    for r in resources:
        if "prompt" in str(r.uri).lower() or "prompt" in (r.name or "").lower():
            res = await session.read_resource(r.uri)
            return res.contents[0].text
    return os.environ.get("SANDBOX_TASK_PROMPT", "")


async def main():
    url = os.environ["SANDBOX_MCP_URL"]
    task = os.environ.get("SANDBOX_TASK", "")
    async with connect(url) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            tools = [x.name for x in (await session.list_tools()).tools]
            log("%d tools: %s" % (len(tools), ", ".join(tools)))
            prompt = await read_prompt(session)
            log("task %s, prompt: %s" % (task, prompt.splitlines()[0] if prompt else "(none)"))
            t = Tools(session)
            solver = SOLVERS.get(task)
            if not solver:
                log("no solver for task '%s' (a model would go here)" % task)
                return 1
            summary = await solver(t)
            await t("complete_task", summary=summary)
            log("complete_task:", summary)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

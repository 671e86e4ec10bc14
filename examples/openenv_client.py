#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One episode of a task through `sandboxctl serve`'s OpenEnv adapter with
openenv-core's own client (pip install openenv-core): reset claims it, a step
lists the tools, complete_task ends it and the step answers done and the
grade's score as reward (0 here: nothing was solved).

    sandboxctl serve --pool 1 > url.txt &
    python3 examples/openenv_client.py "$(head -1 url.txt)" banking_reserve
"""
import sys

from openenv.core.generic_client import GenericEnvClient

url, task = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "banking_reserve"
with GenericEnvClient(base_url=f"{url}/openenv/{task}").sync() as env:
    obs = env.reset(seed=7).observation
    print("prompt:", obs["prompt"].splitlines()[0])
    tools = env.step({"type": "list_tools"}).observation["tools"]
    print("tools:", ", ".join(t["name"] for t in tools))
    r = env.step({"type": "call_tool", "tool_name": "complete_task", "arguments": {"summary": "done"}})
    print("done:", r.done, "reward:", r.reward)

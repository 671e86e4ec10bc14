#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""N episodes of `sandboxctl serve` at once on the Python client (python/:
pip install ./python): claim, act, finish returns the reward.

    sandboxctl serve --pool 4 > url.txt &
    python3 examples/rl_client.py "$(head -1 url.txt)" banking_reserve 8

Each episode here only completes the task at once (reward 0); a policy would
call tools on episode.mcp_url (any MCP client) before it ends.
"""
import concurrent.futures
import sys

from sandboxctl import Client


def one(client, task, i):
    with client.episode(task, tags={"worker": i}) as ep:  # finished (graded) on exit
        client.rest(ep, "POST", "/task/complete", {})
    return i, ep.reward, ep.result["status"], ep.claim_ms, ep.warm


def main():
    url, task = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "banking_reserve"
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    with Client(url) as client, concurrent.futures.ThreadPoolExecutor(max_workers=min(n, 8)) as ex:
        for i, reward, status, claim_ms, warm in ex.map(lambda i: one(client, task, i), range(n)):
            print("episode %d: reward %s (%s), claim %s ms%s" % (i, reward, status, claim_ms,
                                                                  " warm" if warm else ""))


if __name__ == "__main__":
    main()

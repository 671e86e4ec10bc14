#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A minimal client of `sandboxctl serve` (stdlib only): reset() claims an
episode, finish() returns the reward. Run N episodes concurrently:

    sandboxctl serve --pool 4 > url.txt &
    python3 examples/rl_client.py "$(head -1 url.txt)" banking_reserve 8

Each episode here only calls complete_task (reward 0); a real agent would use
the MCP URL (mcp_url) with any MCP client before finish().
"""
import concurrent.futures
import http.client
import json
import sys
import urllib.parse


def _call(url, method, path, body=None):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    c.request(method, u.path.rstrip("/") + path, body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = json.loads(r.read() or b"{}")
    c.close()
    if r.status >= 300:
        raise RuntimeError("%s %s: HTTP %d %s" % (method, path, r.status, data.get("error")))
    return data


class Episode:
    def __init__(self, service_url):
        self.service = service_url
        self.id = None
        self.info = None

    def reset(self, task, seed=None, timeout=None, tags=None):
        """Claims an episode: returns (prompt, mcp_url)."""
        body = {"task": task}
        for k, v in (("seed", seed), ("timeout", timeout), ("tags", tags)):
            if v is not None:
                body[k] = v
        self.info = _call(self.service, "POST", "/v1/episodes", body)
        self.id = self.info["id"]
        return self.info["prompt"], self.info["mcp_url"]

    def finish(self):
        """Collects, grades and removes the sandbox: returns the reward (0..1)."""
        self.result = _call(self.service, "POST", "/v1/episodes/%s/finish" % self.id)
        return self.result["reward"]


def one(url, task, i):
    ep = Episode(url)
    prompt, mcp_url = ep.reset(task, tags={"worker": i})
    _call(ep.info["rest_url"], "POST", "/task/complete", {})
    return i, ep.finish(), ep.result["status"], ep.info["claim_ms"], ep.info["warm"]


def main():
    url, task = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "banking_reserve"
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(n, 8)) as ex:
        for i, reward, status, claim_ms, warm in ex.map(lambda i: one(url, task, i), range(n)):
            print("episode %d: reward %s (%s), claim %s ms%s" %
                  (i, reward, status, claim_ms, " warm" if warm else ""))


if __name__ == "__main__":
    main()

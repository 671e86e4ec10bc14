#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The agent inherits nothing of sandboxctl but stdin, stdout and stderr.

A real run whose host-side agent lists its own descriptors (and its
supervisor's) before calling complete_task. The agent must hold exactly
0, 1 and 2; the supervisor between them those and its lifeline pipe, no
socket (the engine connection, the relay's streams), nothing else; the
environment must carry the run's URLs. Usage: test_agent_fds.py
"""
import json
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import test_integration as it  # noqa: E402

# The supervisor is the shell's parent; the agent's own table is listed by
# the agent process itself (exec), leaving out ls's directory descriptor.
AGENT = r"""
case "$SANDBOX_MCP_URL" in http://127.0.0.1:*/mcp) ;; *) echo "bad SANDBOX_MCP_URL"; exit 3;; esac
curl -sf -X POST -H 'Content-Type: application/json' -d '{}' "$SANDBOX_REST_URL/task/complete" >/dev/null
echo '--- supervisor'
ls -l /proc/$PPID/fd
echo '--- agent'
exec ls -l /proc/self/fd
"""


def tables(log):
    out, cur = {}, None
    for line in log.splitlines():
        if line.startswith("--- "):
            cur = out.setdefault(line[4:], {})
        elif cur is not None and " -> " in line:
            left, _, target = line.partition(" -> ")
            if not target.startswith("/proc/"):  # ls's own opendir
                cur[int(left.split()[-1])] = target
    return out


def main():
    signal.alarm(200)
    it.ensure_dev_image()
    env = it.Env()
    try:
        code, res, rdir, err = env.run("sales_revenue", "fds", "--agent", AGENT, timeout=180)
        log = it.read(os.path.join(rdir, "agent.log"))
        if res["ended_by"] != "complete_task" or res["agent"]["exit_code"] != 0:
            it.fail("the fd-listing agent did not complete: %s\n%s\n%s" % (res, err, log))
        t = tables(log)
        agent, sup = t.get("agent", {}), t.get("supervisor", {})
        if sorted(agent) != [0, 1, 2]:
            it.fail("the agent holds fds %s, want only 0, 1, 2:\n%s" % (sorted(agent), log))
        extra = {fd: v for fd, v in sup.items() if fd > 2}
        if len(extra) != 1 or any(not v.startswith("pipe:") for v in extra.values()):
            it.fail("the supervisor holds more than its lifeline pipe:\n%s" % log)
        if any(v.startswith("socket:") for v in list(agent.values()) + list(sup.values())):
            it.fail("a socket reached the agent's side:\n%s" % log)
        it.check_gone(res["run_id"])
        print("ok: agent fds %s, supervisor fds %s" % (sorted(agent), sorted(sup)))
    finally:
        env.cleanup()


if __name__ == "__main__":
    it.run_main(main)

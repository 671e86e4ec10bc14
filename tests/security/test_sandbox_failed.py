#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A sandbox that fails after it was ready is the attempt's outcome, not ours.

died: the server dies two seconds into the episode (an impostor image whose
main program answers the readiness probe, then exits): the run must end as
sandbox_failed (exit 6), with the error kind saying the sandbox died, never
infra_error (which a sweep retries as the host's fault). The same death
before the server ever answered stays infra_error: that is the image's.

oom: tool code fills the workspace (a tmpfs, charged to the sandbox's
memory) up to a 128 MiB --memory, its own dd killed first (tool code's oom
score is the higher); the server's next allocation, answering complete_task,
gets it OOM-killed: sandbox_failed, kind oom, exit 6.

outputs: tool code writes the task's output at 300 MB, past the 256 MiB a
copied-out file may have: sandbox_failed, kind outputs_too_large, exit 6.
At 20 MB (over the server's 16 MiB for a resource, under the copy-out cap)
the output is collected whole and graded, never reported "not found".
Usage: test_sandbox_failed.py died|oom|outputs
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import test_integration as it  # noqa: E402
import impostor  # noqa: E402

IMAGE = "sandboxctl-test/server-dies:latest"
DIES = r'''
def SERVE(c, target):
    body = b'{"status":"running"}'
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
threading.Timer(2.0, lambda: os._exit(9)).start()
'''
NEVER_READY = "sandboxctl-test/never-ready:latest"

# An agent (on the host) that runs each argument as an execute_shell call,
# then complete_task, and says what each answered on stderr.
AGENT = r'''
import json, os, sys, urllib.request
rest = os.environ["SANDBOX_REST_URL"]
def post(path, body):
    req = urllib.request.Request(rest + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read()[:200]
    except Exception as e:
        return "error", str(e)[:200]
for cmd in sys.argv[1:]:
    print(post("/tools/call", {"tool_name": "execute_shell", "arguments": {"command": cmd}}),
          file=sys.stderr)
print(post("/task/complete", {}), file=sys.stderr)
'''


def shell_agent(env, *commands):
    path = os.path.join(env.dir, "agent.py")
    with open(path, "w") as f:
        f.write(AGENT)
    return " ".join(["python3", path] + ["'%s'" % c for c in commands])


def expect_failed(code, res, err, kind, what):
    if code != 6 or res["status"] != "sandbox_failed" or res["error"]["kind"] != kind or \
            res["outcome"] != "agent":
        it.fail("%s: want sandbox_failed/%s, exit 6, outcome agent: exit %d %s\n%s" %
                (what, kind, code, res, err))
    it.check_gone(res["run_id"])
    print("ok: %s: %s/%s (exit %d): %s" % (what, res["status"], kind, code,
                                           res["error"]["message"][:160]))


def case_died(env):
    try:
        impostor.build(IMAGE, DIES)
        code, res, _, err = env.run("sales_revenue", "dies", "--image", IMAGE, "--timeout", "60",
                                    "--agent", "sleep 300", timeout=120)
        if res["ended_by"] != "sandbox_died":
            it.fail("a server that died mid-episode ended by %s" % res["ended_by"])
        expect_failed(code, res, err, "sandbox_died", "the server died after ready")
        # A server that dies before it ever answered: the image's fault, infra_error.
        impostor.build(NEVER_READY, DIES, extra="os._exit(9)\n")
        code2, res2, _, err2 = env.run("sales_revenue", "never", "--image", NEVER_READY,
                                       "--timeout", "60", "--agent", "sleep 300", timeout=120)
        if code2 != 3 or res2["status"] != "infra_error":
            it.fail("a server that never came up: exit %d %s\n%s" % (code2, res2, err2))
        it.check_gone(res2["run_id"])
        print("ok: dead before ready: %s (exit %d)" % (res2["status"], code2))
    finally:
        impostor.remove(IMAGE)
        impostor.remove(NEVER_READY)


def case_oom(env):
    agent = shell_agent(env, "head -c 15000000 /dev/urandom > /workspace/sales_data.ods; "
                             "dd if=/dev/zero of=/workspace/fill bs=1M count=400; echo filled")
    code, res, _, err = env.run("sales_revenue", "oom", "--memory", "128m", "--timeout", "60",
                                "--agent", agent, timeout=120)
    expect_failed(code, res, err, "oom", "tool code drove the server out of memory")


def case_outputs(env):
    agent = shell_agent(env, "head -c 300000000 /dev/zero > /workspace/sales_data.ods")
    code, res, _, err = env.run("sales_revenue", "outputs", "--timeout", "60", "--agent", agent,
                                timeout=180)
    expect_failed(code, res, err, "outputs_too_large", "a 300 MB output")
    # Over the server's resource cap, under the copy-out cap: collected, graded.
    agent = shell_agent(env, "head -c 20000000 /dev/zero > /workspace/sales_data.ods")
    code, res, rdir, err = env.run("sales_revenue", "output20", "--timeout", "60", "--agent",
                                   agent, timeout=180)
    got = os.path.join(rdir, "outputs", "sales_data.ods")
    size = os.path.getsize(got) if os.path.exists(got) else -1
    if res["status"] != "fail" or size != 20000000 or "not found" in it.read(
            os.path.join(rdir, "grade.txt")):
        it.fail("a 20 MB output: %s, outputs/sales_data.ods %d bytes\n%s" % (res, size, err))
    it.check_gone(res["run_id"])
    print("ok: a 20 MB output collected whole (%d bytes) and graded: %s" % (size, res["status"]))


CASES = {"died": case_died, "oom": case_oom, "outputs": case_outputs}


def main():
    # died: an impostor server in python3; oom, outputs: the real server's limits.
    it.need_real_image("an impostor server in python3 and the real server's limits")
    it.run_case(CASES)


if __name__ == "__main__":
    it.run_main(main)

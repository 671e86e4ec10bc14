#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A sandbox that fails after it was ready is the attempt's outcome, not ours.

The server dies two seconds into the episode (an impostor image whose main
program answers the readiness probe, then exits): the run must end as
sandbox_failed (exit 6), with the error kind saying the sandbox died, never
infra_error (which a sweep retries as the host's fault). The same death
before the server ever answered stays infra_error: that is the image's.
Usage: test_sandbox_failed.py
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


def main():
    it.ensure_dev_image()
    env = it.Env()
    try:
        impostor.build(IMAGE, DIES)
        code, res, _, err = env.run("sales_revenue", "dies", "--image", IMAGE, "--timeout", "60",
                                    "--agent", "sleep 300", timeout=120)
        if code != 6 or res["status"] != "sandbox_failed" or \
                res["error"]["kind"] != "sandbox_died" or res["ended_by"] != "sandbox_died":
            it.fail("a server that died mid-episode: exit %d %s\n%s" % (code, res, err))
        it.check_gone(res["run_id"])
        # A server that dies before it ever answered: the image's fault, infra_error.
        impostor.build(NEVER_READY, DIES, extra="os._exit(9)\n")
        code2, res2, _, err2 = env.run("sales_revenue", "never", "--image", NEVER_READY,
                                       "--timeout", "60", "--agent", "sleep 300", timeout=120)
        if code2 != 3 or res2["status"] != "infra_error":
            it.fail("a server that never came up: exit %d %s\n%s" % (code2, res2, err2))
        it.check_gone(res2["run_id"])
        print("ok: the server died after ready: %s (exit %d), %s" %
              (res["status"], code, res["error"]["message"]))
        print("ok: dead before ready: %s (exit %d)" % (res2["status"], code2))
    finally:
        env.cleanup()
        impostor.remove(IMAGE)
        impostor.remove(NEVER_READY)


if __name__ == "__main__":
    it.run_main(main)

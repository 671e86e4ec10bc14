#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A server that drips its answers cannot keep an episode alive.

The host enforces the run's deadline itself, whatever the server answers.
The sandbox's server is replaced by an impostor (an image whose main program
is a Python server on the same socket: what tool code could have planted
before tool code had a uid of its own) that answers /health at once and
drips every other answer, one byte every 3 s, forever. A run with a 6 s
deadline and an agent that never completes must end as `timeout` within
the deadline plus 5 s (it took 54.6 s for a 25 s run before the host
bounded its reads), outputs collected without the server.
Usage: test_status_drip.py
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import test_integration as it  # noqa: E402
import impostor  # noqa: E402

IMAGE = "sandboxctl-test/status-drip:latest"
TIMEOUT_S = 6
# Every answer but /health: a head that never ends, one byte every 3 s.
DRIP = r'''
def SERVE(c, target):
    for b in b"HTTP/1.1 200 OK\r\nX-Drip: " + b"a" * 100000:
        c.sendall(bytes([b]))
        time.sleep(3)
'''


def main():
    it.ensure_dev_image()
    env = it.Env()
    try:
        impostor.build(IMAGE, DRIP)
        t = time.monotonic()
        code, res, rdir, err = env.run("sales_revenue", "drip", "--image", IMAGE, "--timeout",
                                       str(TIMEOUT_S), "--agent", "sleep 300", timeout=120)
        took = time.monotonic() - t
        ready = (res.get("timings_ms") or {}).get("ready") or 0
        if res["status"] != "timeout" or res["ended_by"] != "deadline" or code != 4:
            it.fail("want status timeout by the deadline (exit 4): exit %d %s\n%s" %
                    (code, res, err))
        # The deadline counts from the start; the host may take 5 s past it, no more.
        limit = TIMEOUT_S + 5 + (res["timings_ms"].get("create") or 0) / 1000 + ready / 1000
        if took > limit:
            it.fail("the dripping server kept the run for %.1f s (deadline %d s)" %
                    (took, TIMEOUT_S))
        it.check_gone(res["run_id"])
        print("ok: a dripping server; the run ended by its %d s deadline in %.1f s (exit %d)" %
              (TIMEOUT_S, took, code))
    finally:
        env.cleanup()
        impostor.remove(IMAGE)


if __name__ == "__main__":
    it.run_main(main)

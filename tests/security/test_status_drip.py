#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A server that drips or garbles its answers cannot keep an episode alive.

The host enforces the run's deadline itself, whatever the server answers.
The sandbox's server is replaced by an impostor (an image whose main program
is a Python server on the same socket: what tool code could have planted
before tool code had a uid of its own) that answers /health at once and
every other request its way:

drip: one byte every 3 s, a head that never ends (it took 54.6 s for a 25 s
run before the host bounded its reads);
garbage: bytes that are no HTTP at all on one connection, a 200 whose body
is no JSON on the next, an endless binary head on the third, in turn.

A run with a 6 s deadline and an agent that never completes must end by its
deadline within 5 s, as the agent's outcome (timeout, exit 4), never
infra_error, outputs collected without the server.
Usage: test_status_drip.py drip|garbage
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import test_integration as it  # noqa: E402
import impostor  # noqa: E402

TIMEOUT_S = 6
# Every answer but /health: a head that never ends, one byte every 3 s.
DRIP = r'''
def SERVE(c, target):
    for b in b"HTTP/1.1 200 OK\r\nX-Drip: " + b"a" * 100000:
        c.sendall(bytes([b]))
        time.sleep(3)
'''
# Every answer but /health: garbage of three kinds, in turn, then a close.
GARBAGE = r'''
turn = [0]
def SERVE(c, target):
    k = turn[0] % 3
    turn[0] += 1
    if k == 0:
        c.sendall(os.urandom(4096))
    elif k == 1:
        body = os.urandom(512).replace(b"\r", b"").replace(b"\n", b"")
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    else:
        c.sendall(b"HTTP/1.1 200 OK\r\nX-Junk: " + os.urandom(65536))
        time.sleep(2)
    c.close()
    raise SystemExit
'''
SERVERS = {"drip": DRIP, "garbage": GARBAGE}


def check(env, case):
    image = "sandboxctl-test/status-%s:latest" % case
    try:
        impostor.build(image, SERVERS[case])
        t = time.monotonic()
        code, res, rdir, err = env.run("sales_revenue", case, "--image", image, "--timeout",
                                       str(TIMEOUT_S), "--agent", "sleep 300", timeout=120)
        took = time.monotonic() - t
        ready = (res.get("timings_ms") or {}).get("ready") or 0
        if res["status"] != "timeout" or res["ended_by"] != "deadline" or code != 4 or \
                res["outcome"] != "task":
            it.fail("%s: want status timeout by the deadline (exit 4): exit %d %s\n%s" %
                    (case, code, res, err))
        # The deadline counts from the start; the host may take 5 s past it, no more.
        limit = TIMEOUT_S + 5 + (res["timings_ms"].get("create") or 0) / 1000 + ready / 1000
        if took > limit:
            it.fail("the %s server kept the run for %.1f s (deadline %d s); timings %s\n%s" %
                    (case, took, TIMEOUT_S, res["timings_ms"], err))
        it.check_gone(res["run_id"])
        print("ok: a %s server; the run ended by its %d s deadline in %.1f s (exit %d)" %
              (case, TIMEOUT_S, took, code))
    finally:
        impostor.remove(image)


def main():
    it.need_real_image("an impostor server in python3")
    it.run_case({k: (lambda env, k=k: check(env, k)) for k in SERVERS})


if __name__ == "__main__":
    it.run_main(main)

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`serve` and `view` hold the slowloris the relay holds.

Any local user can connect to their loopback port without the token. Two
attacks, each with 300 connections (more than either server's slots: 256 and
64):
  half-open  each sends a request line and nothing more, and stays;
  drip       each then sends one more byte of its head every second.
While they are open, a real client with the token makes a request on a fresh
connection every 0.2 s: every one must be answered (200) within 5 s. The
dripping connections must be closed by the server within the head deadline
(10 s from the connect) plus 3 s, however fast they drip. Neither target
starts a sandbox (`serve` with no pool, `view` on an empty directory).
Usage: test_slowloris.py serve|view
"""
import http.client
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from itest import SANDBOXCTL, TASKS, fail, run_main  # noqa: E402

ATTACKERS = 300
HEAD_DEADLINE_S = 10
ANSWER_WITHIN_S = 5.0  # a loaded 2-core CI machine; on main: reset, or no answer for ~125 s


def start(target, tmp):
    """(process, host, port, the path prefix holding the token, a path that answers 200)."""
    if target == "serve":
        p = subprocess.Popen([SANDBOXCTL, "serve", "--tasks-dir", TASKS, "--runs-dir",
                              os.path.join(tmp, "runs"), "--test-label"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        path = "/v1/health"
    else:
        os.makedirs(os.path.join(tmp, "runs"))
        p = subprocess.Popen([SANDBOXCTL, "view", os.path.join(tmp, "runs"), "--port", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        path = "/"
    url = p.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        p.kill()
        fail("%s did not start: %r" % (target, url))
    u = urllib.parse.urlsplit(url)
    return p, u.hostname, u.port, u.path.rstrip("/"), path


def open_attackers(host, port):
    socks = []
    for _ in range(ATTACKERS):
        s = socket.create_connection((host, port), timeout=5)
        s.sendall(b"GET / HTTP/1.1\r\n")  # no end of head, ever
        socks.append(s)
    return socks


def real_requests(host, port, path, seconds):
    """A fresh connection every 0.2 s for `seconds`; the slowest answer, in s."""
    worst, n, end = 0.0, 0, time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.monotonic()
        try:
            c = http.client.HTTPConnection(host, port, timeout=ANSWER_WITHIN_S + 5)
            c.request("GET", path)
            r = c.getresponse()
            r.read()
            c.close()
            status = r.status
        except OSError as e:
            status = "%s: %s" % (type(e).__name__, e)
        took = time.monotonic() - t
        if status != 200 or took > ANSWER_WITHIN_S:
            fail("request %d of the real client: %s after %.2f s" % (n, status, took))
        worst = max(worst, took)
        n += 1
        time.sleep(0.2)
    return worst, n


def closed_by_peer(s):
    """True when the server has closed (or reset) this connection."""
    s.setblocking(False)
    try:
        s.recv(4096)  # b"": the end; an answer (a 408) would come just before it
        return True
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.setblocking(True)


def main():
    target = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="sbx-slowloris-")
    p, host, port, prefix, path = start(target, tmp)
    socks = []
    try:
        # 1. Half-open: 300 request lines that never end.
        socks = open_attackers(host, port)
        worst, n = real_requests(host, port, prefix + path, 3)
        print("half-open: %d connections; %d real requests answered, slowest %.3f s"
              % (ATTACKERS, n, worst))
        for s in socks:
            s.close()

        # 2. Drip: a byte of the head every second on each, for longer than the deadline.
        socks = open_attackers(host, port)
        t0 = time.monotonic()
        stop = threading.Event()

        def drip():
            while not stop.wait(1.0):
                for s in socks:
                    try:
                        s.send(b"X")
                    except OSError:
                        pass
        th = threading.Thread(target=drip, daemon=True)
        th.start()
        worst, n = real_requests(host, port, prefix + path, HEAD_DEADLINE_S + 3)
        stop.set()
        th.join()
        open_left = [s for s in socks if not closed_by_peer(s)]
        if open_left:
            fail("%d dripping connections still open %.1f s after the connect (head deadline "
                 "%d s)" % (len(open_left), time.monotonic() - t0, HEAD_DEADLINE_S))
        print("drip: %d connections, a byte a second each, all closed by %.1f s; %d real "
              "requests answered, slowest %.3f s"
              % (ATTACKERS, time.monotonic() - t0, n, worst))
        if p.poll() is not None:
            fail("%s exited during the attack: %s" % (target, p.returncode))
        if target == "serve":
            c = http.client.HTTPConnection(host, port, timeout=10)
            c.request("GET", prefix + "/metrics")
            text = c.getresponse().read().decode()
            m = dict(line.rsplit(" ", 1) for line in text.splitlines()
                     if line.startswith("sandboxctl_serve_connections_"))
            ev = int(m.get("sandboxctl_serve_connections_evicted_total", -1))
            to = int(m.get("sandboxctl_serve_connections_timed_out_total", -1))
            # The 44 past the 256 slots were evicted in each attack; every dripping one
            # ended, evicted (for a newcomer) or at the deadline.
            if ev < 2 * (ATTACKERS - 256) or ev + to < ATTACKERS + (ATTACKERS - 256):
                fail("/metrics: evicted %d, timed out %d" % (ev, to))
            print("/metrics: %d evicted, %d timed out" % (ev, to))
    finally:
        for s in socks:
            s.close()
        p.terminate()
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    run_main(main)

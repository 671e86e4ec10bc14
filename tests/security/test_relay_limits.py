#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The relay's memory and connection slots are not the agent's to take.

A live outside-agent run on the real engine. Case `memory`: 64 connections
each send a 60 MiB request body (half declared by Content-Length, half
chunked) minus its last byte and hold it there; sandboxctl's peak RSS must stay
under 300 MB, the owner's requests must still be answered, and result.json
must count the 503s. Case `slowloris`: 70 tokenless connections drip a byte
of a head every 2 s (and 70 more say nothing at all); the owner's requests on
fresh connections must be answered within seconds throughout, and the relay
must close the drips within its 10 s head timeout. Every step has a deadline.
Usage: test_relay_limits.py memory|slowloris
"""
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import test_integration as it  # noqa: E402

RSS_MAX = 300 << 20
BODY = 60 << 20


def rss(pid):
    """(current, peak) resident set of pid, in bytes."""
    cur = peak = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                cur = int(line.split()[1]) << 10
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) << 10
    return cur, peak


def request(port, path, token, body=None, timeout=5.0):
    """One request on a fresh connection: (status, seconds), status 0 on no answer."""
    t = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        method = "POST" if body is not None else "GET"
        head = "%s /%s%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n" % (
            method, token, path, port)
        if body is not None:
            head += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
        s.sendall(head.encode() + b"\r\n" + (body or b""))
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        st = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0
        return st, time.monotonic() - t
    except (socket.timeout, OSError):
        return 0, time.monotonic() - t
    finally:
        s.close()


def start_run(env, tag, timeout_s):
    rid = env.new_id(tag)
    # Under ASan (the sanitizer pass of scripts/test.sh) freed bodies sit in its
    # quarantine, 256 MiB by default; a small one keeps RSS about our own memory.
    e = dict(os.environ)
    e["ASAN_OPTIONS"] = e.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=16"
    p = subprocess.Popen(env.args(rid, "sales_revenue", it.pick_image(), "--json", "--timeout",
                                  str(timeout_s)),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
    env.procs.append(p)
    conn = json.loads(p.stdout.readline())
    port = int(conn["endpoint"].rsplit(":", 1)[1])
    token = conn["authorization"].split()[1]
    return rid, p, port, token


def finish_run(env, rid, p, port, token):
    st, _ = request(port, "/task/complete", token, b"{}", timeout=30)
    if st != 200:
        it.fail("the owner's complete_task: HTTP %d" % st)
    p.wait(timeout=60)
    err = p.stderr.read()
    if "Sanitizer" in err or "runtime error:" in err:
        it.fail("sandboxctl's sanitizers reported:\n" + err[-4000:])
    res = json.loads(it.read(os.path.join(env.runs, rid, "result.json")))
    it.check_gone(rid)
    return res


def case_memory(env):
    rid, p, port, token = start_run(env, "relaymem", 180)
    _, base_peak = rss(p.pid)
    conns, held = [], 0
    deadline = time.monotonic() + 120
    chunk = b"x" * (1 << 20)
    for i in range(64):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
        conns.append(s)
        if i % 2 == 0:
            head = ("POST /%s/tools/call HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                    "Content-Length: %d\r\n\r\n" % (token, port, BODY))
            framing = b""
        else:
            head = ("POST /%s/tools/call HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n" % (token, port))
            framing = b"%x\r\n" % BODY
        try:
            s.sendall(head.encode() + framing)
            sent = 0
            while sent < BODY - 1 and time.monotonic() < deadline:
                n = min(len(chunk), BODY - 1 - sent)
                s.sendall(chunk[:n])
                sent += n
            held += 1
        except OSError:
            pass  # refused (503) and closed: what the budget is for
        if time.monotonic() > deadline:
            it.fail("sending the bodies took over 120 s")
    time.sleep(1)
    cur, peak = rss(p.pid)
    print("  %d of 64 bodies held to their last byte; sandboxctl RSS %d MB now, peak %d MB "
          "(%d MB before)" % (held, cur >> 20, peak >> 20, base_peak >> 20))
    if peak > RSS_MAX:
        it.fail("sandboxctl peaked at %d MB with 64 partial 60 MiB bodies (limit %d MB)" %
                (peak >> 20, RSS_MAX >> 20))
    # The owner is still served: a status probe and a small tool call.
    st, secs = request(port, "/v1/task/status", token, timeout=10)
    if st != 200:
        it.fail("GET /task/status while the bodies are held: HTTP %d after %.1f s" % (st, secs))
    call = json.dumps({"tool_name": "list_files", "arguments": {}}).encode()
    st, secs = request(port, "/tools/call", token, call, timeout=20)
    if st != 200:
        it.fail("a small tool call while the bodies are held: HTTP %d after %.1f s" % (st, secs))
    for s in conns:
        s.close()
    res = finish_run(env, rid, p, port, token)
    rel = res["relay"]
    if rel["over_budget"] < 1 or rel["buffered_peak"] > 128 << 20:
        it.fail("want 503s counted and at most 128 MiB buffered: %s" % rel)
    print("ok: peak RSS %d MB, %d requests refused over budget, owner served" %
          (peak >> 20, rel["over_budget"]))


def case_slowloris(env):
    rid, p, port, token = start_run(env, "relayslow", 180)
    drips, mutes = [], []
    for _ in range(70):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"G")
        drips.append(s)
    for _ in range(70):
        mutes.append(socket.create_connection(("127.0.0.1", port), timeout=5))
    head = b"ET /v1/task/status HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Pad: " % port
    worst, answered, t0 = 0.0, 0, time.monotonic()
    closed_by_relay = 0
    step = 0
    # 16 s: past the 10 s head timeout, a byte from each drip every 2 s.
    while time.monotonic() - t0 < 16:
        for s in drips:
            if s.fileno() < 0:
                continue
            try:
                s.send(head[step % len(head):step % len(head) + 1] or b"a")
            except OSError:
                s.close()
                closed_by_relay += 1
        step += 1
        for _ in range(2):
            st, secs = request(port, "/v1/task/status", token, timeout=8)
            worst = max(worst, secs)
            if st != 200:
                it.fail("the owner was locked out by 140 slow connections: HTTP %d after %.1f s"
                        % (st, secs))
            answered += 1
        time.sleep(max(0, 2 - (time.monotonic() - t0) % 2))
    # Whatever eviction left, the head timeout ends: every drip is closed by now.
    for s in drips + mutes:
        if s.fileno() < 0:
            continue
        s.settimeout(5)
        try:
            if s.recv(1) == b"":
                closed_by_relay += 1
        except socket.timeout:
            it.fail("a slow connection was still open after 16 s (head timeout 10 s)")
        except OSError:
            closed_by_relay += 1
        s.close()
    if worst > 5:
        it.fail("the owner waited %.1f s for an answer" % worst)
    res = finish_run(env, rid, p, port, token)
    rel = res["relay"]
    if rel["evicted"] < 1 or rel["unauthorized"] != 0:
        it.fail("want evictions counted (and no drip ever authorized): %s" % rel)
    print("ok: %d owner requests answered (slowest %.2f s) among 140 slow connections; "
          "%d closed by the relay, %d evicted, %d timed out" %
          (answered, worst, closed_by_relay, rel["evicted"], rel["timed_out"]))


CASES = {"memory": case_memory, "slowloris": case_slowloris}


def main():
    it.run_case(CASES)


if __name__ == "__main__":
    it.run_main(main)

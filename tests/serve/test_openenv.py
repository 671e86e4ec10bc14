#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`sandboxctl serve`'s OpenEnv adapter on the real engine, with openenv-core's
own clients (the package from PyPI, scripts/deps.sh installs it).

Usage: test_openenv.py CASE   (solve, refuse, drop, hostile)

  solve    MCPToolClient solves banking_reserve with scripted tool calls
           (read_range, write_range, complete_task): done, reward 1;
           GenericEnvClient resets and completes at once: reward 0; past the
           deadline the next step answers done (timeout, reward 0); state
           counts steps; error frames; no container left.
  refuse   a wrong or missing token gets 401 and no upgrade (raw handshake
           and the client); a bad or unknown task name 404, no upgrade;
           /health, /metadata, /schema.
  drop     a socket dropped mid-episode: the episode is finished and its
           container removed; SIGTERM with a session's episode live: exit 0,
           no container.
  hostile  no episode needed: an oversized message and an oversized
           fragmented one are closed (1009); a frame flood from a client that
           never reads, and 1,000 connections (sessions past 64 get 503),
           neither grow serve's RSS past +64 MiB nor delay another session's
           answer past 1 s; the service answers afterwards.
"""
import base64
import json
import os
import socket
import struct
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import test_serve_integration as tsi  # noqa: E402
from itest import SRC, Skip, fail, run_main, wait_until  # noqa: E402

TASK = "banking_reserve"


def rss_bound():
    """64 MiB of growth; more under AddressSanitizer (tsi.under_asan)."""
    return (320 if tsi.under_asan() else 64) << 20


RSS_BOUND = rss_bound()


def rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def base(s, token=None, task=TASK):
    u = urllib.parse.urlsplit(s.url)
    return "http://%s:%d/%s/openenv/%s" % (u.hostname, u.port,
                                           s.token if token is None else token, task)


# ---- a raw WebSocket client, to send what a well-behaved one never would ----

def handshake(s, path):
    """Sends an upgrade request for path; returns (socket, status line, headers+rest)."""
    u = urllib.parse.urlsplit(s.url)
    c = socket.create_connection((u.hostname, u.port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    c.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, key)).encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = c.recv(4096)
        if not chunk:
            break
        data += chunk
    return c, data.split(b"\r\n", 1)[0].decode(errors="replace"), data


def ws_path(s, token=None, task=TASK):
    return urllib.parse.urlsplit(base(s, token, task)).path + "/ws"


def frame(payload, opcode=1, fin=True, length=None):
    n = len(payload) if length is None else length
    head = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    mask = os.urandom(4)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def read_frame(c):
    """(opcode, payload) of the next frame, or (None, b"") at EOF."""
    def exact(n):
        b = b""
        while len(b) < n:
            x = c.recv(n - len(b))
            if not x:
                return None
            b += x
        return b
    h = exact(2)
    if not h:
        return None, b""
    n = h[1] & 0x7F
    if n == 126:
        n = struct.unpack("!H", exact(2))[0]
    elif n == 127:
        n = struct.unpack("!Q", exact(8))[0]
    return h[0] & 0x0F, exact(n) or b""


class RawSession:
    def __init__(self, s):
        self.c, status, _ = handshake(s, ws_path(s))
        if " 101 " not in status:
            fail("upgrade: %s" % status)

    def ask(self, msg):
        t = time.time()
        self.c.sendall(frame(msg.encode()))
        op, data = read_frame(self.c)
        if op != 1:
            fail("no text answer to %s: opcode %s" % (msg, op))
        return data.decode(), time.time() - t


def expect_close(c, code, what):
    """The server's close frame with code (or at least EOF) after an attack."""
    c.settimeout(20)
    try:
        while True:
            op, data = read_frame(c)
            if op is None:
                return
            if op == 8:
                got = struct.unpack("!H", data[:2])[0] if len(data) >= 2 else 0
                # 0: the close frame's payload lost to the RST of our unread
                # fragments; the connection is closed all the same.
                if got not in (code, 0):
                    fail("%s: close code %d, expected %d" % (what, got, code))
                return
    except (ConnectionResetError, BrokenPipeError):
        return
    except socket.timeout:
        fail("%s: the connection stayed open" % what)


# ---- cases ------------------------------------------------------------------

def solve_banking(env):
    """examples/python_agent.py's banking_reserve solver, over the MCP tool client."""
    sys.path.insert(0, os.path.join(SRC, "examples"))
    import python_agent
    f, sh = "cash_flows.ods", "Sheet1"
    rows = env.call_tool("read_range", file_path=f, sheet_name=sh, start_cell="A2",
                         end_cell="C101")["values"]
    known = {int(p): r for p, _, r in rows if r not in (None, "")}
    out = []
    for period, cf, _ in rows:
        p = int(period)
        lo = max(k for k in known if k <= p)
        hi = min(k for k in known if k >= p)
        rate = known[p] if p in known else \
            known[lo] + (known[hi] - known[lo]) * (p - lo) / (hi - lo)
        out.append(python_agent.round2(cf * rate))
    env.call_tool("write_range", file_path=f, sheet_name=sh, start_cell="D1",
                  values=[["Required_Reserve"]] + [[v] for v in out])


def case_solve(s):
    from openenv.core.env_server.mcp_types import CallToolAction
    from openenv.core.generic_client import GenericEnvClient
    from openenv.core.mcp_client import MCPToolClient

    with MCPToolClient(base_url=base(s)).sync() as env:
        r = env.reset(seed=7)
        md = r.observation.metadata
        if r.done or "cash_flows.ods" not in md.get("prompt", "") or not md.get("episode_id"):
            fail("reset: %s" % r)
        s.ids.append(md["episode_id"])
        names = [t.name for t in env.list_tools()]
        for n in ("read_range", "write_range", "complete_task"):
            if n not in names:
                fail("list_tools lacks %s: %s" % (n, names))
        solve_banking(env)
        r = env.step(CallToolAction(tool_name="complete_task", arguments={"summary": "done"}))
        if not r.done or r.reward != 1:
            fail("solved: done %s reward %s: %s" % (r.done, r.reward, r.observation))
        st = env.state()
        if st.episode_id != md["episode_id"] or st.step_count < 4:
            fail("state: %s" % st)

    with GenericEnvClient(base_url=base(s)).sync() as env:
        r = env.reset()
        s.ids.append(r.observation["episode_id"])
        if not r.observation["tools"] or r.reward is not None:
            fail("reset: %s" % r)
        r = env.step({"type": "call_tool", "tool_name": "complete_task",
                      "arguments": {"summary": "nothing"}})
        if not r.done or r.reward != 0:
            fail("nothing done: done %s reward %s" % (r.done, r.reward))
        # After done: an error frame, not a crash.
        try:
            env.step({"type": "list_tools"})
            fail("a step after done was answered")
        except RuntimeError as e:
            if "EXECUTION_ERROR" not in str(e):
                fail("step after done: %s" % e)
        # The deadline: the next step answers done, the episode timed out, reward 0.
        r = env.reset(timeout=1)
        s.ids.append(r.observation["episode_id"])
        time.sleep(2.5)
        r = env.step({"type": "list_tools"})
        if not r.done or r.reward != 0 or r.observation["metadata"]["status"] != "timeout":
            fail("past the deadline: %s" % r)
        for bad, code in (({"type": "fly"}, "VALIDATION_ERROR"),):
            env.reset()
            s.ids.append(env.state()["episode_id"])
            try:
                env.step(bad)
                fail("%s was accepted" % bad)
            except RuntimeError as e:
                if code not in str(e):
                    fail("%s: %s" % (bad, e))
    s.stop_cleanly()


def case_refuse(s):
    from openenv.core.generic_client import GenericEnvClient

    before = s.metrics().get("sandboxctl_serve_unauthorized_total", 0)
    for token in ("0" * len(s.token), s.token[:-1] + ("0" if s.token[-1] != "0" else "1"), ""):
        path = ws_path(s, token) if token else "/openenv/%s/ws" % TASK
        c, status, data = handshake(s, path)
        c.close()
        if " 401 " not in status or b"Sec-WebSocket-Accept" in data:
            fail("token %r: %s" % (token, status))
    try:
        with GenericEnvClient(base_url=base(s, "f" * 32)).sync() as env:
            env.reset()
        fail("a wrong token reached reset")
    except ConnectionError:
        pass
    after = s.metrics().get("sandboxctl_serve_unauthorized_total", 0)
    if after < before + 4:
        fail("unauthorized counted %s -> %s" % (before, after))
    for task in ("..%2f..%2fetc", "no_such_task", ".git"):
        c, status, data = handshake(s, ws_path(s, task=task))
        c.close()
        if " 404 " not in status or b"Sec-WebSocket-Accept" in data:
            fail("task %r: %s" % (task, status))
    for what, key in (("health", "status"), ("metadata", "name"), ("schema", "action")):
        st, d = s.call("GET", "/openenv/%s/%s" % (TASK, what))
        if st != 200 or key not in d:
            fail("/%s: %s %s" % (what, st, d))
    if s.containers():
        fail("a refused upgrade left a container")
    s.stop_cleanly()


def case_drop(s):
    from websockets.sync.client import connect

    ws = connect(base(s).replace("http://", "ws://") + "/ws")
    ws.send('{"type":"reset","data":{}}')
    eid = json.loads(ws.recv(timeout=120))["data"]["observation"]["episode_id"]
    s.ids.append(eid)
    if not s.containers():
        fail("no container for the episode")
    ws.socket.close()  # no close frame: dropped
    if not wait_until(lambda: s.call("GET", "/v1/episodes/" + eid)[1].get("state") == "done",
                      60, poll=0.2):
        fail("the dropped episode was not finished")
    if not wait_until(lambda: not s.containers(), 30, poll=0.2):
        fail("a dropped socket left a container")
    # SIGTERM with a session open and its episode live: exit 0, nothing left.
    ws = connect(base(s).replace("http://", "ws://") + "/ws")
    ws.send('{"type":"reset","data":{}}')
    s.ids.append(json.loads(ws.recv(timeout=120))["data"]["observation"]["episode_id"])
    s.stop_cleanly()
    ws.close()


def case_hostile(s):
    pid = s.p.pid
    good = RawSession(s)
    good.ask('{"type":"state"}')
    rss0 = rss(pid)

    # An oversized message in one frame, and one in fragments: closed, 1009.
    c, status, _ = handshake(s, ws_path(s))
    try:  # the server may close as soon as the header says 2 MiB, before it is all sent
        c.sendall(frame(b"x" * (2 << 20)))
    except (BrokenPipeError, ConnectionResetError):
        pass
    expect_close(c, 1009, "a 2 MiB frame")
    c.close()
    c, status, _ = handshake(s, ws_path(s))
    try:
        c.sendall(frame(b"[", fin=False))
        for _ in range(40):
            c.sendall(frame(b"y" * 65536, opcode=0, fin=False))
    except (BrokenPipeError, ConnectionResetError):
        pass
    expect_close(c, 1009, "a fragmented 2.5 MiB message")
    c.close()

    # A flood from a client that never reads its answers.
    c, status, _ = handshake(s, ws_path(s))
    msg = frame(b'{"type":"state"}') * 1000
    stop = threading.Event()

    def flood():
        c.settimeout(5)
        try:
            while not stop.is_set():
                c.sendall(msg)
        except OSError:
            pass
    t = threading.Thread(target=flood)
    t.start()
    time.sleep(3)
    _, lat = good.ask('{"type":"state"}')
    grown = rss(pid) - rss0
    stop.set()
    t.join()
    c.close()
    print("flood: another session answered in %.1f ms, RSS +%d KiB" % (lat * 1000, grown >> 10))
    if lat > 1 or grown > RSS_BOUND:
        fail("flood: latency %.2f s, RSS +%d MiB" % (lat, grown >> 20))

    # 1,000 connections asking for a session.
    socks, codes = [], {}
    for _ in range(1000):
        try:
            c, status, _ = handshake(s, ws_path(s))
            code = status.split(" ")[1] if " " in status else "closed"
            socks.append(c)
        except OSError:
            code = "refused"
        codes[code] = codes.get(code, 0) + 1
    _, lat = good.ask('{"type":"state"}')
    grown = rss(pid) - rss0
    print("1000 connections: %s; another session answered in %.1f ms, RSS +%d KiB" %
          (codes, lat * 1000, grown >> 10))
    if codes.get("101", 0) > 63 or lat > 1 or grown > RSS_BOUND:
        fail("1000 connections: %s, latency %.2f s, RSS +%d MiB" % (codes, lat, grown >> 20))
    for c in socks:
        c.close()
    good.c.close()
    st, d = s.call("GET", "/v1/health")
    if st != 200:
        fail("health after the attacks: %s %s" % (st, d))
    # The sessions are gone: a new one gets in.
    if not wait_until(lambda: " 101 " in handshake(s, ws_path(s))[1], 30, poll=0.5):
        fail("no session after the attacks")
    s.stop_cleanly()


CASES = {"solve": (case_solve, ["--pool", "1"]), "refuse": (case_refuse, []),
         "drop": (case_drop, []), "hostile": (case_hostile, [])}


def run_named_case():
    if os.environ.get("SBX_RUN_TEST_IMAGE") != "real" or not tsi.image_exists(tsi.SLIM):
        raise Skip("needs SBX_RUN_TEST_IMAGE=real and %s" % tsi.SLIM)
    try:
        import openenv  # noqa: F401
    except ImportError:
        raise Skip("needs openenv-core (scripts/deps.sh)")
    fn, args = CASES[sys.argv[1]]
    s = tsi.Service(*args)
    s.containers = lambda: tsi.our_containers(s.ids + [s.service_id + "-"])
    try:
        fn(s)
    finally:
        s.cleanup()


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        sys.exit("usage: test_openenv.py {%s}" % ",".join(CASES))
    run_main(run_named_case)
    print("ok")


if __name__ == "__main__":
    main()

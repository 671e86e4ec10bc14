#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`sandboxctl serve --reuse N` on the real engine: a sandbox reset in place
between episodes must carry nothing over.

Usage: test_reuse.py CASE   (carryover, retire, leak, sweep, oldbridge)

  carryover  episode k's agent plants every residue its tool code can reach:
             background, double-forked, setsid, stopped and SIGTERM-ignoring
             processes (by a call still running at the finish: a call's tree
             dies with it); hidden, deep (80 levels), huge, unreadable, FIFO,
             unix-socket and hard-linked files in /workspace, /tmp, /dev/shm,
             $HOME; SysV shared memory, semaphores and message queues; POSIX
             message queues; a try at the server's socket. Episode k+1, on the
             same sandbox (same id, reused 1), looks for each and finds none;
             episode k's URL and token are refused once it finished; the
             resets are counted in /metrics and recorded in result.json.
  retire     something the reset cannot remove (a root-owned file the host
             leaves in /dev/shm): the reset is dirty, the sandbox is retired
             (removed, counted, result.json says what was found) and the next
             episode gets a fresh sandbox.
  leak       $SBX_REUSE_EPISODES (default 50) episodes on one sandbox: the
             service's fds, threads and RSS stay flat, every reset is clean.
  sweep      `sweep --reuse 100` over every non-GUI task with the oracle and a
             null agent (`true`) gives the scores a single-use sweep gives
             (oracle 1, null 0), its jobs' sandboxes served several episodes
             each, and none is left.

$SBX_TEST_SLIM_IMAGE (default sandboxctl/sandbox-slim:latest) is the image
(serve --image): --reuse needs one built from this tree.
"""
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import test_serve_integration as T  # noqa: E402
from itest import fail  # noqa: E402
import wrapped_image  # noqa: E402

# Processes out of the tool's process group: background, double-forked,
# stopped, ignoring SIGTERM, a daemon holding a socket. The spawner's guard
# kills a call's whole tree when the call ends, so they are planted by a call
# still running when the episode finishes: the reset is what must end them.
HOLD = r'''
q='>/dev/null 2>&1 </dev/null'
eval "setsid sleep 1000 $q &"
eval "setsid sh -c '(sleep 1001 &) ; (sleep 1002 &)' $q &"
eval "setsid sh -c 'sleep 1003 & kill -STOP \$!; exec sleep 1006' $q &"
eval "setsid sh -c 'trap \"\" TERM HUP INT; exec sleep 1004' $q &"
python3 - <<'EOF'
import os, socket
if os.fork() == 0:  # a daemon holding a socket of its own
    os.setsid()
    srv = socket.socket(socket.AF_UNIX)
    srv.bind("/tmp/daemon-sock")
    srv.listen(1)
    os.execvp("sleep", ["sleep", "1005"])
EOF
exec sleep 1010 >/dev/null 2>&1
'''

PLANT = r'''
set -e
python3 - <<'EOF'
import ctypes, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
IPC_CREAT = 0o1000
assert libc.shmget(0x5B1, 4096, IPC_CREAT | 0o600) >= 0
assert libc.semget(0x5B2, 1, IPC_CREAT | 0o600) >= 0
assert libc.msgget(0x5B3, IPC_CREAT | 0o600) >= 0
rt = ctypes.CDLL("librt.so.1", use_errno=True)
rt.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
assert rt.mq_open(b"/sbx-residue", os.O_CREAT | os.O_RDWR, 0o600, None) >= 0
for place in ("/workspace", "/tmp", "/dev/shm", os.environ["HOME"]):
    open(os.path.join(place, ".hidden-residue-" + place.replace("/", "_")), "w").write("x")
    os.mkfifo(os.path.join(place, "fifo-residue"))
    s = socket.socket(socket.AF_UNIX)
    s.bind(os.path.join(place, "sock-residue"))
d = "/tmp/deep"
for i in range(80):
    d = os.path.join(d, "d%d" % i)
os.makedirs(d)
open(os.path.join(d, "bottom"), "w").write("x")
with open("/tmp/huge-residue", "wb") as f:
    f.write(b"\0" * (32 << 20))
os.link("/tmp/.hidden-residue-_tmp", "/tmp/hardlink-residue")
os.makedirs("/tmp/locked/inner")
open("/tmp/locked/inner/f", "w").write("x")
os.chmod("/tmp/locked/inner", 0)
os.chmod("/tmp/locked", 0)
# The server's socket: not the agent's to reach (the run dir is private).
try:
    c = socket.socket(socket.AF_UNIX)
    c.connect("/run/sandbox/mcp.sock")
    print("REACHED THE SERVER'S SOCKET")
except OSError as e:
    print("server socket refused:", e.strerror)
EOF
echo planted
'''

LOOK = r'''
python3 - <<'EOF'
import json, os
me = os.getpid()
found = []
for p in os.listdir("/proc"):
    if not p.isdigit() or int(p) in (1, me, os.getppid()):
        continue
    try:
        st = dict(l.split(":", 1) for l in open("/proc/%s/status" % p).read().splitlines() if ":" in l)
        cmd = open("/proc/%s/cmdline" % p, "rb").read().replace(b"\0", b" ").decode()
    except OSError:
        continue
    mine = set()
    q = me
    while q > 1:
        mine.add(q)
        q = int(dict(l.split(":", 1) for l in open("/proc/%d/status" % q).read().splitlines()
                     if ":" in l)["PPid"])
    if int(p) in mine or st["Name"].strip() in ("sandbox-init", "sandbox-mcp",
                                                  "sandbox-spawner", "sandbox-bridge"):
        continue
    if st["Uid"].split()[0] == "0" and cmd.startswith("runc init"):
        continue  # the engine starting an exec (a bridge the host's pool opens): not residue
    found.append("process %s uid %s: %s" % (p, st["Uid"].split()[0], cmd))
for t in ("shm", "sem", "msg"):
    rows = open("/proc/sysvipc/" + t).read().splitlines()[1:]
    found += ["sysv %s %s" % (t, r.split()[:2]) for r in rows]
for place in ("/workspace", "/tmp", "/dev/shm", "/dev/mqueue", os.environ["HOME"]):
    for n in os.listdir(place):
        if place == "/tmp" and n == "agent":
            continue
        found.append(os.path.join(place, n))
print(json.dumps(found))
EOF
'''


def tool(rest_url, name, **args):
    return T.rest_post(rest_url, "/tools/call", {"tool_name": name, "arguments": args})


def shell(rest_url, script):
    r = tool(rest_url, "execute_shell", command=script, timeout=60)
    res = r.get("result") or {}
    out = res.get("stdout", "") if isinstance(res, dict) else str(res)
    if not r.get("success") or (isinstance(res, dict) and res.get("exit_code") != 0):
        fail("execute_shell failed: %s" % json.dumps(r)[:2000])
    return out


def held(rest_url):
    try:
        tool(rest_url, "execute_shell", command=HOLD, timeout=600)
    except Exception:  # noqa: BLE001 - the reset cuts it; what is left is what counts
        pass


def result_json(o):
    with open(os.path.join(o["run_dir"], "result.json")) as f:
        return json.load(f)


def finish_completed(s, o):
    T.rest_post(o["rest_url"], "/task/complete", {})
    return s.finish(o["id"])


def case_carryover(s):
    s.wait_pool(1)
    a = s.claim()
    if a.get("reused") != 0:
        fail("first episode: reused %s" % a.get("reused"))
    # A fresh sandbox holds the task's files and nothing else: the baseline.
    fresh = json.loads(shell(a["rest_url"], LOOK))
    if [f for f in fresh if not f.startswith("/workspace/")]:
        fail("a fresh sandbox is not clean: %s" % fresh)
    out = shell(a["rest_url"], PLANT)
    if "planted" not in out or "REACHED" in out:
        fail("planting: %s" % out)
    # A call that does not return: its answer is lost with the reset.
    threading.Thread(target=held, args=(a["rest_url"],), daemon=True).start()
    # What episode k sees, so the check below is known to see what it looks for.
    for _ in range(100):
        seen = json.loads(shell(a["rest_url"], LOOK))
        if any("sleep 1005" in f for f in seen) and any("sleep 1004" in f for f in seen):
            break
        time.sleep(0.1)
    for want in ("process", "sysv shm", "sysv sem", "sysv msg", "/dev/mqueue/sbx-residue",
                 "/tmp/deep", "/dev/shm/fifo-residue", "/workspace/.hidden-residue",
                 "sleep 1000", "sleep 1001", "sleep 1003", "sleep 1004", "sleep 1005",
                 "/tmp/locked", "/tmp/daemon-sock"):
        if not any(want in f for f in seen):
            fail("episode k's own look misses %r: %s" % (want, seen))
    ra = finish_completed(s, a)
    # The old URL, token and all, is refused from the reset on.
    try:
        urllib.request.urlopen(a["rest_url"] + "/health", timeout=5)
        fail("episode k's URL still answers after its finish")
    except (urllib.error.URLError, ConnectionError, OSError):
        pass
    b = s.claim()
    if b.get("reused") != 1:
        fail("second episode not on the reset sandbox: %s (first: %s)" % (b, ra))
    rb_before = result_json(ra)
    if rb_before["sandbox"].get("reset_after", {}).get("clean") is not True:
        fail("episode k's result.json: %s" % rb_before["sandbox"])
    left = json.loads(shell(b["rest_url"], LOOK))
    if sorted(left) != sorted(fresh):
        fail("episode k+1 found residue: %s" % sorted(set(left) - set(fresh)))
    rb = finish_completed(s, b)
    if rb.get("reused") != 1 or rb["sandbox_id"] != ra["sandbox_id"]:
        fail("not the same sandbox: %s vs %s" % (rb.get("sandbox_id"), ra.get("sandbox_id")))
    res = result_json(rb)
    rs = res["sandbox"].get("reset_before_ms", {})
    if res["sandbox"].get("reused") != 1 or not rs.get("total", 0) > 0:
        fail("result.json lacks the reset: %s" % res["sandbox"])
    m = s.metrics()
    if m.get("sandboxctl_serve_resets_total", 0) < 1:
        fail("metrics: %s" % m)
    print("carry-over: %d residues planted, none found after a %.1f ms reset" %
          (len(seen) - len(fresh), rs["total"]))
    s.stop_cleanly()


def case_retire(s):
    s.wait_pool(1)
    a = s.claim()
    # Root's file in a sticky directory: neither uid may remove it.
    c = T.our_containers([s.service_id + "-"])
    if len(c) != 1:
        fail("want 1 pool container, have %d" % len(c))
    cid = c[0]["Id"]
    js = {"Content-Type": "application/json"}
    st, body = T.engine("POST", "/containers/%s/exec" % cid,
                        json.dumps({"User": "0:0",
                                    "Cmd": ["sh", "-c", "echo x > /dev/shm/rootfile"]}),
                        headers=js)
    if st != 201:
        fail("exec create: %s %s" % (st, body))
    st, _ = T.engine("POST", "/exec/%s/start" % body["Id"],
                     json.dumps({"Detach": False, "Tty": False}), headers=js)
    time.sleep(0.3)
    ra = finish_completed(s, a)
    if ra.get("retired") is not True:
        fail("a dirty reset did not retire the sandbox: %s" % ra)
    res = result_json(ra)
    found = res["sandbox"].get("reset_after", {}).get("found") or ""
    if "/dev/shm/rootfile" not in found:
        fail("result.json does not say what was found: %s" % res["sandbox"])
    m = s.metrics()
    if m.get("sandboxctl_serve_reset_retired_total") != 1:
        fail("retired not counted: %s" % m)
    st, _ = T.engine("GET", "/containers/%s/json" % cid)
    if st != 404:
        fail("the retired sandbox is still there (HTTP %d)" % st)
    b = s.claim()
    if b.get("reused") != 0:
        fail("after a retire the next episode is not on a fresh sandbox: %s" % b)
    finish_completed(s, b)
    print("retire: dirty reset (%s) removed the sandbox, counted" % found[:80])
    s.stop_cleanly()


def case_leak(s):
    n = int(os.environ.get("SBX_REUSE_EPISODES", "50"))
    s.wait_pool(1)
    ids = set()
    base = None
    resets = []
    for i in range(n):
        o = s.claim()
        r = finish_completed(s, o)
        ids.add(r["sandbox_id"])
        if r.get("retired"):
            fail("episode %d: the reset retired the sandbox: %s" % (i, result_json(r)))
        if "reset" in r["timings_ms"]:
            resets.append(r["timings_ms"]["reset"])
        if i == 9:
            s.wait_pool(1)
            time.sleep(0.5)
            base = T.proc_stats(s.p.pid)
    s.wait_pool(1)
    time.sleep(0.5)
    end = T.proc_stats(s.p.pid)
    if len(ids) != 1:
        fail("%d sandboxes served %d episodes (want 1)" % (len(ids), n))
    print("after 10: fds %d threads %d rss %d kB; after %d: fds %d threads %d rss %d kB" %
          (base[0], base[1], base[2], n, end[0], end[1], end[2]))
    if end[0] > base[0] + 2 or end[1] > base[1] + 1:
        fail("fds or threads grew: %s -> %s" % (base, end))
    # Under ASan its quarantine of freed memory (256 MiB) grows RSS whatever is held.
    if end[2] > base[2] * 1.10 + (320 << 10 if T.under_asan() else 2048):
        fail("RSS grew: %s -> %s" % (base, end))
    resets.sort()
    print("resets: %d, p50 %.1f ms, p99 %.1f ms" %
          (len(resets), resets[len(resets) // 2], resets[min(len(resets) - 1,
                                                           int(len(resets) * 0.99))]))
    s.stop_cleanly()


def sweep_scores(image, out, *extra):
    tasks = sorted(d for d in os.listdir(T.TASKS)
                   if os.path.exists(os.path.join(T.TASKS, d, "task.yaml")) and
                   not d.startswith("gui_"))
    args = [T.SANDBOXCTL, "sweep", "--tasks-dir", T.TASKS, "--agent", "oracle", "--agent", "true",
            "--jobs", "2", "--image", image, "--test-label", "--quiet", "--out", out]
    for t in tasks:
        args += ["--task", t]
    p = subprocess.run(args + list(extra), capture_output=True, text=True, timeout=240)
    if p.returncode not in (0, 1):
        fail("sweep %s: exit %d: %s" % (extra, p.returncode, p.stderr[-2000:]))
    with open(os.path.join(out, "results.jsonl")) as f:
        rows = [json.loads(line) for line in f]
    return tasks, {(r["task"], r["agent"]): (r["status"], r["score"]) for r in rows}, rows


def case_sweep(_s):
    import shutil
    import tempfile
    image = T.SLIM
    d = tempfile.mkdtemp(prefix="sbx-reuse-sweep-")
    try:
        tasks, single, _ = sweep_scores(image, os.path.join(d, "single"))
        _, reused, rows = sweep_scores(image, os.path.join(d, "reused"), "--reuse", "100")
        if reused != single or len(single) != 2 * len(tasks):
            fail("scores differ: single %s reused %s" % (single, reused))
        for (task, agent), (status, score) in reused.items():
            if (agent == "oracle") != (status == "pass" and score == 1):
                fail("%s/%s: %s %s" % (task, agent, status, score))
        served = {}
        for r in rows:
            with open(os.path.join(d, "reused", "runs", r["run_id"], "result.json")) as f:
                sb = json.load(f)["sandbox"]
            served.setdefault(sb["id"], []).append(sb.get("reused", 0))
        if len(served) > 4 or max(len(v) for v in served.values()) < 3:
            fail("the sweep's sandboxes were not reused: %s" % served)
        for cid in served:
            st, _ = T.engine("GET", "/containers/%s/json" % cid)
            if st != 404:
                fail("the sweep left its sandbox %s (HTTP %d)" % (cid[:12], st))
        print("sweep --reuse: %d episodes on %d sandboxes, the same scores as single use" %
              (len(rows), len(served)))
    finally:
        shutil.rmtree(d, ignore_errors=True)


# sandbox-bridge as it was before reset in place (getopt "hw:"): -r is a usage error.
OLD_BRIDGE = b"""#!/bin/sh
case "$1" in -r|-h) echo 'Usage: sandbox-bridge [-w SECONDS] UNIX_SOCKET_PATH' >&2; exit 2;; esac
exec /usr/local/bin/sandbox-bridge.real "$@"
"""
OLD_IMAGE = "sandboxctl-test/reuse-oldbridge:latest"
NO_RESET = "its sandbox-bridge has no -r"


def case_oldbridge(_s):
    """--reuse on an image built before reset in place: serve says so once, fills
    no pool and runs its claims cold (they pass); sweep says so once and its
    episodes run single use, none waiting out the readiness timeout."""
    import shutil
    import tempfile
    wrapped_image.make(T.engine, T.SLIM, OLD_IMAGE, "/usr/local/bin/sandbox-bridge", OLD_BRIDGE)
    try:
        s = T.Service("--pool", "1", "--reuse", "3", "--image", OLD_IMAGE)
        try:
            if not T.wait_until(lambda: NO_RESET in open(s.err.name).read(), 30, poll=0.2):
                fail("serve did not say the image lacks reset in place: %s" % open(s.err.name).read())
            for _ in range(2):
                o = s.claim()
                r = finish_completed(s, o)
                # Completed with no work: graded (a fail), not an infra error.
                if r.get("ended_by") != "complete_task" or not r["grade"]["graded"] or \
                        r.get("warm") or r.get("reused"):
                    fail("a cold claim on the old image: %s" %
                         {k: r.get(k) for k in ("status", "ended_by", "warm", "reused", "error")})
            m = s.metrics()
            if m.get("sandboxctl_serve_warm_started_total", 0) != 0 or \
                    m.get("sandboxctl_serve_engine_errors_total", 0) != 0:
                fail("the pool filled or counted engine errors: %s" % m)
            s.stop_cleanly()
            err = open(s.err.name).read()
        finally:
            s.cleanup()
        if err.count(NO_RESET) != 1:
            fail("serve said it %d times: %s" % (err.count(NO_RESET), err[-2000:]))
        d = tempfile.mkdtemp(prefix="sbx-reuse-old-")
        try:
            t0 = time.monotonic()
            p = subprocess.run([T.SANDBOXCTL, "sweep", "--tasks-dir", T.TASKS, "--agent", "oracle",
                                "--task", "banking_reserve", "--epochs", "3", "--jobs", "1",
                                "--image", OLD_IMAGE, "--reuse", "3", "--test-label", "--quiet",
                                "--out", d], capture_output=True, text=True, timeout=240)
            dt = time.monotonic() - t0
            if p.returncode != 0 or p.stderr.count(NO_RESET) != 1 or dt > 25:
                fail("sweep --reuse on the old image: exit %d in %.1f s, said %d times: %s" %
                     (p.returncode, dt, p.stderr.count(NO_RESET), p.stderr[-2000:]))
        finally:
            shutil.rmtree(d, ignore_errors=True)
        print("oldbridge: serve and sweep said it once; sweep: 3 single-use episodes in %.1f s" % dt)
    finally:
        wrapped_image.remove(T.engine, OLD_IMAGE)


CASES = {
    "carryover": (case_carryover, ["--pool", "1", "--reuse", "3"]),
    "retire": (case_retire, ["--pool", "1", "--reuse", "3"]),
    "leak": (case_leak, ["--pool", "1", "--reuse", "1000"]),
    "sweep": (case_sweep, None),
    "oldbridge": (case_oldbridge, None),
}


def main():
    # test_serve_integration.py's runner: the image check, one service per case, its cleanup.
    T.CASES = {k: (fn, None if a is None else a + ["--image", T.SLIM], None)
               for k, (fn, a) in CASES.items()}
    T.main()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The sandbox under gVisor: `--runtime runsc` end to end on a second engine.

Usage: test_runsc.py all | CASE...   (all: every case below, in order, on one engine)

One second dockerd with runsc registered (tests/lib/runsc_engine.py), this
tree's images copied into it (`sandboxctl build --all` first: its
<repo>:<hash> tags, not the first engine's :latest, which may be another
tree's); starting it and copying is most of the time, so every case shares it.

  doctor     on the first engine (runsc installed, not registered): the
             daemon.json entry to add; on the second: runsc registered
  runc       this tree's slim image on the first engine (runc): PID 1's Linux
             check (all five Cap lines zero) as before, the profile applied
  tasks      `run --runtime runsc --agent oracle` passes every task (the GUI
             ones too: Xvfb and LibreOffice under gVisor), result.json names
             runsc and PID 1's gVisor check; the null agent (`true`) scores 0
             on every task, through `sweep --runtime runsc --jobs 2`
  hardening  probed from inside: uid 1000/1001, no capability (and no
             CapAmb line: gVisor has no ambient set), no-new-privileges,
             read-only root, only `lo`, the memory limit (the Sentry's
             MemTotal; 400 MB refused)
  attacks    from tool code: the server cannot be signalled, traced, read or
             impersonated (tests/security/test_tool_uid.py's attack), no
             setuid(0), mount, chroot, user namespace, /dev/kmsg, sysrq;
             /tmp and /workspace fills stop at their size and the server
             keeps serving; a fork bomb fails a fork (EAGAIN) at tool code's
             process limit (--pids; the container's host limit is 16 times
             that, as the Sentry's host tasks count there), the sandbox keeps
             serving and is graded, and the next episode passes
  serve      `serve --runtime runsc --pool 1`: a warm claim under runsc,
             finished and graded; nothing left
  noseccomp  on engines of its own, runsc registered without --oci-seccomp
             (three spellings; two with it): doctor warns with the daemon.json
             fix, `run`, `sweep` and `serve --runtime runsc` exit 3 with one
             line, nothing made; --allow-no-seccomp passes the check

Skips (77) without root, dockerd or runsc; SBX_CI=1 turns a missing runsc into
a failure (scripts/deps.sh installs it).
"""
import ctypes  # noqa: F401  (the attack code below runs in the sandbox)
import json
import os
import subprocess
import sys
import time
import traceback
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "run"))
sys.path.insert(0, os.path.join(HERE, "..", "security"))
sys.path.insert(0, os.path.join(HERE, "..", "serve"))
import runsc_engine  # noqa: E402
import second_engine  # noqa: E402
import test_integration as it  # noqa: E402
import test_tool_uid  # noqa: E402  (its ATTACK)
from itest import SANDBOXCTL, TASKS, Skip, fail, run_main  # noqa: E402

RUNTIME = ["--runtime", "runsc"]
GUI_TIMEOUT_S = 300


def check_runsc_result(res, name):
    """result.json of an episode under runsc: the engine ran it there, PID 1 verified its
    drop under gVisor."""
    hd = res["sandbox"]["hardening"]
    p1 = hd.get("pid1") or {}
    if res["limits"].get("runtime") != "runsc" or hd.get("runtime") != "runsc" or \
            p1.get("kernel") != "gVisor" or "no ambient set" not in p1.get("verified", "") or \
            not p1.get("seccomp_filter") or hd.get("seccomp") != "sandbox" or \
            not hd.get("all_caps_dropped_by_pid1") or hd.get("tool_code_uid") != 1001:
        fail("%s: not verified under runsc: limits %s, hardening %s" %
             (name, res["limits"], hd))


def rest(url, path, body=None, timeout=120):
    req = urllib.request.Request(url + path, method="POST" if body is not None else "GET",
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read() or b"{}")


def tool(url, name, **args):
    return rest(url, "/tools/call", {"tool_name": name, "arguments": args})


def python_json(url, code, timeout=60):
    """Runs code with execute_python; the JSON object its last stdout line holds."""
    res = tool(url, "execute_python", code=code, timeout=timeout)
    out = ((res.get("result") or {}).get("stdout") or "").strip()
    if not out:
        fail("the probe printed nothing: %s" % res)
    return json.loads(out.splitlines()[-1])


def start_external(env, tag, *extra):
    """A run with no agent (an outside one: this test) under runsc; (process, run id, REST URL)."""
    rid = env.new_id(tag)
    p = subprocess.Popen(env.args(rid, "banking_reserve", it.pick_image(), "--json",
                                  "--timeout", "180", *extra),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    env.procs.append(p)
    line = p.stdout.readline()
    if not line:
        fail("%s: the run did not come up: %s" % (tag, p.stderr.read()))
    return p, rid, json.loads(line)["rest_url"]


def finish_external(env, p, rid, url):
    rest(url, "/task/complete", {})
    p.wait(timeout=120)
    res = json.loads(it.read(os.path.join(env.runs, rid, "result.json")))
    check_runsc_result(res, rid)
    it.check_gone(rid)
    return res


# ---- cases ------------------------------------------------------------------

def case_tasks(env):
    t0 = time.time()
    it.case_oracle(env)  # every task, `run --agent oracle`, with the hardening checked
    for rid in env.run_ids:
        check_runsc_result(json.loads(it.read(os.path.join(env.runs, rid, "result.json"))), rid)
    oracle_s = time.time() - t0
    # The null agent on every task, as a sweep under runsc.
    t0 = time.time()
    out = os.path.join(env.dir, "sweep")
    args = [SANDBOXCTL, "sweep", "--tasks-dir", TASKS, "--agent", "true", "--jobs", "2",
            "--out", out, "--test-label"] + RUNTIME
    names = [n for n, _ in it.tasks()]
    for n in names:
        args += ["--task", n]
    p = subprocess.run(args, capture_output=True, text=True, timeout=900)
    lines = [json.loads(l) for l in it.read(os.path.join(out, "results.jsonl")).splitlines()
             if l.strip()]
    got = sorted(l["task"] for l in lines)
    if got != sorted(names) or any(l["status"] != "fail" or l["score"] != 0 for l in lines):
        fail("sweep --agent true --runtime runsc: exit %d, %s\n%s" %
             (p.returncode, [(l["task"], l["status"], l.get("score"), l.get("error"))
                             for l in lines], p.stderr[-2000:]))
    for l in lines:
        res = json.loads(it.read(os.path.join(out, "runs", l["run_id"], "result.json")))
        check_runsc_result(res, l["run_id"])
        it.check_gone(l["run_id"])
    print("  tasks: %d oracle PASS (%.0f s), %d null-agent 0 in a sweep (%.0f s), all runsc" %
          (len(names), oracle_s, len(lines), time.time() - t0))


HARDENING = r'''
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
st = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
caps = {k: st[k].strip() for k in st if k.startswith("Cap")}
dev = open("/proc/net/dev").read().splitlines()[2:]
ifaces = [l.split(":")[0].strip() for l in dev if ":" in l]
routes = open("/proc/net/route").read().strip().splitlines()[1:]
mem = [l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal:")][0]
# The root mount's options (gVisor's statvfs has no ST_RDONLY flag; its mountinfo says ro).
root = [l.split() for l in open("/proc/self/mountinfo") if l.split()[4] == "/"][0]
print(json.dumps({"uid": os.getuid(), "euid": os.geteuid(), "groups": os.getgroups(),
                  "caps": caps, "nnp": libc.prctl(39, 0, 0, 0, 0),
                  "rofs": "ro" in root[5].split(","),
                  "ifaces": ifaces, "routes": routes, "memtotal_kb": int(mem)}))
'''


def case_hardening(env):
    p, rid, url = start_external(env, "hardening", "--memory", "256m")
    o = python_json(url, HARDENING)
    want_caps = {"CapInh": "0" * 16, "CapPrm": "0" * 16, "CapEff": "0" * 16, "CapBnd": "0" * 16}
    if o["uid"] != 1001 or o["euid"] != 1001 or o["caps"] != want_caps or o["nnp"] != 1:
        fail("tool code: uid %s, caps %s, no_new_privs %s" % (o["uid"], o["caps"], o["nnp"]))
    if not o["rofs"]:
        fail("the root filesystem is writable under runsc")
    if o["ifaces"] != ["lo"] or o["routes"]:
        fail("network under runsc: interfaces %s, routes %s" % (o["ifaces"], o["routes"]))
    if o["memtotal_kb"] != 256 * 1024:
        fail("the Sentry's MemTotal is %d kB, not the 256 MiB limit" % o["memtotal_kb"])
    # Fast, so the limit is reached before the tool's timeout (a shell's string grew
    # too slowly under load, and the test measured the timeout instead).
    big = tool(url, "execute_python",
               code="b = b'a' * 400000000\nprint('survived', len(b))")
    if "survived 400000000" in json.dumps(big):
        fail("the memory limit did not hold under runsc: %s" % big)
    # Under its limit (3/4 of the sandbox's memory, 192 MiB here) tool code gets what it asks.
    fits = tool(url, "execute_python", code="b = b'a' * 120000000\nprint('fits', len(b))")
    if "fits 120000000" not in json.dumps(fits):
        fail("120 MB under a 256 MiB sandbox was refused under runsc: %s" % fits)
    alive = tool(url, "execute_shell", command="echo still-here")
    if "still-here" not in json.dumps(alive):
        fail("the sandbox did not survive the memory probe: %s" % alive)
    res = finish_external(env, p, rid, url)
    hd = res["sandbox"]["hardening"]
    if hd["memory_bytes"] != 256 << 20 or hd["pids"] != 256 * 16 or not hd["readonly_rootfs"] or \
            not hd["no_new_privileges"] or hd["network_mode"] != "none" or hd["user"] != "0:0":
        fail("the engine's hardening under runsc: %s" % hd)
    print("  uid 1001, caps 0 (%s), no_new_privs, ro root, only lo, MemTotal %d kB, 400 MB "
          "refused; PID 1: %s" % (" ".join(sorted(o["caps"])), o["memtotal_kb"],
                                  hd["pid1"]["verified"]))


# The tool-uid attack's imports, its `out` and its err(fn) (the errno name, or "allowed").
ESCAPES = test_tool_uid.ATTACK[:test_tool_uid.ATTACK.index("server = None")] + r'''
libc = ctypes.CDLL(None, use_errno=True)
def c(fn, *a):
    def call():
        if fn(*a) < 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
    return call
out["setuid0"] = err(lambda: os.setuid(0))
out["setgid0"] = err(lambda: os.setgid(0))
out["chroot"] = err(lambda: os.chroot("/tmp"))
out["mount"] = err(c(libc.mount, b"none", b"/tmp", b"tmpfs", 0, None))
out["userns"] = err(c(libc.unshare, 0x10000000))
out["mountns"] = err(c(libc.unshare, 0x00020000))
out["kmsg"] = err(lambda: open("/dev/kmsg", "w"))
out["sysrq"] = err(lambda: open("/proc/sysrq-trigger", "w"))
out["kill_pid1"] = err(lambda: os.kill(1, 9))
def fill(path):
    n = 0
    try:
        with open(path, "wb") as f:
            while n < 2048:
                f.write(b"\0" * (1 << 20))
                n += 1
    except OSError as e:
        out[path + "_errno"] = errno.errorcode.get(e.errno, str(e.errno))
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return n
out["tmp_fill_mib"] = fill("/tmp/fill")
out["ws_fill_mib"] = fill("/workspace/fill")
print(json.dumps(out))
'''


# What gVisor (runsc 2022) lets tool code do that Linux does not: read another
# uid's /proc/PID/environ (the server's holds no secret: paths, deadline, run id)
# and lower its oom_score_adj (the Sentry has no per-process OOM killer: the
# memory limit ends the whole sandbox). Printed, not failed.
RUNSC_DIFFERS = ("environ", "oom_below_server")


SERVER_ENV = r'''
import json, os
pid = [d for d in os.listdir("/proc") if d.isdigit() and
       open("/proc/%s/comm" % d).read().strip() == "sandbox-mcp"][0]
env = open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
print(json.dumps({"names": [e.split(b"=")[0].decode() for e in env if e]}))
'''


# Forks until a fork fails (each child sleeps), then ends them all.
FORK_BOMB = r'''
import errno, json, os, time
kids, err = [], None
try:
    for i in range(1000):
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        kids.append(pid)
except OSError as e:
    err = e.errno
for k in kids:
    os.kill(k, 9)
for k in kids:
    os.waitpid(k, 0)
print(json.dumps({"forked": len(kids), "errno": errno.errorcode.get(err, err)}))
'''


def case_attacks(env):
    # Tool code against the server: tests/security/test_tool_uid.py's attack.
    p, rid, url = start_external(env, "attacks", "--memory", "1g")
    a = python_json(url, test_tool_uid.ATTACK)
    if a["uid"] != 1001 or a["server_uid"] != 1000:
        fail("uids under runsc: %s" % a)
    for k in ("kill", "signal0", "kill_pid1", "ptrace", "mem", "server_oom_write", "run_dir",
              "plant_socket", "plant_dir", "control_socket"):
        if a[k] == "allowed":
            fail("tool code could %s under runsc: %s" % (k, a))
    if a["home_write"] != "allowed" or a["input_edit"] != "allowed":
        fail("tool code lost what it needs under runsc: %s" % a)
    names = python_json(url, SERVER_ENV)["names"]
    if not names or any(w in n for n in names for w in ("TOKEN", "KEY", "SECRET", "PASS")):
        fail("the server's environment, readable by tool code under runsc: %s" % names)
    print("  runsc differs: %s; the server's environment holds only %s" % (
        {k: a[k] for k in RUNSC_DIFFERS}, " ".join(sorted(names))))
    o = python_json(url, ESCAPES, timeout=120)
    for k in ("setuid0", "setgid0", "chroot", "mount", "userns", "mountns", "kmsg", "sysrq",
              "kill_pid1"):
        if o[k] == "allowed":
            fail("tool code could %s under runsc: %s" % (k, o))
    # The fills stop at the tmpfs sizes the lifecycle asks (256 MiB /tmp, 512 MiB workspace).
    if o.get("/tmp/fill_errno") != "ENOSPC" or o["tmp_fill_mib"] > 256 or \
            o.get("/workspace/fill_errno") != "ENOSPC" or o["ws_fill_mib"] > 512:
        fail("fills under runsc: %s" % o)
    if tool(url, "list_files").get("success") is False:
        fail("the server stopped serving after the fills")
    finish_external(env, p, rid, url)

    # A fork bomb: under runsc the engine's pids limit counts the Sentry's host tasks
    # (8-10 per guest process), so the container gets 16 times --pids and tool code's
    # RLIMIT_NPROC is --pids (the default 256): forks fail inside with EAGAIN, as under
    # runc, and the sandbox goes on serving and is graded.
    p, rid, url = start_external(env, "bomb")
    bomb = python_json(url, FORK_BOMB, timeout=120)
    if bomb["errno"] != "EAGAIN" or not 64 <= bomb["forked"] < 256:
        fail("fork bomb under runsc: %s" % bomb)
    alive = tool(url, "execute_shell", command="echo still-here")
    if "still-here" not in json.dumps(alive):
        fail("the sandbox did not survive the fork bomb: %s" % alive)
    res = finish_external(env, p, rid, url)
    if res["status"] != "fail" or res["sandbox"]["hardening"]["pids"] != 256 * 16:
        fail("after the fork bomb: %s (host pids limit %s)" %
             (res["status"], res["sandbox"]["hardening"]["pids"]))
    # The next episode on the same engine passes.
    code, res2, _, err = env.run("banking_reserve", "after-bomb", "--agent", "oracle")
    if code != 0 or res2["status"] != "pass":
        fail("after the fork bomb: exit %d %s\n%s" % (code, res2["status"], err))
    check_runsc_result(res2, "after-bomb")
    print("  escapes refused %s; fills: /tmp %d MiB, workspace %d MiB (ENOSPC); fork bomb: "
          "%d forks then %s, still serving, graded %s; next episode pass" %
          ({k: o[k] for k in ("setuid0", "mount", "userns", "chroot", "kill_pid1")},
           o["tmp_fill_mib"], o["ws_fill_mib"], bomb["forked"], bomb["errno"], res["status"]))


def case_serve(env):
    import test_serve_integration as tsi
    s = tsi.Service("--pool", "1", "--engine", os.environ["DOCKER_HOST"], *RUNTIME)
    try:
        s.wait_pool(1, timeout=120)
        d = s.claim()
        if not d["warm"]:
            fail("the claim was not served warm from the runsc pool: %s" % d)
        r = s.finish(d["id"])
        res = json.loads(it.read(os.path.join(r["run_dir"], "result.json")))
        check_runsc_result(res, d["id"])
        if r["status"] != "fail" or r["reward"] != 0 or not res["sandbox"].get("warm"):
            fail("serve under runsc: %s, warm %s" % (r, res["sandbox"].get("warm")))
        s.stop_cleanly()
        print("  serve: warm claim under runsc in %s ms, finished (reward 0)" % d["claim_ms"])
    finally:
        s.cleanup()


def doctor_runtimes(host):
    p = subprocess.run([SANDBOXCTL, "doctor", "--json"], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, DOCKER_HOST=host))
    checks = [c for c in json.loads(p.stdout)["checks"] if c["name"] == "runtimes"]
    if len(checks) != 1:
        fail("doctor on %s: no runtimes check: %s" % (host, p.stdout))
    return checks[0]


def case_doctor(env):
    # The first engine has no runsc, which is installed: doctor says how to register it.
    c = doctor_runtimes(env.first_host)
    want = json.dumps(runsc_engine.CONFIG["runtimes"]["runsc"]["runtimeArgs"])
    if c["status"] != "warn" or runsc_engine.runsc_path() not in c.get("fix", "") or \
            want not in c.get("fix", "") or "installed" not in c["detail"]:
        fail("doctor with runsc installed, not registered: %s (want the config with %s)" %
             (c, want))
    c = doctor_runtimes(os.environ["DOCKER_HOST"])
    if c["status"] != "ok" or "runsc" not in c["detail"]:
        fail("doctor on the runsc engine: %s" % c)
    print("  doctor: %s" % c["detail"])


def case_runc(env):
    # The same tree's image under the first engine's runc: PID 1's Linux check, unchanged
    # (five zero Cap lines, CapAmb included), and the sandbox profile applied.
    rid = env.new_id("runc")
    p = subprocess.run([SANDBOXCTL, "run", "--task", "banking_reserve", "--tasks-dir", TASKS,
                        "--image", env.refs[0], "--runs-dir", env.runs, "--run-id", rid,
                        "--test-label", "--agent", "oracle", "--json"],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, DOCKER_HOST=env.first_host))
    res = json.loads(p.stdout)
    hd = res["sandbox"]["hardening"]
    p1 = hd.get("pid1") or {}
    if p.returncode != 0 or p1.get("kernel") != "Linux" or \
            "CapAmb" not in p1.get("verified", "") or not p1.get("seccomp_filter") or \
            hd.get("runtime") == "runsc":
        fail("under runc: exit %d, hardening %s\n%s" % (p.returncode, hd, p.stderr))
    f = urllib.parse.quote(json.dumps({"label": ["sandboxctl.run-id=" + rid]}))
    st, left = second_engine.engine("GET", "/containers/json?all=1&filters=" + f,
                                    host=env.first_host)
    if st != 200 or left:
        fail("run %s left its container on the first engine: %s %s" % (rid, st, left))
    print("  runc: PID 1 on Linux verified %s" % p1["verified"])


# runtimeArgs that leave runsc without the sandbox's seccomp profile, as its flag parser reads
# them (the last one wins), and ones that keep it.
BARE_ARGS = (["--network=none"], ["--network=none", "--oci-seccomp=false"],
             ["--network=none", "--oci-seccomp", "-oci-seccomp=0"])
SECCOMP_ARGS = (["--network=none", "-oci-seccomp"], ["--network=none", "--oci-seccomp=True"])


def refused(args, want):
    """Runs sandboxctl args on DOCKER_HOST: exit 3 and one stderr line that contains want."""
    try:
        p = subprocess.run([SANDBOXCTL] + args, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        fail("%s was not refused (still running after 60 s)" % args[0])
    lines = p.stderr.strip().splitlines()
    if p.returncode != 3 or len(lines) != 1 or want not in lines[0]:
        fail("%s under a runsc without --oci-seccomp: exit %d, stderr %r" %
             (args[0], p.returncode, p.stderr))
    return lines[0]


def case_noseccomp(env):
    # runsc registered without --oci-seccomp ignores the sandbox's seccomp profile: doctor
    # says so with the fix, run, sweep and serve --runtime runsc refuse it before anything
    # is made, unless --allow-no-seccomp. On engines of their own (no image needed).
    first = os.environ.get("DOCKER_HOST")
    try:
        for rargs in BARE_ARGS + SECCOMP_ARGS:
            bare = rargs in BARE_ARGS
            with runsc_engine.RunscEngine(runtime_args=rargs) as eng:
                os.environ["DOCKER_HOST"] = eng.host
                c = doctor_runtimes(eng.host)
                if bare != (c["status"] == "warn" and "without --oci-seccomp" in c["detail"] and
                            '"--oci-seccomp"' in c.get("fix", "") and
                            "daemon.json" in c.get("fix", "")):
                    fail("doctor with runtimeArgs %s: %s" % (rargs, c))
                if not bare:
                    continue
                want = "registers runsc without --oci-seccomp"
                line = refused(["run", "--task", "banking_reserve", "--tasks-dir", TASKS,
                                "--agent", "true", "--runs-dir", env.runs, "--test-label"] +
                               RUNTIME, want)
                refused(["sweep", "--task", "banking_reserve", "--tasks-dir", TASKS,
                         "--agent", "true", "--out", os.path.join(env.dir, "bare-sweep"),
                         "--test-label"] + RUNTIME, want)
                refused(["serve", "--listen", "127.0.0.1:0", "--pool", "0", "--runs-dir",
                         env.runs, "--test-label"] + RUNTIME, want)
                # --allow-no-seccomp passes the check: the run gets as far as the image,
                # which this engine lacks.
                p = subprocess.run([SANDBOXCTL, "run", "--task", "banking_reserve",
                                    "--tasks-dir", TASKS, "--agent", "true", "--runs-dir",
                                    env.runs, "--test-label", "--allow-no-seccomp"] + RUNTIME,
                                   capture_output=True, text=True, timeout=60)
                if p.returncode != 3 or want in p.stderr or "image_missing" not in p.stderr:
                    fail("--allow-no-seccomp: exit %d, %r" % (p.returncode, p.stderr))
                if eng.containers():
                    fail("a refused run left a container: %s" % eng.containers())
        # gVisor registered under another name would get runc's seccomp profile (the
        # variant is picked by the name): refused in one line, nothing made.
        with runsc_engine.RunscEngine(name="gvisor") as eng:
            os.environ["DOCKER_HOST"] = eng.host
            other = refused(["run", "--task", "banking_reserve", "--tasks-dir", TASKS, "--agent",
                             "true", "--runs-dir", env.runs, "--test-label", "--runtime",
                             "gvisor"], "runs gVisor under that name")
            if '"runsc"' not in other or eng.containers():
                fail("gVisor named gvisor: %r, containers %s" % (other, eng.containers()))
    finally:
        if first is None:
            os.environ.pop("DOCKER_HOST", None)
        else:
            os.environ["DOCKER_HOST"] = first
    print("  without --oci-seccomp (%d spellings): doctor warns, run/sweep/serve refused: %s" %
          (len(BARE_ARGS), line))
    print("  gVisor under another name: %s" % other)


CASES = {"doctor": case_doctor, "runc": case_runc, "tasks": case_tasks, "hardening": case_hardening, "attacks": case_attacks,
         "serve": case_serve, "noseccomp": case_noseccomp}
# Cases on engines of their own: no images, no shared runsc engine.
STANDALONE = {"noseccomp"}


def build_images():
    """This tree's images (built when missing): their <repo>:<hash> references."""
    p = subprocess.run([SANDBOXCTL, "build", "--all", "--json"], capture_output=True, text=True,
                       timeout=1800)
    refs = [json.loads(l)["ref"] for l in p.stdout.splitlines()
            if l.strip() and json.loads(l).get("event") == "result"]
    if p.returncode != 0 or len(refs) != 2:
        fail("sandboxctl build --all: exit %d %s\n%s" % (p.returncode, refs, p.stderr[-2000:]))
    return refs


def main():
    names = [n for n in sys.argv[1:] if n != "all"] or list(CASES)
    if any(n not in CASES for n in names):
        sys.exit("usage: test_runsc.py all | %s..." % " | ".join(CASES))
    if os.environ.get("SBX_RUN_TEST_IMAGE") != "real":
        raise Skip("runs this tree's real images: set SBX_RUN_TEST_IMAGE=real")
    if not runsc_engine.runsc_path():
        if os.environ.get("SBX_CI"):
            fail("runsc is not installed (scripts/deps.sh installs it)")
        raise Skip("runsc is not installed")
    if all(n in STANDALONE for n in names):
        for n in names:
            env = it.Env()
            try:
                CASES[n](env)
            finally:
                env.cleanup()
            print("ok   %s" % n)
        return
    refs = build_images()
    t0 = time.time()
    try:
        eng = runsc_engine.RunscEngine(refs)
        eng.__enter__()
    except second_engine.Unavailable as e:
        raise Skip(str(e))
    print("runsc engine up, %d MB of images copied in %.1f s" %
          (sum(eng.copied.values()) / 1e6, time.time() - t0))
    failed = []
    try:
        # Every helper (it.containers, pick_image, the serve test's) asks DOCKER_HOST.
        first = second_engine.default_host()
        os.environ["DOCKER_HOST"] = eng.host
        args = it.Env.args
        it.Env.args = lambda self, *a: args(self, *a) + RUNTIME
        for n in names:
            env = it.Env()
            env.first_host, env.refs = first, refs
            t = time.time()
            try:
                CASES[n](env)
                print("ok   %s (%.0f s)" % (n, time.time() - t))
            except Exception as e:  # noqa: BLE001 - report each case, run the rest
                failed.append(n)
                # The line of the case that failed, so a CI log says which step it was.
                where = [f for f in traceback.extract_tb(e.__traceback__)
                         if f.filename == os.path.abspath(__file__)][-1]
                print("FAIL %s: %s: %s (at %s:%d: %s)" % (n, type(e).__name__, e,
                                                     os.path.basename(where.filename),
                                                     where.lineno, where.line))
            finally:
                env.cleanup()
    finally:
        left = eng.close()
    if left:
        fail("left on the runsc engine: %s" % left)
    if failed:
        fail("failed: %s" % failed)


if __name__ == "__main__":
    run_main(main)

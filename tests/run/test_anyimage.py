#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Any image is a sandbox (issue 30 item 1), on the real engine.

Images with none of sandboxctl's files, made offline here
(tests/lib/foreign_images.py): a glibc image without Python, an image with
no shell, a busybox-static image, and a hostile one. On each, the demo agent
passes a spreadsheet task (the native C tools), and a scripted agent (REST,
through the relay) probes from inside: tool code's uid, capabilities and
no-new-privileges, the shared workspace, the read-only bundle, python3 and
sh where the image lacks them (a tool error, not a crash). result.json must
show the same hardening as on our images plus the bundle's hash. The hostile
image's label (ours, claimed), ENTRYPOINT, USER, ENV (LD_PRELOAD,
SANDBOX_UID=0, a PATH that shadows the helpers, a huge variable),
HEALTHCHECK, VOLUME, its own /opt/sandboxctl programs and a setuid-root
busybox change none of it. refused: --network published, symlinked mount
points, a VOLUME over our mounts, a missing image, each one line and no
container. task-image: `image:` in task.yaml (run, sweep). serve: --image
with a warm pool, solved over MCP with the official SDK.

Usage: test_anyimage.py [busybox|glibc|noshell|hostile|refused|task-image|serve ...]
(none: all)
"""
import json
import os
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import foreign_images  # noqa: E402
import test_integration as it  # noqa: E402

PROBE = r'''
import json, os, sys, urllib.error, urllib.request
base = os.environ["SANDBOX_REST_URL"]
def call(name, args):
    req = urllib.request.Request(base + "/tools/call", method="POST",
        data=json.dumps({"tool_name": name, "arguments": args}).encode(),
        headers={"Content-Type": "application/json"})
    try:
        return json.loads(urllib.request.urlopen(req, timeout=60).read())
    except urllib.error.HTTPError as e:
        return json.loads(e.read() or b"{}")
out = {"shell": call("execute_shell", {"command": open(sys.argv[2]).read()}),
       "python": call("execute_python", {"code": "print(6 * 7)"}),
       "files": call("list_files", {})}
with open(sys.argv[1], "w") as f:
    json.dump(out, f)
call("complete_task", {})
'''

# Tool code's view, one "key=value" line each (busybox and dash both run it).
SHELL = ("echo uid=$(id -u); grep -E '^(NoNewPrivs|CapEff|CapBnd)' /proc/self/status | tr -d '\\t' "
         "| sed 's/:/=/'; echo ld_preload=$LD_PRELOAD; "
         "echo hi > /workspace/agent.txt && echo ws=$(cat /workspace/agent.txt); "
         "echo bundle=$(touch /opt/sandboxctl/v1/bin/x 2>&1 | grep -c 'Read-only file system'); "
         "echo root=$(touch /etc/x 2>&1 | grep -c 'Read-only file system'); "
         "[ -e /tmp/pwned ] || [ -e /workspace/pwned ] && echo pwned=yes || echo pwned=no; "
         "echo pid1=$(tr '\\0' ' ' < /proc/1/cmdline)")
SHELL_HOSTILE = "sleep 2; " + SHELL + (  # 2 s: the image's 1 s HEALTHCHECK would have run
    "; echo data=$(grep -c ' /data tmpfs ' /proc/mounts); "
    "ls -l /bin/busybox-suid | cut -c1-10 | sed 's/^/suid_mode=/'; "
                         "echo suid_uid=$(/bin/busybox-suid id -u)")


def check_hardening(name, res):
    hd = res["sandbox"]["hardening"]
    want = {"network_mode": "none", "cap_drop": ["ALL"], "readonly_rootfs": True,
            "no_new_privileges": True, "user": "0:0", "privileged": False, "host_mounts": 0,
            "all_caps_dropped_by_pid1": True, "tool_code_uid": 1001, "server_uid": 1000,
            "seccomp": "sandbox", "memory_bytes": 2 << 30, "pids": 256,
            "caps_added_at_start": ["SETPCAP", "SETUID", "SETGID"]}
    bad = {k: hd.get(k) for k, v in want.items() if hd.get(k) != v}
    if bad or len(hd.get("bundle") or "") != 12:
        it.fail("%s: hardening differs from our images' (%s) or no bundle hash: %s" %
                (name, bad, hd))
    if "setuid(0) refused" not in (hd.get("pid1") or {}).get("verified", ""):
        it.fail("%s: PID 1 did not verify its drop: %s" % (name, hd.get("pid1")))


def run_demo(env, name, image):
    code, res, rdir, err = env.run("banking_reserve", "demo-" + name, "--agent", "demo",
                                   image=image, timeout=120)
    if code != 0 or res["status"] != "pass":
        it.fail("%s: the demo agent did not pass on %s: exit %d, %s\n%s" %
                (name, image, code, res, err))
    check_hardening(name, res)
    it.check_gone(res["run_id"])


def run_probe(env, name, image, shell):
    agent = os.path.join(env.dir, "probe.py")
    out = os.path.join(env.dir, "probe-%s.json" % name)
    cmd = os.path.join(env.dir, "probe.sh")
    with open(agent, "w") as f:
        f.write(PROBE)
    with open(cmd, "w") as f:  # a file: the agent's command line goes through the host's sh
        f.write(shell)
    code, res, rdir, err = env.run("banking_reserve", "probe-" + name, "--agent",
                                   "python3 %s %s %s" % (agent, out, cmd),
                                   image=image, timeout=120)
    if res.get("ended_by") != "complete_task" or res["status"] == "infra_error":
        it.fail("%s: the probe's episode did not end by complete_task: %s\n%s" % (name, res, err))
    check_hardening(name, res)
    it.check_gone(res["run_id"])
    with open(out) as f:
        probe = json.load(f)
    if probe["files"].get("success") is not True:
        it.fail("%s: list_files failed: %s" % (name, probe["files"]))
    # No Python in any of these images: a tool error naming it, the server still serving.
    py = probe["python"]
    if py.get("success") is not False or "python3" not in (py.get("error") or ""):
        it.fail("%s: execute_python without python3 is not a clear tool error: %s" % (name, py))
    return probe


def shell_facts(name, probe):
    sh = probe["shell"]
    if sh.get("success") is not True:
        it.fail("%s: execute_shell failed: %s" % (name, sh))
    facts = dict(l.split("=", 1) for l in sh["result"]["stdout"].splitlines() if "=" in l)
    want = {"uid": "1001", "NoNewPrivs": "1", "CapEff": "0000000000000000",
            "CapBnd": "0000000000000000", "ld_preload": "", "ws": "hi", "bundle": "1",
            "root": "1", "pwned": "no"}
    bad = {k: facts.get(k) for k, v in want.items() if facts.get(k) != v}
    if bad or not facts.get("pid1", "").startswith("/opt/sandboxctl/v1/bin/sandbox-init"):
        it.fail("%s: tool code's view is wrong: %s\n%s" % (name, bad, sh["result"]))
    return facts


def case_image(name, shell=True):
    def case(env):
        need_bundle_source()
        image = foreign_images.ensure(name)
        run_demo(env, name, image)
        probe = run_probe(env, name, image, SHELL_HOSTILE if name == "hostile" else SHELL)
        if shell:
            facts = shell_facts(name, probe)
            if name == "hostile" and (facts.get("suid_mode") != "-rwsr-xr-x" or
                                      facts.get("suid_uid") != "1001"):
                it.fail("hostile: the setuid-root busybox is not inert: %s" % facts)
            # Its VOLUME is a capped tmpfs, not a writable volume on the read-only root.
            if name == "hostile" and facts.get("data") != "1":
                it.fail("hostile: VOLUME /data is not a tmpfs: %s" % facts)
        else:
            sh = probe["shell"]
            if sh.get("success") is not False or "/bin/sh" not in (sh.get("error") or ""):
                it.fail("%s: execute_shell without a shell is not a clear tool error: %s" %
                        (name, sh))
        print("  %s: pass" % name)
    return case


def case_refused(env):
    """What a foreign image cannot have is refused in one line, and no container is left:
    --network published, a symlink where the bundle is mounted, a VOLUME over our mounts,
    a missing image."""
    need_bundle_source()
    image = foreign_images.ensure("busybox")
    for extra, why in ((["--network", "published"], "--network published needs one of ours"),):
        code, res, rdir, err = env.run("banking_reserve", "refused", "--agent", "demo",
                                       *extra, image=image, timeout=60)
        if code == 0 or why not in err:
            it.fail("refused: %s on a foreign image: exit %d, stderr %r" % (extra, code, err))
        it.check_gone(res["run_id"])
    for name in ("link-workspace", "link-opt", "link-tmp"):
        code, res, rdir, err = env.run("banking_reserve", name, "--agent", "demo",
                                       image=foreign_images.ensure(name), timeout=60)
        if code == 0 or "as a symlink: sandboxctl mounts the bundle" not in err:
            it.fail("refused: %s: exit %d, stderr %r" % (name, code, err))
        it.check_gone(res["run_id"])
    for name in ("volume-bundle", "volume-run"):
        code, res, rdir, err = env.run("banking_reserve", name, "--agent", "demo",
                                       image=foreign_images.ensure(name), timeout=60)
        if code == 0 or "where the sandbox has its own mounts" not in err:
            it.fail("refused: %s: exit %d, stderr %r" % (name, code, err))
        it.check_gone(res["run_id"])
    code, res, rdir, err = env.run("banking_reserve", "missing", "--agent", "demo",
                                   image="sbx-foreign-test/nosuch:none", timeout=60)
    if code == 0 or "not on the engine" not in err:
        it.fail("refused: a missing image: exit %d, stderr %r" % (code, err))


def case_task_image(env):
    """A task that declares `image:` runs there without --image (run, and sweep with its
    engine check), --image still wins, and libreoffice (or gui) with image is refused at load."""
    need_bundle_source()
    image = foreign_images.ensure("busybox")
    tdir = os.path.join(env.dir, "tasks", "banking_reserve")
    shutil.copytree(os.path.join(it.TASKS, "banking_reserve"), tdir)
    with open(os.path.join(tdir, "task.yaml"), "a") as f:
        f.write("\nimage: %s\n" % image)
    rid = env.new_id("task-image")
    p = subprocess.run([it.SANDBOXCTL, "run", "--task-dir", tdir, "--agent", "demo", "--json",
                        "--runs-dir", env.runs, "--run-id", rid, "--test-label"],
                       capture_output=True, text=True, timeout=120)
    res = json.loads(p.stdout.strip().splitlines()[-1])
    if p.returncode != 0 or res["sandbox"]["image"] != image:
        it.fail("task image: exit %d, image %s\n%s" % (p.returncode, res["sandbox"]["image"],
                                                       p.stderr))
    check_hardening("task-image", res)
    it.check_gone(rid)
    out = os.path.join(env.dir, "sweep")
    p = subprocess.run([it.SANDBOXCTL, "sweep", "--tasks-dir", os.path.dirname(tdir), "--task",
                        "banking_reserve", "--agent", "demo", "--epochs", "2", "--out", out,
                        "--test-label", "--quiet"], capture_output=True, text=True, timeout=120)
    with open(os.path.join(out, "results.jsonl")) as f:
        rows = [json.loads(l) for l in f if l.strip()]
    images = set()
    for r in rows:
        with open(os.path.join(out, "runs", r["run_id"], "result.json")) as f:
            images.add(json.load(f)["sandbox"]["image"])
    if p.returncode != 0 or [r["status"] for r in rows] != ["pass", "pass"] or images != {image}:
        it.fail("sweep of a task with its image: exit %d, %s, images %s\n%s" %
                (p.returncode, rows, images, p.stderr))
    code, res, rdir, err = env.run("banking_reserve", "task-image-flag", "--agent", "demo",
                                   image=it.REAL_SLIM, timeout=120)
    if code != 0 or res["sandbox"]["hardening"].get("bundle") is not None:
        it.fail("--image over the task's: exit %d, %s" % (code, res["sandbox"]))
    with open(os.path.join(tdir, "task.yaml"), "a") as f:
        f.write("libreoffice: true\n")
    p = subprocess.run([it.SANDBOXCTL, "tasks", "validate", "--tasks-dir",
                        os.path.dirname(tdir)], capture_output=True, text=True, timeout=60)
    if p.returncode == 0 or "image: a task with gui or libreoffice" not in p.stdout + p.stderr:
        it.fail("libreoffice + image was not refused: exit %d\n%s%s" % (p.returncode, p.stdout,
                                                              p.stderr))
    print("  task-image: pass")


def case_serve(_env):
    """serve --image REF --pool-image REF=1 on a foreign image: a warm claim, solved over
    MCP with the official SDK (examples/python_agent.py's solver), passes; tool code is
    uid 1001 there; nothing is left. Under --reuse 2 a foreign image's sandbox stays
    single use (a reset knows only our images' writable places): the next claim gets
    another sandbox, no reset is made, none is counted retired."""
    need_bundle_source()
    sys.path.insert(0, os.path.join(it.SRC, "tests", "serve"))
    import asyncio
    import test_serve_integration as tsi
    image = foreign_images.ensure("glibc")
    s = tsi.Service("--image", image, "--pool-image", image + "=1", "--reuse", "2")
    try:
        size = 'sandboxctl_serve_pool_size{image="%s"}' % image
        if not tsi.wait_until(lambda: s.metrics().get(size, 0) >= 1, 60, poll=0.2):
            it.fail("serve: the foreign image's pool did not fill: %s" % s.metrics())
        o = s.claim()
        if not o.get("warm"):
            it.fail("serve: the claim was not warm: %s" % o)
        sh = tsi.rest_post(o["rest_url"], "/tools/call",
                           {"tool_name": "execute_shell", "arguments": {"command": "id -u"}})
        if (sh.get("result") or {}).get("stdout") != "1001\n":
            it.fail("serve: tool code's uid: %s" % sh)
        asyncio.run(tsi.solve_over_mcp(o["mcp_url"], "banking_reserve"))
        r = s.finish(o["id"])
        if r["status"] != "pass" or r["reward"] != 1:
            it.fail("serve: the episode on %s did not pass: %s" % (image, r))
        o2 = s.claim()
        r2 = s.finish(o2["id"])
        m = s.metrics()
        if (o2.get("reused") != 0 or r2.get("sandbox_id") == r.get("sandbox_id")
                or m.get("sandboxctl_serve_resets_total", 0) != 0
                or m.get("sandboxctl_serve_reset_retired_total", 0) != 0):
            it.fail("serve --reuse: a foreign image's sandbox was reused: %s, %s, %s"
                    % (o2, r2.get("sandbox_id"), m))
        s.stop_cleanly()
    finally:
        s.cleanup()
    print("  serve: pass")


CASES = {"busybox": case_image("busybox"), "glibc": case_image("glibc"),
         "noshell": case_image("noshell", shell=False), "hostile": case_image("hostile"),
         "refused": case_refused, "task-image": case_task_image, "serve": case_serve}

def need_bundle_source():
    """The bundle is copied from our slim image: without it these tests cannot run."""
    if not it.image_exists(it.REAL_SLIM):
        raise it.Skip("%s missing: run 'sandboxctl build --slim'" % it.REAL_SLIM)


if __name__ == "__main__":
    signal.alarm(240)  # every case is bounded, whatever hangs
    sys.exit(it.run_cases(sys.argv[1:] or list(CASES), CASES, it.Env))

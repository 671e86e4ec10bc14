#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Integration tests of `sandboxctl sweep` on the machine's real Docker engine.

Usage: test_sweep_integration.py CASE  (see CASES at the bottom)

  basic          2 tasks x 2 agents (oracle, an agent that does nothing) x 3
                 epochs, --jobs 3: 12 results, the summary's numbers, show, compare
  example        examples/sweep.sh oracle 1 banking_reserve, as the README runs it:
                 its sweep directory, result and summary
  sigint-resume  SIGINT midway (exit 130, nothing left behind), then --resume:
                 every episode has exactly one result
  sigint-group   SIGINT to the whole process group (a terminal's Ctrl-C) while
                 gen.py runs: exit 130, results, no orphan run folder, --resume
  sigkill-resume SIGKILL midway: whole lines only, gc removes the orphans, --resume
                 gives each episode exactly once under fresh run ids
  sigint-grace   one SIGINT lets running episodes finish (results); two interrupt
                 them at once (recorded as interrupted)
  agent-error    a crashing agent gives agent_error once: never retried
  infra          an image without the sandbox's PID 1: infra_error, retried
                 (--retries 1) and counted; exit 3, resumable
  seeds          --seed-from: epoch e of a seedable task runs seed N+e, recorded;
                 --memory, --pids, --timeout reach every episode
  llm            the model agent against the fake provider (tests/agents): token
                 usage and tool calls summed in the summary
  require-pass   --require-pass above the pass rate: exit 1
  tls            a tcp:// engine with TLS from DOCKER_CERT_PATH beside the unix
                 socket: both take episodes
  engines        a second dockerd started here (its own network namespace, socket,
                 data root, no bridge, no iptables), the image copied into it over the API
                 (GET /images/get, POST /images/load): episodes spread over both;
                 then it is stopped midway through a sweep: drained, its episodes
                 re-queued on the first, every episode done once

The image: $SBX_RUN_TEST_IMAGE ("real": $SBX_TEST_SLIM_IMAGE, default
sandboxctl/sandbox-slim:latest), else the dev image tests/run/dev-image.sh builds from this build's binaries.
Sandboxes are labelled as test objects; each case checks none is left.
"""
import http.client
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import second_engine  # noqa: E402
from itest import (BUILD, DEFAULT_SLIM_IMAGE, SANDBOXCTL, SKIP, SLIM_IMAGE, SRC, TASKS, Skip,  # noqa: E402
                   fail, run_cases, wait_until)
DEV_IMAGE = "sandboxctl-test/run-dev:latest"
BROKEN_IMAGE = "sandboxctl-test/sweep-broken:latest"

# ---- the engine -------------------------------------------------------------

# One Engine API client for every multi-engine test: tests/lib/second_engine.py.
UnixHTTP = second_engine.UnixHTTP
default_host = second_engine.default_host
engine = second_engine.engine


def image_exists(ref, host=None):
    st, _ = engine("GET", "/images/%s/json" % urllib.parse.quote(ref, safe=""), host=host)
    return st == 200


def containers_of(run_ids, host=None):
    f = urllib.parse.quote(json.dumps({"label": ["sandboxctl.test=1"]}))
    st, body = engine("GET", "/containers/json?all=1&filters=" + f, host=host)
    if st != 200:
        fail("engine: list containers: %s %s" % (st, body))
    return [c for c in body if c.get("Labels", {}).get("sandboxctl.run-id") in run_ids]


def pick_image():
    want = os.environ.get("SBX_RUN_TEST_IMAGE", "")
    if want == "real":
        ref = SLIM_IMAGE
        if not image_exists(ref):
            raise Skip("%s missing: run 'sandboxctl build' first" % ref)
        return ref
    if want:
        return want
    subprocess.run(["sh", os.path.join(SRC, "tests/run/dev-image.sh"), SRC, BUILD, DEV_IMAGE],
                   check=True, stdout=subprocess.DEVNULL)
    return DEV_IMAGE


def import_tar(ref, files, host=None):
    """Imports a one-layer image holding files {path: bytes, or str: a symlink} through the API."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            if isinstance(data, str):  # a symlink to data
                info.type, info.linkname = tarfile.SYMTYPE, data
                t.addfile(info)
                continue
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    repo, tag = ref.rsplit(":", 1)
    st, body = engine("POST", "/images/create?fromSrc=-&repo=%s&tag=%s" % (
        urllib.parse.quote(repo, safe=""), tag), body=buf.getvalue(), host=host,
        headers={"Content-Type": "application/x-tar"})
    if st != 200:
        fail("import %s: %s %s" % (ref, st, body))


def copy_image(ref, src_host, dst_host):
    return second_engine.copy_image(ref, src_host, dst_host)


# ---- running sandboxctl -----------------------------------------------------

class Env:
    def __init__(self, image):
        self.dir = tempfile.mkdtemp(prefix="sbx-sweep-it-")
        self.image = image
        self.hosts = [None]

    def sweep_dir(self, name):
        return os.path.join(self.dir, name)

    def args(self, out, *extra):
        return [SANDBOXCTL, "sweep", "--tasks-dir", TASKS, "--image", self.image,
                "--out", out, "--test-label", "--quiet"] + list(extra)

    def run(self, args, timeout=600):
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout)

    def run_ids(self):
        ids = set()
        for root, dirs, _ in os.walk(self.dir):
            if os.path.basename(root) == "runs":
                ids.update(dirs)
                dirs[:] = []
        return ids

    def check_clean(self):
        ids = self.run_ids()
        for h in self.hosts:
            left = containers_of(ids, host=h)
            if left:
                for c in left:
                    engine("DELETE", "/containers/%s?force=1&v=1" % c["Id"], host=h)
                fail("containers left behind on %s: %s" % (
                    h or "the default engine", [c["Labels"]["sandboxctl.run-id"] for c in left]))

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def results(d):
    with open(os.path.join(d, "results.jsonl")) as f:
        text = f.read()
    if text and not text.endswith("\n"):
        fail("results.jsonl does not end with a newline")
    return [json.loads(line) for line in text.splitlines()]


def done(lines):
    return [l for l in lines if l["status"] not in ("interrupted", "infra_error")]


def check_exactly_once(lines, n):
    eps = [l["episode"] for l in done(lines)]
    if sorted(eps) != list(range(n)):
        fail("episodes with a result: %s, want each of 0..%d once" % (sorted(eps), n - 1))


def summary(d):
    with open(os.path.join(d, "summary.json")) as f:
        return json.load(f)


def expect(p, code, what):
    if p.returncode != code:
        fail("%s: exit %d (want %d)\nstdout: %s\nstderr: %s" % (
            what, p.returncode, code, p.stdout[-3000:], p.stderr[-3000:]))


# ---- cases ------------------------------------------------------------------

def case_basic(env):
    d = env.sweep_dir("basic")
    t0 = time.time()
    p = env.run(env.args(d, "--task", "banking_reserve", "--task", "sales_revenue",
                         "--agent", "oracle", "--agent", "true", "--epochs", "3",
                         "--jobs", "3", "--pass-at", "1,3", "--tag", "purpose=test",
                         "--json"))
    expect(p, 0, "sweep")
    took = time.time() - t0
    lines = results(d)
    if len(lines) != 12:
        fail("%d result lines, want 12" % len(lines))
    check_exactly_once(lines, 12)
    for l in lines:
        want = "pass" if l["agent"] == "oracle" else "fail"
        if l["status"] != want:
            fail("%s (agent %s): %s, want %s" % (l["run_id"], l["agent"], l["status"], want))
        if not os.path.isfile(os.path.join(d, "runs", l["run_id"], "result.json")):
            fail("no result.json for %s" % l["run_id"])
        # Each episode keeps its trajectory.json (ATIF): the oracle completes by the control API.
        traj = json.load(open(os.path.join(d, "runs", l["run_id"], "trajectory.json")))
        if traj["session_id"] != l["run_id"] or (l["agent"] == "oracle") != (
                traj["steps"][-1]["source"] == "system"):
            fail("%s: trajectory.json %s" % (l["run_id"], traj))
    # Epoch-major: no epoch-2 episode before an epoch-0 one was taken.
    plan = json.load(open(os.path.join(d, "sweep.json")))
    if plan["episodes"] != 12 or plan["tags"] != {"purpose": "test"} or not plan["image_id"]:
        fail("sweep.json: %s" % plan)
    # Run ids carry the sweep's id, so two sweeps never share one.
    if any(not l["run_id"].startswith(plan["id"] + "." + l["task"] + ".a") for l in lines):
        fail("run ids: %s" % [l["run_id"] for l in lines])
    s = json.loads(p.stdout)
    if s != summary(d):
        fail("--json output differs from summary.json")
    o = s["overall"]
    if o["episodes"] != 12 or abs(o["pass_rate"]["value"] - 0.5) > 1e-9:
        fail("overall: %s" % o)
    # 6/12 at 95%: Wilson [0.253782, 0.746218] (by hand from the formula).
    if abs(o["pass_rate"]["lo"] - 0.253782) > 1e-5 or abs(o["pass_rate"]["hi"] - 0.746218) > 1e-5:
        fail("overall Wilson interval: %s" % o["pass_rate"])
    # pass@3 per task x agent is 1 (oracle) or 0 (true): the mean over the four is 0.5.
    if abs(o["pass_at"]["3"] - 0.5) > 1e-9:
        fail("overall pass@3: %s" % o["pass_at"])
    for c in s["cells"]:
        want = 1.0 if c["agent"] == "oracle" else 0.0
        if c["episodes"] != 3 or c["pass_rate"]["value"] != want or c["pass_at"]["1"] != want:
            fail("cell %s" % c)
    show = env.run([SANDBOXCTL, "sweep", "show", d, "--json"])
    expect(show, 0, "sweep show")
    if json.loads(show.stdout) != s:
        fail("show --json differs from the sweep's summary")
    text = env.run([SANDBOXCTL, "sweep", "show", d])
    if "banking_reserve" not in text.stdout or "3/3" not in text.stdout:
        fail("show: %s" % text.stdout)
    cmp_ = env.run([SANDBOXCTL, "sweep", "compare", d, d, "--json"])
    expect(cmp_, 0, "sweep compare")
    c = json.loads(cmp_.stdout)
    if c["overall"]["pairs"] != 12 or c["overall"]["p_value"] != 1:
        fail("compare with itself: %s" % c["overall"])
    env.check_clean()
    print("basic: 12 episodes in %.1f s (%.0f/min)" % (took, 12 * 60 / took))


def case_example(env):
    """examples/sweep.sh as the README runs it (1 epoch of one task, the oracle), against
    this build's sandboxctl: one sweeps/oracle-<time> directory below the working
    directory, its one result a PASS, its summary on stdout and in summary.json."""
    slim = DEFAULT_SLIM_IMAGE
    if not image_exists(slim):
        raise Skip("sweep.sh runs each task's default image; %s is missing" % slim)
    cwd = env.sweep_dir("example")
    os.mkdir(cwd)
    e = dict(os.environ, SANDBOXCTL=SANDBOXCTL, SBX_TASKS_DIR=TASKS)
    p = subprocess.run(["sh", os.path.join(SRC, "examples", "sweep.sh"), "oracle", "1",
                        "banking_reserve"], cwd=cwd, env=e, capture_output=True, text=True,
                       timeout=600)
    expect(p, 0, "examples/sweep.sh")
    made = os.listdir(os.path.join(cwd, "sweeps"))
    if len(made) != 1 or not made[0].startswith("oracle-"):
        fail("sweeps/: %s" % made)
    d = os.path.join(cwd, "sweeps", made[0])
    lines = results(d)
    if len(lines) != 1 or lines[0]["status"] != "pass" or lines[0]["task"] != "banking_reserve":
        fail("results.jsonl: %s" % lines)
    if not os.path.isfile(os.path.join(d, "runs", lines[0]["run_id"], "result.json")):
        fail("no result.json for %s" % lines[0]["run_id"])
    o = summary(d)["overall"]
    if o["episodes"] != 1 or o["pass_rate"]["value"] != 1:
        fail("summary.json overall: %s" % o)
    if "banking_reserve" not in p.stdout or "1/1" not in p.stdout:
        fail("the summary on stdout: %s" % p.stdout)
    # Not test-labelled (the script passes no --test-label): look for its run by id.
    f = urllib.parse.quote(json.dumps({"label": ["sandboxctl.run-id=" + lines[0]["run_id"]]}))
    st, left = engine("GET", "/containers/json?all=1&filters=" + f)
    if st != 200 or left:
        fail("containers left behind: %s %s" % (st, left))
    print("example: examples/sweep.sh oracle 1 banking_reserve -> %s" % made[0])


def case_sigint_resume(env):
    d = env.sweep_dir("sigint")
    args = env.args(d, "--task", "banking_reserve", "--task", "sales_revenue",
                    "--agent", "oracle", "--epochs", "6", "--jobs", "2", "--stop-grace", "0")
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not wait_until(lambda: result_lines(d) >= 2, 120):
        proc.kill()
        fail("no results within 120 s")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    if proc.returncode != 130:
        fail("interrupted sweep: exit %d (want 130)\n%s" % (proc.returncode, err[-2000:]))
    if "--resume" not in err:
        fail("interrupted sweep does not say how to resume: %s" % err[-2000:])
    env.check_clean()
    first = results(d)
    if len(done(first)) >= 12:
        fail("the SIGINT came too late: everything finished")
    p = env.run([SANDBOXCTL, "sweep", "--resume", d, "--quiet", "--jobs", "2"])
    expect(p, 0, "resume")
    lines = results(d)
    check_exactly_once(lines, 12)
    # What was done before is not run again.
    before = {l["episode"] for l in done(first)}
    again = [l["episode"] for l in lines[len(first):] if l["episode"] in before]
    if again:
        fail("resume ran finished episodes again: %s" % again)
    if summary(d)["overall"]["episodes"] != 12:
        fail("summary after resume: %s" % summary(d)["overall"])
    env.check_clean()
    print("sigint-resume: %d results before, %d interrupted, %d lines in all" % (
        len(done(first)), sum(l["status"] == "interrupted" for l in first), len(lines)))


def case_sigint_group(env):
    """Ctrl-C in a terminal: SIGINT to sandboxctl's whole process group while the task's
    host-side generators (gen.py) run. They and the agents are in groups of their own:
    the generators finish, the running episodes end within the stop grace as results
    (an agent hit by the SIGINT would be an agent_error), exit 130 with the resume
    line, every run folder has its result.json, and --resume completes the set."""
    tasks = os.path.join(env.dir, "tasks")
    os.makedirs(tasks)
    p = env.run([SANDBOXCTL, "tasks", "new", os.path.join(tasks, "slowgen")])
    expect(p, 0, "tasks new")
    gen = os.path.join(tasks, "slowgen", "gen.py")
    text = open(gen).read().replace(
        "def main():\n",
        "def main():\n"
        "    import time\n"
        "    if os.environ.get('GEN_MARK'):\n"
        "        with open(os.environ['GEN_MARK'], 'a') as f:\n"
        "            f.write('%d\\n' % os.getpid())\n"
        "        time.sleep(1.5)\n", 1)
    with open(gen, "w") as f:
        f.write(text)
    mark = os.path.join(env.dir, "gen-started")
    d = env.sweep_dir("sigint-group")
    args = env.args(d, "--task", "slowgen", "--agent", "sleep 2", "--epochs", "4",
                    "--jobs", "2", "--seed-from", "1", "--stop-grace", "60")
    args[3] = tasks
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=dict(os.environ, GEN_MARK=mark))
    if not wait_until(lambda: os.path.exists(mark), 60, poll=0.02):
        proc.kill()
        fail("no generator started within 60 s")
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    if proc.returncode != 130 or "interrupted;" not in err or "--resume" not in err:
        fail("SIGINT to the group: exit %d (want 130 and the resume line)\n%s" % (
            proc.returncode, err[-2000:]))
    first = results(d)
    if not first or any(l["status"] != "fail" for l in first):
        fail("the episodes running at the SIGINT should end as results (fail): %s" % first)
    for rid in os.listdir(os.path.join(d, "runs")):
        if not os.path.isfile(os.path.join(d, "runs", rid, "result.json")):
            fail("run folder %s has no result.json" % rid)
    env.check_clean()
    p = env.run([SANDBOXCTL, "sweep", "--resume", d, "--quiet", "--jobs", "2"])
    expect(p, 0, "resume")
    lines = results(d)
    check_exactly_once(lines, 4)
    env.check_clean()
    print("sigint-group: %d results before the resume, %d after" % (len(first), len(lines)))


def result_lines(d):
    """How many lines d/results.jsonl holds so far (0 before it exists)."""
    path = os.path.join(d, "results.jsonl")
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        return len(f.read().splitlines())


def wait_for_runs(d, n, timeout=120):
    runs = os.path.join(d, "runs")
    if not wait_until(lambda: os.path.isdir(runs) and len(os.listdir(runs)) >= n, timeout):
        fail("fewer than %d runs started within %d s" % (n, timeout))


def case_sigkill_resume(env):
    """SIGKILL at any instant: results.jsonl holds whole lines only, `gc` removes the
    orphaned sandboxes, and --resume ends with every episode exactly once (a run
    directory the killed sweep left is not reused)."""
    d = env.sweep_dir("sigkill")
    proc = subprocess.Popen(env.args(d, "--task", "banking_reserve", "--task", "sales_revenue",
                                     "--agent", "oracle", "--epochs", "4", "--jobs", "2"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: result_lines(d) >= 3, 120, poll=0.02)
    proc.kill()
    proc.wait(timeout=30)
    before = results(d)  # also checks the file ends with a whole line
    # A create the engine was serving when sandboxctl died still completes: let it land.
    time.sleep(2)
    for rid in os.listdir(os.path.join(d, "runs")):
        subprocess.run([SANDBOXCTL, "gc", "--run-id", rid], capture_output=True, timeout=60)
    env.check_clean()
    left = sorted(os.listdir(os.path.join(d, "runs")))
    p = env.run([SANDBOXCTL, "sweep", "--resume", d, "--quiet", "--jobs", "2"])
    expect(p, 0, "resume after SIGKILL")
    lines = results(d)
    check_exactly_once(lines, 8)
    ids = [l["run_id"] for l in lines]
    if len(ids) != len(set(ids)):
        fail("a run id was used twice: %s" % ids)
    env.check_clean()
    print("sigkill-resume: %d results before the kill, %d run directories, %d lines after" % (
        len(done(before)), len(left), len(lines)))


def two_running(env, d, agent, epochs):
    """A sweep into d of banking_reserve by agent (2 jobs, 60 s stop grace), once two
    of its episodes have started."""
    proc = subprocess.Popen(env.args(d, "--task", "banking_reserve", "--agent", agent,
                                     "--epochs", str(epochs), "--jobs", "2", "--stop-grace", "60"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_runs(d, 2)
    return proc


def case_sigint_grace(env):
    # One Ctrl-C: nothing new starts; the two running episodes (a 2 s agent) finish
    # within the grace and are results, not interrupted.
    d = env.sweep_dir("grace")
    proc = two_running(env, d, "sleep 2", 6)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    if proc.returncode != 130 or "stopping" not in err:
        fail("one SIGINT: exit %d\n%s" % (proc.returncode, err[-2000:]))
    lines = results(d)
    if len(lines) != 2 or any(l["status"] != "fail" for l in lines):
        fail("the running episodes should finish as results: %s" % lines)
    env.check_clean()
    # Two: the running episodes (a 60 s agent) are interrupted at once and recorded so.
    d = env.sweep_dir("twice")
    proc = two_running(env, d, "sleep 60", 4)
    time.sleep(1.5)
    t = time.time()
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    took = time.time() - t
    if proc.returncode != 130 or took > 20:
        fail("two SIGINTs: exit %d after %.1f s\n%s" % (proc.returncode, took, err[-2000:]))
    lines = results(d)
    if len(lines) != 2 or any(l["status"] != "interrupted" for l in lines):
        fail("want two interrupted lines: %s" % lines)
    env.check_clean()
    print("sigint-grace: two SIGINTs ended two 60 s episodes in %.1f s" % took)


def case_agent_error(env):
    d = env.sweep_dir("agent-error")
    p = env.run(env.args(d, "--task", "banking_reserve", "--agent", "exit 3", "--epochs", "2",
                         "--jobs", "2", "--retries", "2"))
    expect(p, 0, "sweep with a crashing agent")
    lines = results(d)
    if len(lines) != 2 or any(l["status"] != "agent_error" or l["attempt"] != 1 or
                              l["reason"] != "agent exited 3 before complete_task" for l in lines):
        fail("want two agent_error lines, one attempt each, with their reason: %s" % lines)
    show = env.run([SANDBOXCTL, "sweep", "show", d])
    if "      2  agent exited 3 before complete_task\n" not in show.stdout:
        fail("sweep show does not group the failures by reason:\n%s" % show.stdout)
    o = summary(d)["overall"]
    if o["agent_errors"] != 2 or o["infra_errors"] != 0:
        fail("summary: %s" % o)
    env.check_clean()
    # An agent that cannot start at all (sandboxctl copied away from its built-in
    # agents) is a configuration error: the sweep stops at once, exit 2, no attempts.
    lone = os.path.join(env.dir, "bin")
    os.makedirs(lone)
    shutil.copy(SANDBOXCTL, lone)
    d = env.sweep_dir("no-demo")
    args = env.args(d, "--task", "banking_reserve", "--agent", "demo", "--epochs", "3")
    args[0] = os.path.join(lone, "sandboxctl")
    p = subprocess.run(args, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PATH="/usr/bin:/bin"))
    expect(p, 2, "sweep with an agent that is not there")
    if "sandbox-demo-agent not found" not in p.stderr or os.path.exists(d):
        fail("want a configuration error and no attempt: %s %s" % (p.stderr, results(d)))


def case_infra(env):
    # An image no sandbox can run on: any image gets our programs in a bundle
    # mounted at /opt/sandboxctl, which here is a symlink: every create is refused.
    import_tar(BROKEN_IMAGE, {"etc/broken": b"no sandbox here\n", "opt/sandboxctl": "/workspace"})
    d = env.sweep_dir("infra")
    try:
        p = env.run([SANDBOXCTL, "sweep", "--tasks-dir", TASKS, "--image", BROKEN_IMAGE,
                     "--out", d, "--test-label", "--quiet", "--task", "banking_reserve",
                     "--agent", "oracle", "--epochs", "2", "--jobs", "1", "--retries", "1"])
    finally:
        pass
    expect(p, 3, "sweep on a broken image")
    lines = results(d)
    if len(lines) != 4 or any(l["status"] != "infra_error" for l in lines):
        fail("want 4 infra_error attempts (2 episodes x (1 + 1 retry)): %s" % lines)
    if sorted((l["episode"], l["attempt"]) for l in lines) != [(0, 1), (0, 2), (1, 1), (1, 2)]:
        fail("attempts: %s" % [(l["episode"], l["attempt"]) for l in lines])
    o = summary(d)["overall"]
    if o["infra_errors"] != 4 or o["episodes"] != 0 or o["not_done"] != 2:
        fail("summary: %s" % o)
    if "resume" not in p.stderr:
        fail("stderr does not say how to finish: %s" % p.stderr)
    env.check_clean()
    engine("DELETE", "/images/%s?force=1" % urllib.parse.quote(BROKEN_IMAGE, safe=""))


def case_seeds(env):
    d = env.sweep_dir("seeds")
    p = env.run(env.args(d, "--task", "banking_reserve", "--agent", "oracle", "--epochs", "2",
                         "--jobs", "2", "--seed-from", "40", "--memory", "1g", "--pids", "128",
                         "--timeout", "90"))
    expect(p, 0, "seeded sweep")
    lines = sorted(results(d), key=lambda l: l["epoch"])
    if [(l["epoch"], l["seed"], l["status"]) for l in lines] != [(0, 40, "pass"), (1, 41, "pass")]:
        fail("seeds: %s" % lines)
    for l in lines:
        r = json.load(open(os.path.join(d, "runs", l["run_id"], "result.json")))
        if r["seed"] != l["seed"]:
            fail("result.json seed %s, results.jsonl %s" % (r["seed"], l["seed"]))
        # The limits given to the sweep are every episode's, as with run.
        lim = r["limits"]
        if lim["memory_bytes"] != 1 << 30 or lim["pids"] != 128 or lim["timeout_s"] != 90:
            fail("limits not applied: %s" % lim)
    plan = json.load(open(os.path.join(d, "sweep.json")))
    if plan["seed_from"] != 40 or plan["limits"]["memory"] != 1 << 30 \
            or plan["limits"]["pids"] != 128 or plan["timeout_s"] != 90:
        fail("sweep.json: %s" % plan)
    # --resume runs the plan on disk; a limit given again is refused, not half-applied.
    p = env.run([SANDBOXCTL, "sweep", "--resume", d, "--memory", "2g"])
    expect(p, 2, "--resume with a limit")
    env.check_clean()


def case_llm(env):
    key = "sk-test-secret-0123456789abcdef"
    state = os.path.join(env.dir, "provider.json")
    prov = subprocess.Popen([sys.executable, os.path.join(SRC, "tests/agents/fake_provider.py"),
                             state, key])
    try:
        for _ in range(250):
            if os.path.exists(state):
                break
            time.sleep(0.02)
        url = "http://127.0.0.1:%d/v1" % json.load(open(state))["port"]
        d = env.sweep_dir("llm")
        envp = dict(os.environ, OPENAI_API_KEY=key)
        p = subprocess.run(env.args(d, "--task", "sales_revenue", "--agent",
                                    "llm --model solve --base-url " + url, "--epochs", "2",
                                    "--jobs", "2", "--json"),
                           capture_output=True, text=True, timeout=600, env=envp)
        expect(p, 0, "llm sweep")
        v = json.load(open(state))["violations"]
        if v:
            fail("the fake provider refused requests: %s" % v)
        o = json.loads(p.stdout)["overall"]
        # The fake's script: 4 turns of 100..103 input, 10 output, 50 cached tokens each.
        want = {"episodes": 2, "input_tokens": 812, "output_tokens": 80, "cached_tokens": 400}
        if (o["usage"] or {}).get("input_tokens") != 812 or o["usage"]["output_tokens"] != 80 \
                or o["usage"]["cached_tokens"] != 400 or o["usage"]["episodes"] != 2:
            fail("usage %s, want %s" % (o["usage"], want))
        if o["tool_calls_per_episode"] != 4 or o["pass_rate"]["value"] != 1:
            fail("summary: %s" % o)
        text = env.run([SANDBOXCTL, "sweep", "show", d]).stdout
        if "tokens: 812 in, 80 out, 400 cached over 2 episodes" not in text:
            fail("show does not give the token sums: %s" % text)
        for root, _, files in os.walk(d):
            for f in files:
                if key in open(os.path.join(root, f), errors="replace").read():
                    fail("the API key is in %s" % os.path.join(root, f))
        env.check_clean()
    finally:
        prov.terminate()
        prov.wait(timeout=10)


def case_require_pass(env):
    d = env.sweep_dir("require")
    p = env.run(env.args(d, "--task", "banking_reserve", "--agent", "true", "--epochs", "1",
                         "--require-pass", "0.5"))
    expect(p, 1, "--require-pass 0.5 with nothing passing")
    if "under --require-pass" not in p.stderr:
        fail("no reason given: %s" % p.stderr)
    env.check_clean()


def case_tls(env):
    """An engine at tcp:// with TLS (DOCKER_CERT_PATH), beside the unix socket: both
    take episodes. The TLS front is tests/docker's (a loopback proxy to the socket)."""
    if not shutil.which("openssl"):
        raise Skip("openssl missing")
    sys.path.insert(0, os.path.join(SRC, "tests", "docker"))
    import test_tls as tls  # noqa: E402  (make_ca, make_cert, cert_dir)
    root = os.path.join(env.dir, "pki")
    os.makedirs(root)
    tls.make_ca(root, "ca")
    tls.make_cert(root, "server", "ca", "subjectAltName=IP:127.0.0.1\n"
                  "extendedKeyUsage=serverAuth\n")
    tls.make_cert(root, "client", "ca", "extendedKeyUsage=clientAuth\n")
    proxy = subprocess.Popen([sys.executable, os.path.join(SRC, "tests/docker/tls_proxy.py"),
                              root, default_host()[len("unix://"):]],
                             stdout=subprocess.PIPE, text=True)
    try:
        url = "tcp://127.0.0.1:%d" % int(proxy.stdout.readline())
        d = env.sweep_dir("tls")
        envp = dict(os.environ, DOCKER_TLS_VERIFY="1", DOCKER_CERT_PATH=tls.cert_dir(root, "ca"))
        p = subprocess.run(env.args(d, "--task", "banking_reserve", "--task", "sales_revenue",
                                    "--agent", "oracle", "--epochs", "3",
                                    "--engine", default_host() + "#jobs=1",
                                    "--engine", url + "#jobs=1"),
                           capture_output=True, text=True, timeout=600, env=envp)
        expect(p, 0, "sweep over unix and tcp+TLS")
        lines = results(d)
        check_exactly_once(lines, 6)
        per = {}
        for l in done(lines):
            per[l.get("engine")] = per.get(l.get("engine"), 0) + 1
        if set(per) != {default_host(), url} or any(l["status"] != "pass" for l in done(lines)):
            fail("episodes per engine %s, statuses %s" % (per, [l["status"] for l in lines]))
        env.check_clean()
        print("tls: episodes per engine %s" % per)
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)


def start_dockerd(tmp):
    try:
        return second_engine.start(tmp)
    except second_engine.Unavailable as e:
        raise Skip(str(e))


def case_engines(env):
    # A short path: unix socket paths are limited to 108 bytes.
    tmp = tempfile.mkdtemp(prefix="sbx-d2-", dir="/tmp")
    bridge = os.path.exists("/sys/class/net/docker0")
    proc, host2 = start_dockerd(tmp)
    try:
        t = time.time()
        size = copy_image(env.image, default_host(), host2)
        print("engines: image copied to the second engine (%.0f MB) in %.1f s" % (
            size / 1e6, time.time() - t))
        env.hosts = [None, host2]
        d = env.sweep_dir("engines")
        p = env.run(env.args(d, "--task", "banking_reserve", "--task", "sales_revenue",
                             "--agent", "oracle", "--epochs", "4",
                             "--engine", default_host() + "#jobs=1",
                             "--engine", host2 + "#jobs=1"))
        expect(p, 0, "sweep on two engines")
        lines = results(d)
        check_exactly_once(lines, 8)
        per = {}
        for l in lines:
            per[l.get("engine")] = per.get(l.get("engine"), 0) + 1
        if set(per) != {default_host(), host2} or min(per.values()) < 1:
            fail("episodes per engine: %s" % per)
        # An infra error on a busy machine is retried, as it should be; results all pass.
        if any(l["status"] != "pass" for l in done(lines)):
            fail("statuses: %s" % [(l["status"], l.get("error")) for l in lines])
        env.check_clean()
        print("engines: episodes per engine %s" % per)

        # The second engine dies midway: it is drained, its episodes go to the first,
        # and the sweep still ends with every episode done once. One retry: the
        # episode running on it when it died may fail before the engine counts as
        # drained (a loaded host makes that likelier), and is then retried elsewhere.
        d = env.sweep_dir("engine-dies")
        sweep = subprocess.Popen(env.args(d, "--task", "banking_reserve", "--agent", "oracle",
                                          "--epochs", "10", "--retries", "1",
                                          "--engine", default_host() + "#jobs=1",
                                          "--engine", host2 + "#jobs=1"),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        path = os.path.join(d, "results.jsonl")
        wait_until(lambda: os.path.exists(path) and any(l.get("engine") == host2
                                                         for l in results(d)), 120)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        env.hosts = [None]
        out, err = sweep.communicate(timeout=300)
        if sweep.returncode != 0:
            fail("sweep after an engine died: exit %d\n%s" % (sweep.returncode, err[-2000:]))
        lines = results(d)
        check_exactly_once(lines, 10)
        lost = [l for l in lines if l["status"] == "infra_error"]
        if not lost or any(l["engine"] != host2 for l in lost):
            fail("want infra errors on the dead engine only: %s" % lost)
        if "drained" not in err:
            fail("no word of the engine being drained: %s" % err[-2000:])
        env.check_clean()
        print("engines: second engine stopped midway: %d infra attempts on it, re-queued" %
              len(lost))
    finally:
        second_engine.stop(proc, tmp)
        if bridge and not os.path.exists("/sys/class/net/docker0"):
            fail("the first engine's docker0 bridge is gone")


CASES = {
    "basic": case_basic, "example": case_example, "sigint-resume": case_sigint_resume,
    "sigint-grace": case_sigint_grace,
    "sigint-group": case_sigint_group, "sigkill-resume": case_sigkill_resume, "agent-error": case_agent_error,
    "infra": case_infra, "seeds": case_seeds, "llm": case_llm,
    "require-pass": case_require_pass, "tls": case_tls, "engines": case_engines,
}


def main():
    names = sys.argv[1:] or list(CASES)
    if not os.path.exists("/var/run/docker.sock") and not os.environ.get("DOCKER_HOST"):
        print("skip: no Docker engine")
        return SKIP
    try:
        image = pick_image()
    except Skip as e:
        print("skip: %s" % e)
        return SKIP
    except subprocess.CalledProcessError as e:
        print("cannot build the dev image: %s" % e)
        return 1
    return run_cases(names, CASES, lambda: Env(image))


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Integration tests of `sandboxctl run` / `sandboxctl mcp` on the machine's
real Docker engine: every task solved by the oracle, the demo agents, a wrong
agent, the deadline, signals, the official MCP Python SDK through the relay
and stdio, and the hardening probed from inside a running sandbox.

Usage: test_integration.py CASE  (see CASES at the bottom)

The image: $SBX_RUN_TEST_IMAGE when set ("real" means the images
`sandboxctl build` makes), else sandboxctl-test/run-dev:latest, built here
from this build's binaries (tests/run/dev-image.sh), so the tests work on an
engine that has no images. Every container is labelled sandboxctl.test=1 and
the test checks none of its runs leaves one behind.
"""
import asyncio
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

SRC = os.environ.get("SBX_SOURCE_ROOT", os.path.dirname(os.path.abspath(__file__)) + "/../..")
BUILD = os.environ.get("SBX_BUILD_ROOT", SRC + "/build")
SANDBOXCTL = os.path.join(BUILD, "cmd", "sandboxctl")
TASKS = os.path.join(SRC, "tasks")
DEV_IMAGE = "sandboxctl-test/run-dev:latest"
SKIP = 77


class Skip(Exception):
    pass


def fail(msg):
    raise AssertionError(msg)


# ---- the engine -------------------------------------------------------------

class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=60)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


def engine(method, url):
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    c = UnixHTTP(host[len("unix://"):])
    c.request(method, url)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, (json.loads(body) if body and body[:1] in (b"[", b"{") else body)


def containers(run_id):
    f = urllib.parse.quote(json.dumps({"label": ["sandboxctl.run-id=" + run_id]}))
    st, body = engine("GET", "/containers/json?all=1&filters=" + f)
    if st != 200:
        fail("engine: list containers: %s %s" % (st, body))
    return body


def remove_container(cid):
    engine("DELETE", "/containers/%s?force=1&v=1" % cid)


def image_exists(ref):
    st, _ = engine("GET", "/images/%s/json" % urllib.parse.quote(ref, safe=""))
    return st == 200


def pick_image(gui=False):
    want = os.environ.get("SBX_RUN_TEST_IMAGE", "")
    if want == "real":
        ref = "sandboxctl/sandbox:latest" if gui else "sandboxctl/sandbox-slim:latest"
        if not image_exists(ref):
            raise Skip("%s missing: run 'sandboxctl build' first" % ref)
        return ref
    if want:
        return want
    if gui:
        raise Skip("GUI tasks need the full image (SBX_RUN_TEST_IMAGE=real)")
    return DEV_IMAGE


def ensure_dev_image():
    if os.environ.get("SBX_RUN_TEST_IMAGE"):
        return
    subprocess.run(["sh", os.path.join(SRC, "tests/run/dev-image.sh"), SRC, BUILD, DEV_IMAGE],
                   check=True, stdout=subprocess.DEVNULL)


# ---- running sandboxctl -----------------------------------------------------

class Env:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="sbx-run-it-")
        self.runs = os.path.join(self.dir, "runs")
        self.run_ids = []
        self.procs = []

    def new_id(self, tag):
        rid = "it-%s-%d-%d" % (tag, os.getpid(), len(self.run_ids))
        self.run_ids.append(rid)
        return rid

    def args(self, rid, task, image, *extra):
        return [SANDBOXCTL, "run", "--task", task, "--tasks-dir", TASKS, "--image", image,
                "--runs-dir", self.runs, "--run-id", rid, "--test-label"] + list(extra)

    def run(self, task, tag, *extra, image=None, timeout=300):
        rid = self.new_id(tag)
        p = subprocess.run(self.args(rid, task, image or pick_image(), "--json", *extra),
                           capture_output=True, text=True, timeout=timeout)
        lines = [l for l in p.stdout.splitlines() if l.strip()]
        if len(lines) != 1:
            fail("%s: expected one JSON line on stdout, got %r\nstderr: %s" %
                 (tag, p.stdout, p.stderr))
        res = json.loads(lines[0])
        return p.returncode, res, os.path.join(self.runs, rid), p.stderr

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
        left = []
        for rid in self.run_ids:
            for c in containers(rid):
                left.append(rid)
                remove_container(c["Id"])
        shutil.rmtree(self.dir, ignore_errors=True)
        if left:
            fail("containers left behind by runs %s" % left)


def check_gone(rid):
    if containers(rid):
        fail("run %s left its container behind" % rid)


def read(path):
    with open(path) as f:
        return f.read()


def tasks():
    out = []
    for name in sorted(os.listdir(TASKS)):
        y = os.path.join(TASKS, name, "task.yaml")
        if os.path.isfile(y):
            out.append((name, "\ngui: true" in read(y)))
    return out


# ---- cases ------------------------------------------------------------------

def case_oracle(env):
    """--agent oracle passes every task at 100%, and leaves nothing behind."""
    ran = 0
    for name, gui in tasks():
        try:
            image = pick_image(gui)
        except Skip as e:
            print("  skip %s: %s" % (name, e))
            continue
        code, res, rdir, err = env.run(name, "oracle-" + name, "--agent", "oracle",
                                       image=image)
        if code != 0 or res["status"] != "pass" or res["score"] != 1:
            fail("%s: oracle did not pass: exit %d, %s\n%s" % (name, code, res, err))
        for f in ("result.json", "grade.txt", "grade.json", "container.log",
                  "transcript.jsonl"):
            if not os.path.exists(os.path.join(rdir, f)):
                fail("%s: %s missing from the run directory" % (name, f))
        t = res["timings_ms"]
        for ph in ("create", "start", "copy_in", "ready", "agent", "copy_out", "grade",
                   "remove"):
            if t[ph] is None:
                fail("%s: phase %s not timed: %s" % (name, ph, t))
        hd = res["sandbox"]["hardening"]
        if (hd.get("network_mode") != "none" or hd.get("cap_drop") != ["ALL"] or
                hd.get("cap_add") != 0 or not hd.get("readonly_rootfs") or
                not hd.get("no_new_privileges") or hd.get("user") != "1000:1000" or
                hd.get("privileged") or hd.get("host_mounts") != 0 or
                hd.get("pids") != 256 or hd.get("memory_bytes") != 2 << 30 or
                not res["sandbox"]["image_id"]):
            fail("%s: the engine did not apply the hardening: %s" % (name, res["sandbox"]))
        if not res["provenance"]["in_git"] or len(res["provenance"]["commit"] or "") != 40:
            fail("%s: provenance missing: %s" % (name, res["provenance"]))
        check_gone(res["run_id"])
        ran += 1
        print("  %s: pass in %.0f ms" % (name, t["total"]))
    if not ran:
        raise Skip("no task could run with this image")


def transcript(rdir):
    return [json.loads(l) for l in read(os.path.join(rdir, "transcript.jsonl")).splitlines()]


def case_demo(env):
    """The C demo agent solves every task through MCP; the transcript has every call it made."""
    code, res, rdir, err = env.run("banking_reserve", "demo", "--agent", "demo")
    if code != 0 or res["status"] != "pass" or res["score"] != 1:
        fail("demo agent did not pass: exit %d %s\n%s\n%s" %
             (code, res, err, read(os.path.join(rdir, "agent.log"))))
    lines = transcript(rdir)
    sent = [l["message"] for l in lines if l["dir"] == "agent->server" and "message" in l]
    methods = [m.get("method") for m in sent]
    tools = [m["params"]["name"] for m in sent if m.get("method") == "tools/call"]
    for m in ("initialize", "notifications/initialized", "tools/list"):
        if m not in methods:
            fail("transcript lacks %s: %s" % (m, methods))
    if tools != ["list_files", "get_sheet_info", "read_range", "write_range", "complete_task"]:
        fail("transcript tool calls: %s" % tools)
    answered = {l["message"].get("id") for l in lines
                if l["dir"] == "server->agent" and isinstance(l.get("message"), dict)}
    for m in sent:
        if "id" in m and m["id"] not in answered:
            fail("request %s has no recorded response" % m)
    if res["ended_by"] != "complete_task" or res["agent"]["kind"] != "demo":
        fail("unexpected end: %s" % res)
    check_gone(res["run_id"])

    # The other tasks; formulas need LibreOffice's recalculation: the full image.
    for name, gui in tasks():
        if name == "banking_reserve":
            continue
        formulas = "formulas:" in read(os.path.join(TASKS, name, "task.yaml"))
        try:
            image = pick_image(gui or formulas) if not formulas else (
                "sandboxctl/sandbox:latest" if image_exists("sandboxctl/sandbox:latest")
                else pick_image(True))
        except Skip as e:
            print("  skip %s: %s" % (name, e))
            continue
        code, res, rdir, err = env.run(name, "demo-" + name, "--agent", "demo", image=image)
        if code != 0 or res["status"] != "pass":
            fail("demo agent on %s: exit %d %s\n%s" %
                 (name, code, res, read(os.path.join(rdir, "agent.log"))))
        check_gone(res["run_id"])
        print("  %s: pass" % name)


def case_rest(env):
    """examples/rest_agent.sh (curl + jq, REST API) passes too."""
    if not shutil.which("jq"):
        raise Skip("jq missing (scripts/deps.sh installs it)")
    code, res, rdir, err = env.run("banking_reserve", "rest", "--agent",
                                   os.path.join(SRC, "examples/rest_agent.sh"))
    if code != 0 or res["status"] != "pass":
        fail("REST agent did not pass: %s\n%s" % (res, read(os.path.join(rdir, "agent.log"))))
    check_gone(res["run_id"])


WRONG_AGENT = r"""
set -e
v='[["Required_Reserve"]'
i=0; while [ $i -lt 100 ]; do v="$v,[1]"; i=$((i+1)); done; v="$v]"
curl -sf -X POST -H 'Content-Type: application/json' "$SANDBOX_REST_URL/tools/call" \
  -d "{\"tool_name\":\"write_range\",\"arguments\":{\"file_path\":\"cash_flows.ods\",\"sheet_name\":\"Sheet1\",\"start_cell\":\"D1\",\"values\":$v}}"
curl -sf -X POST "$SANDBOX_REST_URL/task/complete" -d '{}'
"""


def case_wrong(env):
    """An agent that writes wrong values is graded PARTIAL/FAIL and the report names the cells."""
    code, res, rdir, err = env.run("banking_reserve", "wrong", "--agent", WRONG_AGENT)
    if code != 1 or res["status"] not in ("partial", "fail"):
        fail("wrong agent: exit %d, %s\n%s" % (code, res, err))
    report = read(os.path.join(rdir, "grade.txt"))
    if "Sheet1!D2" not in report or "expected=" not in report:
        fail("the report does not name the wrong cells:\n" + report)
    check_gone(res["run_id"])


def case_timeout(env):
    """An agent that never finishes: timeout at the deadline, graded anyway, container gone."""
    t0 = time.time()
    code, res, rdir, err = env.run("banking_reserve", "timeout", "--agent", "sleep 600",
                                   "--timeout", "3")
    took = time.time() - t0
    if code != 4 or res["status"] != "timeout" or res["ended_by"] != "deadline":
        fail("timeout: exit %d, %s\n%s" % (code, res, err))
    if not res["grade"]["graded"]:
        fail("a timed-out run must still be graded: %s" % res["grade"])
    if took > 20:
        fail("the deadline was 3 s but the run took %.1f s" % took)
    check_gone(res["run_id"])


def start_background(env, tag, *extra):
    rid = env.new_id(tag)
    p = subprocess.Popen(env.args(rid, "banking_reserve", pick_image(), *extra),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    env.procs.append(p)
    url = None
    deadline = time.time() + 60
    while time.time() < deadline:
        line = p.stdout.readline() if "--agent" not in extra else ""
        if line.startswith("REST endpoint: "):
            url = line.split()[2]
            break
        if "--agent" in extra and containers(rid) and \
                os.path.exists(os.path.join(env.runs, rid, "agent.log")):
            break
        if p.poll() is not None:
            fail("%s: sandboxctl exited early: %s" % (tag, p.stderr.read()))
        time.sleep(0.05)
    else:
        p.kill()
        fail("%s: the run did not come up" % tag)
    return p, rid, url


def case_sigint(env):
    """SIGINT mid-run: the container is removed and the result says interrupted."""
    p, rid, _ = start_background(env, "sigint", "--agent", "sleep 600")
    p.send_signal(signal.SIGINT)
    code = p.wait(timeout=60)
    res = json.loads(read(os.path.join(env.runs, rid, "result.json")))
    if code != 130 or res["status"] != "interrupted":
        fail("SIGINT: exit %d, status %s" % (code, res["status"]))
    check_gone(rid)


def agent_alive(marker):
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if marker.encode() in f.read():
                        return True
            except OSError:
                pass
    return False


def case_sigkill(env):
    """SIGKILL: the agent's process group goes too; `sandboxctl gc` finds the container by labels."""
    marker = str(600 + os.getpid() % 300)
    p, rid, _ = start_background(env, "sigkill", "--agent", "sleep %s; true" % marker)
    for _ in range(100):
        if agent_alive("sleep\0" + marker):
            break
        time.sleep(0.05)
    else:
        fail("the agent did not start")
    p.kill()
    p.wait()
    for _ in range(50):
        if not agent_alive("sleep\0" + marker):
            break
        time.sleep(0.1)
    else:
        fail("the agent outlived a SIGKILLed sandboxctl")
    if not containers(rid):
        fail("after SIGKILL the container should still be there for gc to find")
    g = subprocess.run([SANDBOXCTL, "gc"], capture_output=True, text=True, timeout=120)
    if "not available" in g.stderr:
        for c in containers(rid):
            remove_container(c["Id"])
        raise Skip("'sandboxctl gc' is not in this build yet (orphan removed by the test)")
    if g.returncode != 0:
        fail("gc failed: %s" % g.stderr)
    check_gone(rid)


async def sdk_session(url, body):
    from mcp import ClientSession
    from mcp.client import streamable_http as sh
    connect = getattr(sh, "streamable_http_client", None) or getattr(sh, "streamablehttp_client")
    async with connect(url) as streams:
        async with ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            return await body(s)


def tool_json(res):
    if getattr(res, "structuredContent", None):
        return res.structuredContent
    text = res.content[0].text if res.content else ""
    try:
        return json.loads(text)
    except ValueError:
        return {"stdout": "", "text": text}


def case_sdk(env):
    """The official Python SDK connects to the relay (/mcp and legacy /mcp/sse) and lists the tools."""
    p, rid, url = start_background(env, "sdk")

    async def body(s):
        names = [t.name for t in (await s.list_tools()).tools]
        for n in ("complete_task", "execute_shell", "list_files"):
            if n not in names:
                fail("tools/list lacks %s: %s" % (n, names))
        files = tool_json(await s.call_tool("list_files", {}))
        await s.call_tool("complete_task", {"summary": "sdk test"})
        return names, files

    async def legacy_sse():
        from mcp import ClientSession
        from mcp.client.sse import sse_client
        async with sse_client(url + "/mcp/sse") as streams:
            async with ClientSession(streams[0], streams[1]) as s:
                await s.initialize()
                return [t.name for t in (await s.list_tools()).tools]

    # The legacy HTTP+SSE transport passes the relay too (a long-lived stream).
    if "list_files" not in asyncio.run(legacy_sse()):
        fail("legacy SSE through the relay did not list the tools")
    names, files = asyncio.run(sdk_session(url + "/mcp", body))
    if "cash_flows.ods" not in json.dumps(files):
        fail("the starting file is not in the workspace: %s" % files)
    code = p.wait(timeout=60)
    res = json.loads(read(os.path.join(env.runs, rid, "result.json")))
    if res["ended_by"] != "complete_task" or code != 1:
        fail("complete_task through the SDK did not end the run: exit %d %s" % (code, res))
    check_gone(rid)


def case_hardening(env):
    """Probes from inside a running sandbox through execute_shell."""
    p, rid, url = start_background(env, "hardening", "--pids", "64", "--memory", "128m")

    async def body(s):
        async def sh(cmd):
            r = tool_json(await s.call_tool("execute_shell", {"command": cmd}))
            return r
        out = {}
        out["status"] = (await sh("grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs):' /proc/self/status; id -u"))["stdout"]
        out["rofs"] = await sh("touch /probe 2>&1; echo rc=$?")
        out["net"] = (await sh("cat /proc/net/dev; echo ---; cat /proc/net/route"))["stdout"]
        # cgroup v2, else v1.
        out["limits"] = (await sh(
            "cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max; "
            "cat /sys/fs/cgroup/memory.max 2>/dev/null || "
            "cat /sys/fs/cgroup/memory/memory.limit_in_bytes"))["stdout"]
        # A fork bomb in a subshell (a failed fork ends it), counting what started.
        out["fork"] = (await sh("(i=0; while [ $i -lt 150 ]; do sleep 20 & i=$((i+1)); "
                                "echo $i > /tmp/forks; done) 2>/dev/null; "
                                "echo started=$(cat /tmp/forks); pkill sleep 2>/dev/null; "
                                "kill $(pgrep sleep) 2>/dev/null; true"))["stdout"]
        out["mem"] = await sh("x=$(head -c 400000000 /dev/zero | tr '\\0' a); echo survived ${#x}")
        out["alive"] = (await sh("echo still-here"))["stdout"]
        await s.call_tool("complete_task", {})
        return out

    o = asyncio.run(sdk_session(url + "/mcp", body))
    if os.environ.get("SBX_TEST_VERBOSE"):
        print(json.dumps(o, indent=1))
    st = o["status"]
    for want in ("CapEff:\t0000000000000000", "CapPrm:\t0000000000000000",
                 "CapBnd:\t0000000000000000", "NoNewPrivs:\t1"):
        if want not in st:
            fail("hardening: %r not in %r" % (want, st))
    if st.strip().splitlines()[-1] == "0":
        fail("the sandbox runs as root")
    if "Read-only file system" not in json.dumps(o["rofs"]):
        fail("the root filesystem is writable: %s" % o["rofs"])
    dev, route = o["net"].split("---")
    ifaces = [l.split(":")[0].strip() for l in dev.splitlines()[2:] if ":" in l]
    if ifaces != ["lo"] or len(route.strip().splitlines()) > 1:
        fail("network: interfaces %s, routes %r" % (ifaces, route))
    lim = o["limits"].split()
    if lim != ["64", str(128 * 1024 * 1024)]:
        fail("cgroup limits: %s" % lim)
    started = int(o["fork"].split("started=")[1].split()[0])
    if started >= 64:
        fail("the pids limit did not hold: %d processes started" % started)
    if "survived 400000000" in json.dumps(o["mem"]):
        fail("the memory limit did not hold: %s" % o["mem"])
    if "still-here" not in o["alive"]:
        fail("the sandbox did not survive the probes")
    p.wait(timeout=60)
    check_gone(rid)
    print("  caps 0, no_new_privs, uid %s, ro rootfs, only lo, pids held at %d, 400 MB refused"
          % (st.strip().splitlines()[-1], started))


def case_mcp_stdio(env):
    """`sandboxctl mcp` as a stdio server for the official SDK's stdio client."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    rid = env.new_id("mcp")
    params = StdioServerParameters(command=SANDBOXCTL, args=[
        "mcp", "--task", "banking_reserve", "--tasks-dir", TASKS, "--image", pick_image(),
        "--runs-dir", env.runs, "--run-id", rid, "--test-label"])

    async def main():
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                names = [t.name for t in (await s.list_tools()).tools]
                await s.call_tool("complete_task", {})
                return names

    names = asyncio.run(main())
    if "read_range" not in names and "list_files" not in names:
        fail("stdio tools/list: %s" % names)
    for _ in range(100):
        if os.path.exists(os.path.join(env.runs, rid, "result.json")):
            break
        time.sleep(0.1)
    res = json.loads(read(os.path.join(env.runs, rid, "result.json")))
    if res["ended_by"] not in ("complete_task", "client_eof") or res["outcome"] != "task":
        fail("mcp stdio result: %s" % res)
    if not any(l["dir"] == "agent->server" for l in transcript(os.path.join(env.runs, rid))):
        fail("mcp stdio: the transcript is empty")
    check_gone(rid)


def case_gui(env):
    """A GUI task on the full image: Calc shows the file before the agent starts; a final screenshot is kept."""
    if not image_exists("sandboxctl/sandbox:latest"):
        raise Skip("the full image is missing: run 'sandboxctl build' first")
    tdir = os.path.join(env.dir, "tasks")
    shutil.copytree(os.path.join(TASKS, "banking_reserve"), os.path.join(tdir, "banking_gui"))
    y = os.path.join(tdir, "banking_gui", "task.yaml")
    text = read(y).replace("id: banking_reserve", "id: banking_gui").replace("gui: false", "gui: true")
    with open(y, "w") as f:
        f.write(text)
    rid = env.new_id("gui")
    p = subprocess.run([SANDBOXCTL, "run", "--task", os.path.join(tdir, "banking_gui"),
                        "--image", "sandboxctl/sandbox:latest", "--runs-dir", env.runs,
                        "--run-id", rid, "--test-label", "--agent", "oracle", "--json"],
                       capture_output=True, text=True, timeout=600)
    res = json.loads(p.stdout)
    if p.returncode != 0 or res["status"] != "pass":
        fail("GUI oracle run: exit %d %s\n%s" % (p.returncode, res, p.stderr))
    shot = os.path.join(env.runs, rid, "screenshot.png")
    with open(shot, "rb") as f:
        head = f.read(8)
    if head != b"\x89PNG\r\n\x1a\n" or os.path.getsize(shot) < 30000:
        fail("no drawn final screenshot: %d bytes" % os.path.getsize(shot))
    if not res["timings_ms"].get("gui_ready_after_start"):
        fail("GUI readiness not recorded: %s" % res["timings_ms"])
    check_gone(rid)
    print("  Calc showed the file %.0f ms after start" % res["timings_ms"]["gui_ready_after_start"])


CASES = {
    "oracle": case_oracle, "demo": case_demo, "rest": case_rest, "wrong": case_wrong,
    "timeout": case_timeout, "sigint": case_sigint, "sigkill": case_sigkill,
    "sdk": case_sdk, "hardening": case_hardening, "mcp-stdio": case_mcp_stdio, "gui": case_gui,
}


def main():
    names = sys.argv[1:] or list(CASES)
    try:
        ensure_dev_image()
    except subprocess.CalledProcessError as e:
        print("cannot build the dev image: %s" % e)
        return 1
    failed = skipped = 0
    for n in names:
        env = Env()
        try:
            CASES[n](env)
            print("ok   %s" % n)
        except Skip as e:
            skipped += 1
            print("skip %s: %s" % (n, e))
        except Exception as e:  # noqa: BLE001 - report any failure of the case
            failed += 1
            while isinstance(e, BaseExceptionGroup) and e.exceptions:
                e = e.exceptions[0]
            print("FAIL %s: %s: %s" % (n, type(e).__name__, e))
        finally:
            try:
                env.cleanup()
            except AssertionError as e:
                failed += 1
                print("FAIL %s cleanup: %s" % (n, e))
    if failed:
        return 1
    return SKIP if skipped == len(names) else 0


if __name__ == "__main__":
    sys.exit(main())

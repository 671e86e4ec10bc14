#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tool code runs as a uid of its own and cannot steer the server.

A live run on the real engine and image. Tool code (execute_shell and
execute_python, as an agent's would) attacks the server the ways a same-uid
process could: signal it, trace it, read its memory and environment, lower
its own OOM score below the server's, and plant a fake server on the socket
the host talks to. Each must fail; the workspace must still be shared both
ways (tool code edits an input in place, the server reads what tool code
wrote), tool code has a home it can write, timeouts still kill the whole
process group, and the run ends through the real server. Usage:
test_tool_uid.py
"""
import json
import os
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import test_integration as it  # noqa: E402

ATTACK = r'''
import ctypes, errno, json, os, signal, socket
out = {"uid": os.getuid(), "groups": os.getgroups()}
def err(fn):
    try:
        fn()
        return "allowed"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
server = None
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            if open("/proc/%s/comm" % d).read().strip() == "sandbox-mcp":
                server = int(d)
        except OSError:
            pass
out["server_uid"] = os.stat("/proc/%d" % server).st_uid
out["kill"] = err(lambda: os.kill(server, signal.SIGKILL))
out["signal0"] = err(lambda: os.kill(server, 0))
out["kill_pid1"] = err(lambda: os.kill(1, signal.SIGTERM))
out["mem"] = err(lambda: open("/proc/%d/mem" % server, "rb").read(1))
out["environ"] = err(lambda: open("/proc/%d/environ" % server, "rb").read(1))
def write(path, text):  # unbuffered: an error is raised here, not lost at close
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
out["server_oom_write"] = err(lambda: write("/proc/%d/oom_score_adj" % server, "900"))
out["run_dir"] = err(lambda: os.listdir("/run/sandbox"))
def plant():
    s = socket.socket(socket.AF_UNIX)
    s.bind("/run/sandbox/mcp.sock")
out["plant_socket"] = err(plant)
out["plant_dir"] = err(lambda: os.rename("/run/sandbox", "/run/sandbox.old"))
def control():  # the host's API, straight on the server's socket: a later deadline
    s = socket.socket(socket.AF_UNIX)
    s.connect("/run/sandbox/mcp.sock")
    s.sendall(b"POST /control/deadline HTTP/1.1\r\nHost: localhost\r\nContent-Length: 23\r\n\r\n"
              b'{"deadline":9999999999}')
out["control_socket"] = err(control)
out["own_oom"] = int(open("/proc/self/oom_score_adj").read())
out["server_oom"] = int(open("/proc/%d/oom_score_adj" % server).read())
out["oom_below_server"] = err(lambda: write("/proc/self/oom_score_adj", str(out["server_oom"] - 1)))
libc = ctypes.CDLL(None, use_errno=True)
def attach():
    if libc.ptrace(16, server, None, None) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
out["ptrace"] = err(attach)
home = os.environ.get("HOME", "")
out["home"] = home
out["home_write"] = err(lambda: write(os.path.join(home, "probe"), "x") if open(os.path.join(home, "probe"), "w") else None)
with open("cash_flows.ods", "r+b") as f:  # an input, edited in place
    b = f.read(2)
    f.seek(0)
    f.write(b)
out["input_edit"] = "allowed"
with open("from_tool.csv", "w") as f:
    f.write("written by tool code,1\n")
print(json.dumps(out))
'''


def main():
    it.need_real_image("tool code in execute_python")
    it.ensure_dev_image()
    env = it.Env()
    rid = env.new_id("tooluid")
    p = subprocess.Popen(env.args(rid, "banking_reserve", it.pick_image(), "--json", "--timeout",
                                  "120"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    env.procs.append(p)
    try:
        rest = json.loads(p.stdout.readline())["rest_url"]

        def call(tool, **args):
            req = urllib.request.Request(
                rest + "/tools/call", method="POST",
                data=json.dumps({"tool_name": tool, "arguments": args}).encode(),
                headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=60) as r:
                return json.loads(r.read())

        res = call("execute_python", code=ATTACK)
        stdout = (res.get("result") or {}).get("stdout", "")
        if not stdout.strip():
            it.fail("the attack printed nothing: %s" % res)
        o = json.loads(stdout.strip().splitlines()[-1])
        if o["uid"] == o["server_uid"] or o["uid"] == 0 or o["server_uid"] != 1000:
            it.fail("tool code shares the server's uid: %s" % o)
        for k in ("kill", "signal0", "kill_pid1", "ptrace", "mem", "environ", "server_oom_write",
                  "run_dir", "plant_socket", "plant_dir", "control_socket", "oom_below_server"):
            if o[k] == "allowed":
                it.fail("tool code could %s: %s" % (k, o))
        if o["own_oom"] <= o["server_oom"]:
            it.fail("tool code's OOM score is not above the server's: %s" % o)
        if o["home_write"] != "allowed" or o["input_edit"] != "allowed":
            it.fail("tool code lost what it needs: %s" % o)
        # The server reads and rewrites what tool code wrote, and tool code reads it back.
        got = call("read_cell", file_path="from_tool.csv", cell_reference="A1")
        if "written by tool code" not in json.dumps(got):
            it.fail("the server cannot read tool code's file: %s" % got)
        w = call("write_cell", file_path="from_tool.csv", cell_reference="B1", value=42)
        back = call("execute_shell", command="cat from_tool.csv && echo more >> from_tool.csv"
                                             " && echo appended")
        if not w.get("success") or "42" not in back["result"]["stdout"] or \
                "appended" not in back["result"]["stdout"]:
            it.fail("tool code and the server do not share files: %s %s" % (w, back))
        # A timeout still kills the whole group, leftovers included.
        t = time.monotonic()
        to = call("execute_shell", command="sleep 300 & sleep 300", timeout=2)
        dt = time.monotonic() - t
        if not to["result"]["timed_out"] or dt > 6:
            it.fail("the timeout did not hold: %.1f s %s" % (dt, to))
        left = call("execute_shell", command="pgrep -c sleep || true")["result"]["stdout"]
        if left.strip() not in ("0", ""):
            it.fail("the timed-out group left %s sleeps behind" % left.strip())
        # The run is still the real server's.
        req = urllib.request.Request(rest + "/task/complete", data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=30).read()
        p.wait(timeout=60)
        result = json.loads(it.read(os.path.join(env.runs, rid, "result.json")))
        hd = result["sandbox"]["hardening"]
        if result["ended_by"] != "complete_task" or hd.get("tool_code_uid") != 1001 or \
                not hd.get("all_caps_dropped_by_pid1"):
            it.fail("result.json: %s %s" % (result["ended_by"], hd))
        it.check_gone(rid)
        print("ok: tool code uid %d, server uid %d; refused: %s; oom %d > %d; timeout %.1f s" %
              (o["uid"], o["server_uid"],
               ", ".join("%s %s" % (k, o[k]) for k in ("kill", "ptrace", "mem", "run_dir",
                                                       "plant_socket", "control_socket",
                                                       "oom_below_server")),
               o["own_oom"], o["server_oom"], dt))
    finally:
        env.cleanup()


if __name__ == "__main__":
    it.run_main(main)

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tool code cannot reach the kernel interfaces a sandbox has no use for.

A live run on the real engine and image; tool code (execute_python) tries
each as an attacker would: an AF_VSOCK socket (the VM's vsock port space),
io_uring (which bypasses syscall filters), ptrace, a user namespace,
keyrings, userfaultfd, perf. With our profile every one fails; the same
probes under the engine's own profile (--seccomp default) show the test can
fail: AF_VSOCK and ptrace are allowed there. No setuid or setgid file is
left in the image. Usage: test_seccomp.py
"""
import json
import os
import platform
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import test_integration as it  # noqa: E402

# x86_64 numbers; the probe is skipped elsewhere.
PROBE = r'''
import ctypes, errno, json, os, socket
out = {}
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sysc(nr, *a):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r
def attempt(name, fn):
    try:
        fn()
        out[name] = "allowed"
    except OSError as e:
        out[name] = errno.errorcode.get(e.errno, str(e.errno))
attempt("unix", lambda: socket.socket(socket.AF_UNIX).close())
attempt("inet", lambda: socket.socket(socket.AF_INET).close())
attempt("vsock", lambda: socket.socket(40, socket.SOCK_STREAM).close())
attempt("alg", lambda: socket.socket(38, socket.SOCK_SEQPACKET).close())
attempt("io_uring_setup", lambda: os.close(sysc(425, 1, ctypes.create_string_buffer(128))))
# PEEKUSER on ourselves, untraced: ESRCH where ptrace is allowed, EPERM where it is not.
attempt("ptrace", lambda: sysc(101, 3, os.getpid(), 0, 0))
attempt("unshare_user", lambda: sysc(272, 0x10000000))
attempt("keyctl", lambda: sysc(250, 0, -3, 0, 0))
attempt("userfaultfd", lambda: os.close(sysc(323, 0)))
attempt("perf_event_open", lambda: sysc(298, ctypes.create_string_buffer(128), 0, -1, -1, 0))
s = os.popen("find / -xdev -perm /6000 -type f 2>/dev/null").read().split()
out["setuid_files"] = s
print(json.dumps(out))
'''


def probe(env, *extra):
    rid = env.new_id("seccomp")
    p = subprocess.Popen(env.args(rid, "sales_revenue", it.pick_image(), "--json", "--timeout",
                                  "120", *extra),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    env.procs.append(p)
    conn = json.loads(p.stdout.readline())
    rest = conn["rest_url"]

    def post(path, body):
        req = urllib.request.Request(rest + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())

    res = post("/tools/call", {"tool_name": "execute_python", "arguments": {"code": PROBE}})
    post("/task/complete", {})
    p.wait(timeout=60)
    result = json.loads(it.read(os.path.join(env.runs, rid, "result.json")))
    it.check_gone(rid)
    stdout = (res.get("result") or {}).get("stdout", "")
    if not stdout.strip():
        it.fail("the probe printed nothing: %s" % res)
    return json.loads(stdout.strip().splitlines()[-1]), result


def main():
    if platform.machine() != "x86_64":
        raise it.Skip("the probe's syscall numbers are x86_64's")
    it.ensure_dev_image()
    env = it.Env()
    try:
        ours, res = probe(env)
        if res["sandbox"]["hardening"].get("seccomp") != "sandbox" or \
                res["limits"].get("seccomp") != "sandbox":
            it.fail("result.json does not record our profile: %s" % res["sandbox"]["hardening"])
        for name in ("unix", "inet"):
            if ours[name] != "allowed":
                it.fail("our profile refuses what tools need: %s %s" % (name, ours[name]))
        for name in ("vsock", "alg", "io_uring_setup", "ptrace", "unshare_user", "keyctl",
                     "userfaultfd", "perf_event_open"):
            if ours[name] == "allowed" or (name == "ptrace" and ours[name] != "EPERM"):
                it.fail("tool code reached %s: %s" % (name, ours[name]))
        if ours["setuid_files"]:
            it.fail("setuid/setgid files in the image: %s" % ours["setuid_files"])
        theirs, res = probe(env, "--seccomp", "default")
        if res["sandbox"]["hardening"].get("seccomp") != "default":
            it.fail("--seccomp default is not recorded: %s" % res["sandbox"]["hardening"])
        # The control: the engine's profile lets these through, so the checks above can fail.
        if theirs["vsock"] == "EAFNOSUPPORT" and theirs["ptrace"] == "EPERM":
            it.fail("the engine's own profile already refuses vsock and ptrace: the test "
                    "proves nothing here: %s" % theirs)
        print("ok: ours refuses %s; the engine's default: vsock %s, ptrace %s, io_uring %s" %
              (", ".join("%s %s" % (k, v) for k, v in ours.items()
                         if k not in ("unix", "inet", "setuid_files")),
               theirs["vsock"], theirs["ptrace"], theirs["io_uring_setup"]))
    finally:
        env.cleanup()


if __name__ == "__main__":
    it.run_main(main)

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Sandboxes without a task (`serve`'s /v1/sandboxes) on the real Docker engine.

Usage: test_sandboxes.py CASE

  api      a warm and a cold sandbox; exec with stdin (text and base64), env,
           cwd, binary output, exit codes, 127, a timeout killing a tree that
           double-forked and left its session, user errors; files text,
           binary, 50 MiB, parents made, 404/409/403/413; list, delete,
           /metrics; SIGTERM of serve leaves nothing.
  attacks  a warm sandbox killed in the pool is not handed out (cold
           instead); then each must fail: one sandbox's exec reaching another's files or
           the engine socket; files?path= escaping (symlinks to /etc and
           /proc/1/root, '..', /proc/self/root, /proc/1/root); a wrong or
           missing token; an oversized PUT; more sandboxes than
           --max-sandboxes (429); an expired sandbox is removed.
  gc       serve killed with SIGKILL: its sandbox carries the labels, and
           `sandboxctl gc` removes it.
  reuse    --reuse: a client plants residue in sandbox A (files in each
           writable place, setsid, double-forked, SIGTERM-ignoring and stopped
           processes, an environment variable), deletes it (202 at once, reset); B
           gets the same container and sees what a fresh sandbox does; A's id
           is refused; four uses of a container (--reuse 4), then it is
           removed; a dirty reset, a DELETE under a request, other limits,
           and a DELETE as serve stops remove the container instead.

The image: $SBX_RUN_TEST_IMAGE=real uses $SBX_TEST_SLIM_IMAGE (default
sandboxctl/sandbox-slim:latest, what `sandboxctl build` made from this tree);
$SBX_SANDBOXES_IMAGE names another build of it.
"""
import base64
import hashlib
import http.client
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from itest import SANDBOXCTL, Skip, fail, main_cases, wait_until  # noqa: E402
from test_serve_integration import SLIM, engine, image_exists, our_containers, with_service  # noqa: E402,E501

IMAGE = os.environ.get("SBX_SANDBOXES_IMAGE") or SLIM
MiB = 1 << 20


def raw(s, method, path, data=None, token=None, headers=None):
    """(status, body bytes) of one request with a raw body."""
    u = urllib.parse.urlsplit(s.url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    c.request(method, "/" + (token or s.token) + path, body=data, headers=headers or {})
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def create(s, **kw):
    st, d = s.call("POST", "/v1/sandboxes", dict(image=IMAGE, **kw))
    if st != 201:
        fail("create %s: HTTP %d %s" % (kw, st, d))
    for k in ("id", "image", "workdir", "user", "users", "expires_at"):
        if k not in d:
            fail("create answer lacks %s: %s" % (k, d))
    return d


def ex(s, sid, cmd, want=200, **kw):
    st, d = s.call("POST", "/v1/sandboxes/%s/exec" % sid, dict(cmd=cmd, **kw))
    if st != want:
        fail("exec %s %s: HTTP %d %s (wanted %d)" % (cmd, kw, st, d, want))
    return d


def out(d, name="stdout"):
    """A stream's bytes, from its text or its base64."""
    if name + "_b64" in d:
        return base64.b64decode(d[name + "_b64"])
    return d[name].encode()


def put(s, sid, path, data, want=204):
    st, body = raw(s, "PUT", "/v1/sandboxes/%s/files?path=%s" % (sid, urllib.parse.quote(path)),
                   data)
    if st != want:
        fail("PUT %s: HTTP %d %s (wanted %d)" % (path, st, body[:300], want))
    return body


def get(s, sid, path, want=200):
    st, body = raw(s, "GET", "/v1/sandboxes/%s/files?path=%s" % (sid, urllib.parse.quote(path)))
    if st != want:
        fail("GET %s: HTTP %d %s (wanted %d)" % (path, st, body[:300], want))
    return body


def error_code(body):
    return json.loads(body)["error"]


def gone(sb):
    """Whether sb's container is no longer on the engine."""
    return engine("GET", "/containers/%s/json" % sb["container"])[0] == 404


def wait_warm(s, n=1, timeout=60):
    size = 'sandboxctl_serve_pool_size{image="%s"}' % IMAGE
    if not wait_until(lambda: s.metrics().get(size, 0) >= n, timeout, poll=0.2):
        fail("the pool of %s did not reach %d" % (IMAGE, n))


def check_exec(s, sid):
    d = ex(s, sid, ["sh", "-c", "id -u; pwd; cat; printf '%s' \"$FOO\""], stdin="in\n",
           env={"FOO": "bar baz"}, cwd="sub")
    if d["stdout"] != "1001\n/workspace/sub\nin\nbar baz" or d["returncode"] != 0:
        fail("exec with stdin, env, cwd: %s" % d)
    blob = bytes(range(256)) * 4
    d = ex(s, sid, ["sh", "-c", "cat > /tmp/b; wc -c < /tmp/b; cat /tmp/b >&2"],
           stdin_b64=base64.b64encode(blob).decode())
    if d["stdout"].strip() != "1024" or out(d, "stderr") != blob or "stderr_b64" not in d:
        fail("exec with binary stdin/stderr: %s" % {k: v for k, v in d.items() if k != "stderr_b64"})
    # A 1 MiB argv (past a socket message: the spawner gets it in a memfd) and 50 MiB of stdin.
    d = ex(s, sid, ["sh", "-c", 'echo $# "${#1}"', "sh"] + ["a" * 1023] * 1024)
    if d["stdout"] != "1024 1023\n":
        fail("a 1 MiB argv: %s" % d)
    big = os.urandom(50 * MiB)
    d = ex(s, sid, ["sh", "-c", "cat > /tmp/in; wc -c < /tmp/in; md5sum < /tmp/in; rm /tmp/in"],
           stdin_b64=base64.b64encode(big).decode())
    if d["stdout"] != "%d\n%s  -\n" % (len(big), hashlib.md5(big).hexdigest()):
        fail("50 MiB of stdin: %s" % d)
    d = ex(s, sid, ["python3", "-c", "print('h\u00e9llo \u2603'); import sys; sys.exit(3)"])
    if d["stdout"] != "h\u00e9llo \u2603\n" or d["returncode"] != 3 or d["timed_out"]:
        fail("exec python3, exit 3: %s" % d)
    d = ex(s, sid, ["sh", "-c", "kill -TERM $$"])
    if d["returncode"] != 143 or d["timed_out"]:
        fail("a self-SIGTERM: %s" % d)
    d = ex(s, sid, ["/etc/passwd"])
    if d["returncode"] != 126:
        fail("a file that is not a program: %s" % d)
    d = ex(s, sid, ["no-such-program-xyz"])
    if d["returncode"] != 127 or "not found" not in d["stderr"]:
        fail("a missing program: %s" % d)
    d = ex(s, sid, ["sh", "-c", "echo x"], cwd="/no/such/dir")
    if d["returncode"] != 126:
        fail("a missing cwd: %s" % d)
    # 12 MiB of output: 10 MiB kept, truncated said.
    d = ex(s, sid, ["head", "-c", str(12 * MiB), "/dev/zero"])
    if len(out(d)) != 10 * MiB or not d["truncated"]:
        fail("12 MiB of output: %d bytes, truncated %s" % (len(out(d)), d["truncated"]))
    # The timeout kills the whole tree: a double fork in the group and one that left it.
    t0 = time.time()
    d = ex(s, sid, ["sh", "-c", "(sleep 300 &); (setsid sleep 301 &); echo started; sleep 302"],
           timeout=1)
    took = time.time() - t0
    if not d["timed_out"] or d["returncode"] != 124 or d["stdout"] != "started\n" or took > 10:
        fail("timeout: %s after %.1f s" % (d, took))
    d = ex(s, sid, ["sh", "-c", "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done"])
    if "sleep 30" in d["stdout"]:
        fail("the timed-out tree outlived its exec:\n%s" % d["stdout"])
    # What an exec starts in the background outlives it (a service for the next exec), as
    # under docker exec; the call returns when the command exits.
    t0 = time.time()
    d = ex(s, sid, ["sh", "-c", "sleep 303 >/dev/null 2>&1 & echo bg"])
    if d["stdout"] != "bg\n" or time.time() - t0 > 5:
        fail("a background job: %s" % d)
    d = ex(s, sid, ["sh", "-c", "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done"])
    if "sleep 303" not in d["stdout"]:
        fail("the background job did not outlive its exec:\n%s" % d["stdout"])
    # user: the image's sandbox user, nothing else.
    if ex(s, sid, ["id", "-un"], user="agent")["stdout"] != "agent\n":
        fail("user agent")
    for bad in ("root", "sandbox", "nobody"):
        d = ex(s, sid, ["id"], want=400, user=bad)
        if d.get("error") != "user_unsupported" or not d.get("message"):
            fail("user %s: %s" % (bad, d))
    for body in ({}, {"cmd": []}, {"cmd": "ls"}, {"cmd": ["ls"], "bogus": 1},
                 {"cmd": ["ls"], "timeout": -1}, {"cmd": ["ls"], "stdin": "a", "stdin_b64": "YQ=="}):
        st, d = s.call("POST", "/v1/sandboxes/%s/exec" % sid, body)
        if st != 400 or d.get("error") != "bad_request":
            fail("exec %s: HTTP %d %s" % (body, st, d))


def check_files(s, sid):
    put(s, sid, "sub/x.txt", b"text\n")
    put(s, sid, "a/b/c/deep.bin", bytes(range(256)))
    put(s, sid, "with space/été #1?.txt", b"")
    if get(s, sid, "with space/été #1?.txt") != b"":
        fail("an empty file whose name needs escaping")
    if get(s, sid, "a/b/c/deep.bin") != bytes(range(256)):
        fail("binary file round trip")
    if get(s, sid, "/workspace/sub/x.txt") != b"text\n":
        fail("absolute path")
    big = os.urandom(50 * MiB)
    t0 = time.time()
    put(s, sid, "big.bin", big)
    back = get(s, sid, "big.bin")
    if back != big:
        fail("50 MiB round trip: %d bytes back" % len(back))
    print("50 MiB put+get: %.2f s" % (time.time() - t0))
    d = ex(s, sid, ["sh", "-c", "stat -c '%u %s' big.bin; ls -ld a/b/c | cut -c1-10"])
    if not d["stdout"].startswith("1001 %d\n" % (50 * MiB)):
        fail("the written file's owner and size: %s" % d)
    for path, want, code in (("no/such/file", 404, "file_not_found"), ("a/b", 409, "is_a_directory"),
                             ("/etc/shadow", 403, "permission_denied"),
                             ("/dev/zero", 413, "too_large")):
        body = get(s, sid, path, want)
        if error_code(body) != code:
            fail("GET %s: %s" % (path, body))
    for path, want, code in (("/etc/passwd", 403, "permission_denied"),
                             ("/usr/new/file", 403, "permission_denied"),
                             ("a/b", 409, "is_a_directory")):
        body = put(s, sid, path, b"x", want)
        if error_code(body) != code:
            fail("PUT %s: %s" % (path, body))
    st, body = raw(s, "GET", "/v1/sandboxes/%s/files" % sid)
    if st != 400:
        fail("files without ?path=: %d" % st)


def case_api(s):
    wait_warm(s)
    a = create(s)
    if not a["warm"] or a["user"] != "agent" or a["users"] != ["agent"] or \
            a["workdir"] != "/workspace":
        fail("warm create: %s" % a)
    b = create(s, memory="1g", cpus=1, pids=128, timeout=120, workdir="/tmp")
    if b["warm"]:
        fail("other limits came from the pool: %s" % b)
    for body in ({"bogus": 1}, {"memory": "lots"}, {"timeout": 0}, {"workdir": "rel"}):
        st, d = s.call("POST", "/v1/sandboxes", body)
        if st != 400 or d.get("error") != "bad_request":
            fail("create %s: HTTP %d %s" % (body, st, d))
    for _ in range(4):  # a client's mistake, however often: never drains the engine
        st, d = s.call("POST", "/v1/sandboxes", {"image": "sandboxctl/no-such-image:x"})
        if st != 400 or d.get("error") != "image_not_found":
            fail("create with a missing image: HTTP %d %s" % (st, d))
    st, d = s.call("GET", "/v1/health")
    if st != 200 or d["status"] != "ok" or d["live_sandboxes"] != 2:
        fail("health after missing images: %d %s" % (st, d))
    st, d = s.call("GET", "/v1/sandboxes")
    if st != 200 or sorted(x["id"] for x in d["sandboxes"]) != sorted([a["id"], b["id"]]):
        fail("list: %s" % d)
    st, d = s.call("GET", "/v1/sandboxes/" + b["id"])
    if st != 200 or d["id"] != b["id"] or d["workdir"] != "/tmp" or not d.get("container"):
        fail("GET one sandbox: %d %s" % (st, d))
    for method, path in (("PUT", "/v1/sandboxes"), ("GET", "/v1/sandboxes/%s/exec" % b["id"]),
                         ("DELETE", "/v1/sandboxes/%s/files" % b["id"])):
        st, _ = s.call(method, path)
        if st != 405:
            fail("%s %s: %d, not 405" % (method, path, st))
    if ex(s, b["id"], ["pwd"])["stdout"] != "/tmp\n":
        fail("workdir /tmp")
    check_files(s, a["id"])
    check_exec(s, a["id"])
    m = s.metrics()
    for k, want in (("sandboxctl_serve_sandboxes", 2),
                    ('sandboxctl_serve_sandboxes_created_total{kind="warm"}', 1),
                    ('sandboxctl_serve_sandboxes_created_total{kind="cold"}', 1),
                    ("sandboxctl_serve_sandbox_exec_timeouts_total", 1)):
        if m.get(k) != want:
            fail("metrics %s = %s, wanted %s" % (k, m.get(k), want))
    if m.get("sandboxctl_serve_sandbox_execs_total", 0) < 10:
        fail("metrics: execs %s" % m.get("sandboxctl_serve_sandbox_execs_total"))
    # Without --reuse, DELETE answers once the container is removed (200); the id
    # is gone from then on.
    st, d = s.call("DELETE", "/v1/sandboxes/" + a["id"])
    if st != 200 or d.get("id") != a["id"] or d.get("state") != "removed" or not gone(a):
        fail("delete: %d %s (container gone: %s)" % (st, d, gone(a)))
    for method, path in (("DELETE", ""), ("POST", "/exec"), ("GET", "/files?path=x"), ("GET", "")):
        st, d = s.call(method, "/v1/sandboxes/" + a["id"] + path,
                       {"cmd": ["true"]} if method == "POST" else None)
        if st != 404 or d.get("error") != "sandbox_not_found":
            fail("%s on a deleted sandbox: %d %s" % (method, st, d))
    if not wait_until(lambda: s.metrics().get(
            'sandboxctl_serve_sandboxes_removed_total{reason="deleted"}') == 1, 30):
        fail("metrics: removed")
    if not wait_until(lambda: gone(a), 30):
        fail("the deleted sandbox's container is still there (no --reuse: removed)")
    if s.metrics().get("sandboxctl_serve_resets_total"):
        fail("a reset without --reuse")
    # b is live, the pool refilled: SIGTERM removes them all (checked by stop_cleanly).
    s.stop_cleanly()


def case_attacks(s):
    # A warm sandbox that died in the pool is not handed out: the create starts cold.
    wait_warm(s)
    for c in our_containers([s.service_id + "-pool-"]):
        engine("POST", "/containers/%s/kill" % c["Id"])
    d = create(s)
    if d["warm"] or ex(s, d["id"], ["true"])["returncode"] != 0:
        fail("after a dead warm sandbox: %s" % d)
    s.call("DELETE", "/v1/sandboxes/" + d["id"])
    wait_warm(s)
    a = create(s)
    b = create(s)
    put(s, b["id"], "secret.txt", b"B's secret")
    # One sandbox's exec cannot reach another's files, nor the engine.
    probe = ("find / -name secret.txt -not -path '/proc/*' 2>/dev/null | head -3; "
             "for p in /proc/[0-9]*/root/workspace/secret.txt; do cat $p; done 2>/dev/null; "
             "ls -la /var/run/docker.sock /run/docker.sock 2>&1; "
             "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); "
             "s.connect('/var/run/docker.sock')\" 2>&1 | tail -1; "
             "python3 -c \"import urllib.request; urllib.request.urlopen('http://172.17.0.1:2375/', "
             "timeout=2)\" 2>&1 | tail -1")
    d = ex(s, a["id"], ["sh", "-c", probe], timeout=60)
    if "B's secret" in d["stdout"] + d["stderr"] or "secret.txt" in d["stdout"]:
        fail("sandbox A read B's file: %s" % d)
    if "No such file" not in d["stdout"] or "srw" in d["stdout"]:
        fail("the engine socket is visible: %s" % d["stdout"])
    # files?path= stays inside the sandbox: a symlink to /etc reads the sandbox's /etc.
    host_hostname = open("/etc/hostname", "rb").read()
    ex(s, a["id"], ["sh", "-c", "ln -s /etc etc_link; ln -s /proc/1/root root1; "
                    "ln -s ../../../../../../etc/hostname up"])
    inside = ex(s, a["id"], ["cat", "/etc/hostname"])["stdout"].encode()
    for path in ("etc_link/hostname", "up", "../../../../etc/hostname",
                 "/workspace/../../etc/hostname", "/proc/self/root/etc/hostname"):
        got = get(s, a["id"], path)
        if got != inside or (got == host_hostname and inside != host_hostname):
            fail("GET %s gave %r, the sandbox's is %r" % (path, got, inside))
    for path in ("/proc/1/root/etc/hostname", "root1/etc/hostname", "/proc/1/environ",
                 "/proc/1/mem"):
        body = get(s, a["id"], path, 403)
        if error_code(body) != "permission_denied":
            fail("GET %s: %s" % (path, body))
    for path in ("../../etc/evil", "/proc/self/root/etc/evil", "etc_link/evil",
                 "/proc/1/root/tmp/evil"):
        st, body = raw(s, "PUT", "/v1/sandboxes/%s/files?path=%s" % (a["id"],
                                                                     urllib.parse.quote(path)),
                       b"x")
        if st == 204 and not path.startswith("/proc/1"):
            fail("PUT %s was written" % path)
        if st == 204:
            fail("PUT %s through PID 1's root was written" % path)
    # A wrong or missing token: 401 for every sandbox route, nothing run.
    for token in ("0" * 32, s.token[:-1] + ("0" if s.token[-1] != "0" else "1")):
        for method, path, data in (("POST", "/v1/sandboxes", b"{}"),
                                   ("POST", "/v1/sandboxes/%s/exec" % a["id"],
                                    b'{"cmd":["touch","/workspace/pwned"]}'),
                                   ("PUT", "/v1/sandboxes/%s/files?path=pwned" % a["id"], b"x"),
                                   ("DELETE", "/v1/sandboxes/" + a["id"], None)):
            st, _ = raw(s, method, path, data, token=token)
            if st != 401:
                fail("%s %s with a wrong token: %d" % (method, path, st))
    get(s, a["id"], "pwned", 404)  # the refused exec and PUT did not run
    # An oversized PUT is refused at its head, and the service goes on.
    u = urllib.parse.urlsplit(s.url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.putrequest("PUT", "/%s/v1/sandboxes/%s/files?path=huge" % (s.token, a["id"]))
    c.putheader("Content-Length", str(101 * MiB))
    c.endheaders()
    r = c.getresponse()
    body = r.read()
    c.close()
    if r.status != 413 or error_code(body) != "too_large":
        fail("oversized PUT: %d %s" % (r.status, body))
    get(s, a["id"], "huge", 404)
    # Six 20 MiB uploads at once share the 4 transfer slots: all land, none is refused.
    blob = os.urandom(20 * MiB)
    res = [None] * 6
    ths = [threading.Thread(target=lambda i=i: res.__setitem__(i, raw(
        s, "PUT", "/v1/sandboxes/%s/files?path=par%d" % (a["id"], i), blob)[0]))
           for i in range(6)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    if res != [204] * 6 or get(s, a["id"], "par5") != blob:
        fail("concurrent uploads: %s" % res)
    # The cap: --max-sandboxes 3, the fourth is 429 and nothing is started for it.
    create(s)
    st, d = s.call("POST", "/v1/sandboxes", {"image": IMAGE})
    if st != 429 or d.get("error") != "too_many_sandboxes":
        fail("past --max-sandboxes: %d %s" % (st, d))
    if s.metrics().get("sandboxctl_serve_sandboxes_refused_total") != 1:
        fail("metrics: refused")
    # Expiry: a sandbox with 2 s of life is gone soon after.
    s.call("DELETE", "/v1/sandboxes/" + b["id"])
    e = create(s, timeout=2)
    st, d = s.call("POST", "/v1/sandboxes/%s/exec" % e["id"], {"cmd": ["sleep", "30"]})
    # Cut at the sandbox's end: its own timeout, or the removal that came first.
    if not (st == 200 and d["timed_out"]) and not (st == 404 and d["error"] == "sandbox_not_found"):
        fail("an exec past the sandbox's life: %d %s" % (st, d))
    if not wait_until(lambda: s.call("GET", "/v1/sandboxes/" + e["id"])[0] == 404, 10):
        fail("an expired sandbox is still listed")
    if not wait_until(lambda: s.metrics().get(
            'sandboxctl_serve_sandboxes_removed_total{reason="expired"}') == 1, 10):
        fail("metrics: expired")
    s.stop_cleanly()


# What a client can see of what came before: the writable places, the
# processes of its uid (but this look's own) and their environment.
LOOK = r"""
import os, pwd
me = {os.getpid(), os.getppid()}
out = []
for d in ("/tmp", "/dev/shm", "/dev/mqueue", "/workspace", pwd.getpwuid(os.getuid()).pw_dir):
    try:
        out.append(d + ": " + " ".join(sorted(os.listdir(d))))
    except OSError as e:
        out.append(d + ": " + str(e))
procs, planted = [], 0
for p in os.listdir("/proc"):
    if not p.isdigit() or int(p) in me:
        continue
    try:
        if os.stat("/proc/" + p).st_uid != os.getuid():
            continue
        cmd = open("/proc/%s/cmdline" % p, "rb").read().replace(b"\0", b" ").decode()
        planted += b"PLANTED=" in open("/proc/%s/environ" % p, "rb").read()
    except OSError:
        continue
    procs.append(cmd)
print("\n".join(out + sorted(procs) + ["processes with PLANTED: %d" % planted]))
"""


def look(s, sid):
    return ex(s, sid, ["python3", "-c", LOOK])["stdout"]


def plant(s, sid):
    """Residue of every kind a client can leave: files in each writable place,
    background processes (setsid, double-forked, ignoring SIGTERM and SIGHUP,
    stopped), an environment variable held by a live process."""
    put(s, sid, "/workspace/secret.txt", b"A's secret")
    put(s, sid, "/tmp/.hidden/deep/x", b"x")
    put(s, sid, "/dev/shm/planted", b"x" * 4096)
    ex(s, sid, ["sh", "-c", "echo 'export PLANTED=1' >> ~/.profile; touch ~/planted; "
                "mkfifo /tmp/fifo; chmod 000 /tmp/.hidden"])
    for cmd in (["sh", "-c", "nohup sleep 1001 >/dev/null 2>&1 &"],
                ["sh", "-c", "setsid sh -c 'trap \"\" TERM HUP INT; sleep 1002' >/dev/null 2>&1 &"],
                ["sh", "-c", "(setsid python3 -c 'import os,signal,time; "
                 "[signal.signal(x, signal.SIG_IGN) for x in (1, 2, 15)]; "
                 "os.fork() and os._exit(0); time.sleep(1003)' >/dev/null 2>&1 &)"],
                ["sh", "-c", "sleep 1004 >/dev/null 2>&1 & kill -STOP $!"]):
        ex(s, sid, cmd, env={"PLANTED": "1"})
    # Several streams open at once: each goes on to the next server after the reset.
    ths = [threading.Thread(target=ex, args=(s, sid, ["sleep", "0.3"])) for _ in range(4)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    seen = look(s, sid)
    for want in ("secret.txt", "planted", "sleep 1001", "sleep 1002", "1003", "sleep 1004"):
        if want not in seen:
            fail("the residue did not take (%s):\n%s" % (want, seen))


def case_reuse(s):
    """--reuse: a deleted sandbox is reset in place and back in the pool; its
    next user sees nothing of it; the old id is refused; a dirty reset, one
    with a request under way, one of other limits, and one deleted while serve
    stops are removed instead."""
    wait_warm(s)
    a = create(s)
    fresh = look(s, a["id"])
    plant(s, a["id"])
    t0 = time.time()
    st, d = s.call("DELETE", "/v1/sandboxes/" + a["id"])
    took = time.time() - t0
    if st != 202 or d.get("state") != "resetting":
        fail("delete: %d %s" % (st, d))
    print("DELETE answered in %.1f ms" % (took * 1000))
    if not wait_until(lambda: s.metrics().get("sandboxctl_serve_resets_total") == 1, 30, poll=0.05):
        fail("no reset counted: %s" % s.metrics())
    # The pool now holds A's container, reset, and the filler's replacement of it.
    wait_warm(s, 2)
    b1, b2 = create(s), create(s)
    b, other = (b1, b2) if b1["container"] == a["container"] else (b2, b1)
    if not b["warm"] or b["container"] != a["container"] or b["id"] == a["id"] or \
            b.get("reused") != 1:
        fail("the reset sandbox was not handed out again: %s, %s after %s" % (b1, b2, a))
    seen = look(s, b["id"])
    print("B sees:\n" + seen)
    if seen != fresh:
        fail("B sees what A left:\n%s\nwhere a fresh sandbox shows:\n%s" % (seen, fresh))
    body = get(s, b["id"], "/workspace/secret.txt", 404)
    if error_code(body) != "file_not_found":
        fail("A's file in B: %s" % body)
    # A's id is refused everywhere, also now that its container serves B.
    for method, path in (("DELETE", ""), ("POST", "/exec"), ("GET", "/files?path=secret.txt"),
                         ("PUT", "/files?path=x"), ("GET", "")):
        st, d = s.call(method, "/v1/sandboxes/" + a["id"] + path,
                       {"cmd": ["touch", "/workspace/pwned"]} if method == "POST" else None)
        if st != 404 or d.get("error") != "sandbox_not_found":
            fail("%s with A's id: %d %s" % (method, st, d))
    get(s, b["id"], "pwned", 404)
    m = s.metrics()
    if m.get('sandboxctl_serve_sandboxes_removed_total{reason="deleted"}') != 1 or \
            m.get('sandboxctl_serve_sandboxes_created_total{kind="warm"}') != 3:
        fail("metrics after a reset: %s" % m)
    # Round after round, each create straight after the last DELETE (it takes
    # a ready one or waits for the reset rather than start cold), until A's
    # container's --reuse 4 is spent: then it is removed.
    resets, uses = 1, {a["container"]: 2, other["container"]: 1}
    live = [b, other]
    for i in range(12):
        d = live.pop(0)
        st, _ = s.call("DELETE", "/v1/sandboxes/" + d["id"])
        if uses[d["container"]] < 4:
            resets += 1
        elif not wait_until(lambda: gone(d), 30):
            fail("round %d: a sandbox whose reuse is spent was not removed" % i)
        n = create(s)
        # warm: a ready one, or the one being reset (a spent one gives none to wait for)
        if n["reused"] != uses.get(n["container"], 0) or \
                (not n["warm"] and uses[d["container"]] < 4):
            fail("round %d: %s (uses %s)" % (i, n, uses))
        uses[n["container"]] = n["reused"] + 1
        if ex(s, n["id"], ["sh", "-c", "ls -A /workspace; echo $$ > /workspace/r"])["stdout"]:
            fail("round %d: the last round's file is there" % i)
        live.append(n)
    if a["container"] in [x["container"] for x in live] or not gone(a):
        fail("A's container outlived its --reuse 4")
    if not wait_until(lambda: s.metrics().get("sandboxctl_serve_resets_total") == resets, 30):
        fail("resets: %s, wanted %d" % (s.metrics().get("sandboxctl_serve_resets_total"), resets))
    for d in live:
        s.call("DELETE", "/v1/sandboxes/" + d["id"])
        resets += uses[d["container"]] < 4
    if not wait_until(lambda: s.metrics().get("sandboxctl_serve_resets_total") == resets, 30):
        fail("resets: %s, wanted %d" % (s.metrics().get("sandboxctl_serve_resets_total"), resets))
    print("uses per container: %s" % sorted(uses.values()))

    # A dirty reset: root's file in a sticky directory, which no uid of the
    # sandbox may remove, retires the container (one with a use left after this).
    for _ in range(6):
        b = create(s)
        if b["reused"] < 3:
            break
        s.call("DELETE", "/v1/sandboxes/" + b["id"])
        wait_until(lambda: gone(b), 30)
    else:
        fail("no sandbox with a use left")
    js = {"Content-Type": "application/json"}
    st, e = engine("POST", "/containers/%s/exec" % b["container"],
                   json.dumps({"User": "0:0", "Cmd": ["sh", "-c", "echo x > /dev/shm/rootfile"]}),
                   headers=js)
    if st != 201:
        fail("exec create: %s %s" % (st, e))
    engine("POST", "/exec/%s/start" % e["Id"], json.dumps({"Detach": False, "Tty": False}),
           headers=js)
    st, _ = s.call("DELETE", "/v1/sandboxes/" + b["id"])
    if st != 202:
        fail("delete B: %d" % st)
    if not wait_until(lambda: s.metrics().get("sandboxctl_serve_reset_retired_total") == 1, 30):
        fail("the dirty reset was not counted as retired")
    if not wait_until(lambda: gone(b), 30):
        fail("the retired sandbox's container is still there")
    if s.metrics().get("sandboxctl_serve_resets_total") != resets:
        fail("a dirty reset counted clean")
    wait_warm(s)
    c = create(s)
    if c["container"] == b["container"] or not c["warm"]:
        fail("after a retire: %s" % c)

    # A request under way at the DELETE: the sandbox is removed, not reset (the
    # request could otherwise reach the next user's server).
    res = {}
    th = threading.Thread(target=lambda: res.update(r=s.call(
        "POST", "/v1/sandboxes/%s/exec" % c["id"], {"cmd": ["sh", "-c", "sleep 20"]})))
    th.start()
    time.sleep(1)
    st, _ = s.call("DELETE", "/v1/sandboxes/" + c["id"])
    th.join(60)
    if st != 200 or res.get("r", (0,))[0] != 404 or res["r"][1].get("error") != "sandbox_not_found":
        fail("an exec cut by DELETE: %d %s" % (st, res))
    if not wait_until(lambda: gone(c), 30):
        fail("a sandbox deleted under a request was not removed")

    # Other limits than the pool's: removed, not pooled.
    wait_warm(s)
    o = create(s, memory="1g")
    if o["warm"]:
        fail("1g came from the pool")
    st, _ = s.call("DELETE", "/v1/sandboxes/" + o["id"])
    if st != 200 or not gone(o):
        fail("a sandbox of other limits was not removed")
    m = s.metrics()
    if m.get("sandboxctl_serve_resets_total") != resets or \
            m.get("sandboxctl_serve_reset_retired_total") != 1:
        fail("resets after removals: %s" % m)

    # A cold one with the pool's limits joins the pool after its reset, with a
    # pool sandbox's life.
    wait_warm(s)
    w1, w2 = create(s), create(s)
    cold = w2 if not w2["warm"] else w1 if not w1["warm"] else None
    if cold:
        before = s.metrics().get("sandboxctl_serve_resets_total")
        s.call("DELETE", "/v1/sandboxes/" + cold["id"])
        if not wait_until(lambda: s.metrics().get("sandboxctl_serve_resets_total") == before + 1,
                          30):
            fail("a cold sandbox of the pool's limits was not reset")
        got = [create(s) for _ in range(2)]
        if not any(g["container"] == cold["container"] and g["reused"] == 1 for g in got):
            fail("the reset cold sandbox did not come from the pool: %s" % got)
    else:
        print("both creates were warm: the cold one's return not checked")

    # Deleted while the service stops: nothing is left behind.
    f = create(s)
    s.call("DELETE", "/v1/sandboxes/" + f["id"])
    s.stop_cleanly()


def case_gc(s):
    """serve killed with SIGKILL: its sandbox is labelled, and `sandboxctl gc` removes it."""
    d = create(s, timeout=600)
    if d["warm"]:
        fail("--pool 0 gave a warm sandbox: %s" % d)
    s.p.kill()
    s.p.wait()
    label = s.service_id + "-sbx-1"
    left = our_containers([label])
    if len(left) != 1 or left[0]["Labels"].get("sandboxctl.task") != "warm":
        fail("the killed service's sandbox: %s" % [c["Labels"] for c in left])
    g = subprocess.run([SANDBOXCTL, "gc", "--run-id", label], capture_output=True, text=True,
                       timeout=120)
    if g.returncode != 0 or our_containers([label]):
        fail("gc: exit %d %s %s" % (g.returncode, g.stdout, g.stderr))


CASES = {
    "api": (case_api, ["--pool", "0", "--pool-image", IMAGE + "=1"]),
    "attacks": (case_attacks, ["--pool", "0", "--pool-image", IMAGE + "=1",
                               "--max-sandboxes", "3"]),
    "gc": (case_gc, ["--pool", "0"]),
    "reuse": (case_reuse, ["--pool", "0", "--pool-image", IMAGE + "=1", "--reuse", "4"]),
}


def run_case(name):
    if os.environ.get("SBX_RUN_TEST_IMAGE") != "real" or not image_exists(IMAGE):
        raise Skip("needs SBX_RUN_TEST_IMAGE=real and %s" % IMAGE)
    with_service(*CASES[name])


if __name__ == "__main__":
    main_cases(CASES, run_case)

# SPDX-License-Identifier: MIT
"""Images whose main program replaces the sandbox's server, for tests of how
the host treats a server it cannot trust: built on the sandbox image through
the Engine API (no registry), labelled as test objects, removed by the test."""
import io
import os
import tarfile
import urllib.parse

import test_integration as it

# Answers /health at once (the host's readiness probe); how it answers the
# rest is the test's. SERVE(c, target) gets the connection and the path.
PRELUDE = r'''
import os, socket, sys, threading, time
path = os.environ.get("SANDBOX_SOCKET", "/run/sandbox/mcp.sock")
os.makedirs(os.path.dirname(path), exist_ok=True)
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(64)
def requests(c):
    f = c.makefile("rb")
    while True:
        line = f.readline()
        if not line:
            return
        n = 0
        while True:
            h = f.readline()
            if h in (b"\r\n", b"\n", b""):
                break
            if h.lower().startswith(b"content-length:"):
                n = int(h.split(b":")[1])
        if n:
            f.read(n)
        parts = line.split()
        target = parts[1] if len(parts) > 1 else b"/"
        if target.endswith(b"/health"):
            body = b'{"status":"ok"}'
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            continue
        SERVE(c, target)
'''
LOOP = r'''
while True:
    c, _ = s.accept()
    threading.Thread(target=requests, args=(c,), daemon=True).start()
'''


def build_image(tag, dockerfile, files=None):
    """Builds tag from a Dockerfile (and the files it copies) through the Engine API."""
    files = dict(files or {}, Dockerfile=dockerfile)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    c = it.UnixHTTP(host[len("unix://"):])
    c.request("POST", "/build?t=%s&rm=1&forcerm=1" % urllib.parse.quote(tag),
              body=buf.getvalue(), headers={"Content-Type": "application/x-tar"})
    r = c.getresponse()
    out = r.read().decode(errors="replace")
    c.close()
    if r.status != 200 or '"errorDetail"' in out:
        it.fail("building %s: %d %s" % (tag, r.status, out[-2000:]))


def build(tag, serve_source, extra=""):
    """Builds tag from the sandbox image with the impostor as PID 1's main program."""
    build_image(tag, "FROM %s\nLABEL sandboxctl.test=1\nCOPY impostor.py /impostor.py\n"
                     "ENTRYPOINT [\"/usr/local/bin/sandbox-init\", \"--\", \"python3\", "
                     "\"/impostor.py\"]\n" % it.pick_image(),
                {"impostor.py": PRELUDE + serve_source + extra + LOOP})


def remove(tag):
    it.engine("DELETE", "/images/%s?force=1" % urllib.parse.quote(tag, safe=""))

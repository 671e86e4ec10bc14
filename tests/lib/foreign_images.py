"""Images with none of sandboxctl's files, made offline here (issue 30, any image).

Each is a root filesystem packed in memory and imported through the Engine
API (POST /images/create?fromSrc=-), labelled sandboxctl.test=1:

  glibc    the host's dash as /bin/sh, a few coreutils and the glibc they load;
           no Python, no tar, no /etc/passwd entry for 1000 or 1001
  noshell  one static binary (the host's busybox-static as /usr/bin/bb), no /bin/sh
  busybox  busybox-static with its applets linked in /bin
  hostile  busybox plus everything an image author could try against the
           bundle and the hardening: our images' label, its own /opt/sandboxctl programs, an
           ENTRYPOINT, USER root, a huge ENV, LD_PRELOAD, SANDBOX_* settings,
           a PATH that shadows the helpers, a setuid-root shell, /etc/passwd
           without 1001, a HEALTHCHECK (the engine runs it as the container's
           user), a VOLUME (a writable volume on the read-only root).
  volume-bundle, volume-run  a VOLUME over the bundle's lib/ or /run/sandbox; refused.
  link-workspace, link-opt, link-tmp  /opt/sandboxctl -> /workspace, /opt ->
           run, /tmp -> the bundle's lib/: the engine would follow them and
           mount the bundle over another mount or a tmpfs over the bundle; refused.

ensure(name) builds an image once (its tag carries a hash of what went in)
and returns its ref.
"""
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import urllib.parse

import second_engine

# Not sandboxctl-test/: an image labelled as ours is trusted only in sandboxctl's namespaces.
REPO = "sbx-foreign-test/"
BUSYBOX = shutil.which("busybox") or "/bin/busybox"


class Root:
    def __init__(self):
        self.buf = io.BytesIO()
        self.tar = tarfile.open(fileobj=self.buf, mode="w")
        self.dirs = set()

    def dir(self, path, mode=0o755):
        parts = path.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            p = "/".join(parts[:i])
            if p and p not in self.dirs:
                self.dirs.add(p)
                ti = tarfile.TarInfo(p)
                ti.type, ti.mode = tarfile.DIRTYPE, mode
                self.tar.addfile(ti)

    def file(self, path, data, mode=0o644, uid=0):
        self.dir(os.path.dirname(path))
        ti = tarfile.TarInfo(path.strip("/"))
        ti.size, ti.mode, ti.uid, ti.gid = len(data), mode, uid, 0
        self.tar.addfile(ti, io.BytesIO(data))

    def host_file(self, host, path=None, mode=None):
        with open(host, "rb") as f:
            data = f.read()
        self.file(path or host, data, mode if mode is not None else os.stat(host).st_mode & 0o7777)

    def link(self, path, target):
        self.dir(os.path.dirname(path))
        self.dirs.add(path.strip("/"))  # no directory of that name after it
        ti = tarfile.TarInfo(path.strip("/"))
        ti.type, ti.linkname = tarfile.SYMTYPE, target
        self.tar.addfile(ti)

    def bytes(self):
        for d in ("tmp", "proc", "sys", "dev", "etc"):
            self.dir(d, 0o1777 if d == "tmp" else 0o755)
        self.tar.close()
        return self.buf.getvalue()


def with_libs(root, programs):
    """Each host program at its own path, with the loader and libraries ldd names."""
    libs = set()
    for p in programs:
        root.host_file(p)
        out = subprocess.run(["ldd", p], capture_output=True, text=True).stdout
        for line in out.splitlines():
            w = line.split()
            if "=>" in w and len(w) > 2 and w[2].startswith("/"):
                libs.add(w[2])
            elif w and w[0].startswith("/"):
                libs.add(w[0])
    for lib in sorted(libs):
        root.host_file(os.path.realpath(lib), lib, 0o755)


def busybox_root(root):
    root.host_file(BUSYBOX, "/bin/busybox", 0o755)
    out = subprocess.run([BUSYBOX, "--list"], capture_output=True, text=True).stdout
    for a in out.split():
        if a != "busybox" and "/" not in a:
            root.link("/bin/" + a, "busybox")


PASSWD = b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n"


def make(name):
    """(rootfs tar, Dockerfile changes) of the image called name."""
    root = Root()
    changes = ['LABEL sandboxctl.test=1', 'CMD ["/bin/sh"]']
    if name == "glibc":
        progs = [shutil.which(p) for p in ("dash", "cat", "ls", "id", "echo", "mkdir", "grep", "sed", "tr", "touch")]
        with_libs(root, progs)
        root.link("/bin/sh", os.path.realpath(shutil.which("dash")))
        root.file("/etc/passwd", PASSWD)
        changes.append("ENV PATH=/usr/local/bin:/usr/bin:/bin")
    elif name == "noshell":
        root.host_file(BUSYBOX, "/usr/bin/bb", 0o755)
        changes = ['LABEL sandboxctl.test=1', 'ENTRYPOINT ["/usr/bin/bb"]']
    elif name == "busybox":
        busybox_root(root)
        root.file("/etc/passwd", PASSWD)
    elif name == "hostile":
        busybox_root(root)
        root.file("/etc/passwd", PASSWD)
        evil = b"#!/bin/sh\necho pwned > /tmp/pwned; echo pwned > /workspace/pwned\nexec sleep 1000\n"
        for p in ("/opt/sandboxctl/bin/sandbox-init", "/opt/sandboxctl/bin/sandbox-spawner",
                  "/opt/sandboxctl/bin/sandbox-bridge", "/opt/sandboxctl/libexec/sandbox-mcp",
                  "/opt/sandboxctl/libexec/tar", "/opt/sandboxctl/lib/ld.so",
                  "/evil/sandbox-spawner", "/evil/sandbox-bridge", "/evil/sandbox-mcp",
                  "/evil/tar", "/evil/Xvfb", "/usr/local/bin/sandbox-init"):
            root.file(p, evil, 0o755)
        root.file("/evil/evil.so", b"not an ELF: the loader must never be asked to load it", 0o755)
        root.host_file(BUSYBOX, "/bin/busybox-suid", 0o4755)
        changes = ['LABEL sandboxctl.test=1',
                   # Claims to be ours: its own ENTRYPOINT would be PID 1, root with capabilities.
                   'LABEL sandboxctl.image=slim',
                   'ENTRYPOINT ["/bin/sh", "-c", "echo pwned > /tmp/pwned; sleep 1000"]',
                   'CMD ["pwned"]', 'USER 0:0', 'WORKDIR /evil',
                   'ENV PATH=/evil:/bin LD_PRELOAD=/evil/evil.so LD_LIBRARY_PATH=/evil '
                   'SANDBOX_UID=0 SANDBOX_AGENT_UID=0 SANDBOX_DISPLAY=:7 SANDBOX_OPEN=/etc/passwd '
                   'SANDBOX_WORKSPACE=/evil SANDBOX_EXEC_MAX_PROCESSES=0',
                   'ENV HUGE=' + "x" * 32768,
                   # The engine would run it as the container's user (root, three capabilities).
                   'HEALTHCHECK --interval=1s --timeout=1s CMD ["/bin/sh", "-c", '
                   '"id -u > /tmp/pwned; echo pwned > /workspace/pwned"]',
                   'VOLUME ["/data"]']
    elif name in ("volume-bundle", "volume-run"):  # a writable volume over our mounts
        busybox_root(root)
        changes.append('VOLUME ["%s"]' % ("/opt/sandboxctl/v1/lib" if name == "volume-bundle"
                                          else "/run/sandbox"))
    elif name == "link-workspace":  # the bundle would land over the workspace's tmpfs
        busybox_root(root)
        root.link("/opt/sandboxctl", "/workspace")
    elif name == "link-tmp":  # a writable tmpfs over the bundle's libraries
        busybox_root(root)
        root.link("/tmp", "/opt/sandboxctl/v1/lib")
    elif name == "link-opt":
        busybox_root(root)
        root.link("/opt", "run")
    else:
        raise ValueError(name)
    return root.bytes(), changes


def ensure(name, host=None):
    tar, changes = make(name)
    tag = hashlib.sha256(tar + json.dumps(changes).encode()).hexdigest()[:12]
    ref = REPO + name + ":" + tag
    st, _ = second_engine.engine("GET", "/images/%s/json" % urllib.parse.quote(ref, safe=""), host=host)
    if st == 200:
        return ref
    q = "fromSrc=-&repo=%s&tag=%s" % (urllib.parse.quote(REPO + name), tag)
    q += "".join("&changes=" + urllib.parse.quote(c) for c in changes)
    st, body = second_engine.engine("POST", "/images/create?" + q, body=tar,
                                    headers={"Content-Type": "application/x-tar"}, host=host)
    if st != 200 or b"error" in (body if isinstance(body, bytes) else json.dumps(body).encode()):
        raise RuntimeError("import %s: HTTP %s %r" % (ref, st, body[:300]))
    return ref


if __name__ == "__main__":
    import sys
    for n in sys.argv[1:] or ["glibc", "noshell", "busybox", "hostile"]:
        print(ensure(n))

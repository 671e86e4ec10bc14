"""A second Docker engine with gVisor's runsc registered, for the runsc tests.

RunscEngine(images) is a context manager: it starts a second dockerd
(tests/lib/second_engine.py: its own network namespace, socket, data root,
exec root and containerd namespaces under a fresh /tmp directory) whose config
file registers runsc as `doctor` tells users to:

    {"runtimes": {"runsc": {"path": "/usr/bin/runsc",
                            "runtimeArgs": ["--network=none", "--oci-seccomp"]}}}

(runsc refuses to start with network enabled in the root network namespace;
sandboxes use `--network none` anyway; without --oci-seccomp it ignores the
sandbox's seccomp profile). It copies the named images from the
first engine over the API (the engines have no registry), tagging each
<repo>:latest there too (pass the <repo>:<hash> tags `sandboxctl build`
printed: the first engine's :latest may be another tree's), and, on exit, removes
every container left on it, stops it and removes its directory, so nothing is
left: no process, socket, mount, data or container. Raises
second_engine.Unavailable when this machine cannot run it (no runsc, no root).
"""
import json
import os
import shutil
import subprocess
import tempfile
import urllib.parse

import second_engine

RUNSC = "/usr/bin/runsc"
CONFIG = {"runtimes": {"runsc": {"path": RUNSC,
                                 "runtimeArgs": ["--network=none", "--oci-seccomp"]}}}


def runsc_path():
    """The runsc binary the config registers, or None when it is not installed."""
    return RUNSC if os.access(RUNSC, os.X_OK) else shutil.which("runsc")


class RunscEngine:
    def __init__(self, images=(), runtime_args=None, name="runsc"):
        self.images = list(images)
        self.runtime_args = runtime_args
        self.name = name  # what daemon.json registers runsc as
        self.proc = self.host = self.tmp = None
        self.copied = {}

    def __enter__(self):
        path = runsc_path()
        if not path:
            raise second_engine.Unavailable("runsc is not installed (scripts/deps.sh installs it)")
        cfg = json.loads(json.dumps(CONFIG))
        cfg["runtimes"]["runsc"]["path"] = path
        if self.runtime_args is not None:
            cfg["runtimes"]["runsc"]["runtimeArgs"] = list(self.runtime_args)
        cfg["runtimes"] = {self.name: cfg["runtimes"]["runsc"]}
        # A short path: unix socket paths hold 108 bytes.
        self.tmp = tempfile.mkdtemp(prefix="sbx-gv-", dir="/tmp")
        try:
            self.proc, self.host = second_engine.start(self.tmp, cfg)
            for ref in self.images:
                self.copied[ref] = second_engine.copy_image(ref, second_engine.default_host(),
                                                            self.host)
                # This engine is the test's alone: its :latest is the image copied.
                repo = ref.rsplit(":", 1)[0]
                st, body = second_engine.engine(
                    "POST", "/images/%s/tag?repo=%s&tag=latest" % (
                        urllib.parse.quote(ref, safe=""), urllib.parse.quote(repo, safe="")),
                    host=self.host)
                if st != 201:
                    raise AssertionError("tag %s as latest: %s %s" % (ref, st, body))
        except BaseException:
            self.close()
            raise
        return self

    def containers(self):
        """Every container on this engine (running or not), as the API lists them."""
        st, body = second_engine.engine("GET", "/containers/json?all=1", host=self.host)
        if st != 200:
            raise AssertionError("second engine: list containers: %s %s" % (st, body))
        return body

    def close(self):
        """Removes what is left on the engine, stops it and removes its directory;
        the names of the containers that were left (a test should find none)."""
        left = []
        if self.proc and self.proc.poll() is None:
            try:
                for c in self.containers():
                    left.append(c.get("Names", [c["Id"][:12]])[0])
                    second_engine.engine("DELETE", "/containers/%s?force=1" %
                                         urllib.parse.quote(c["Id"]), host=self.host)
            except OSError:
                pass
        if self.proc:
            second_engine.stop(self.proc, self.tmp)
        elif self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
        # runsc keeps per-sandbox state under its root (exec-root/runtime-runsc/…), which
        # second_engine.stop removed with the directory; a sandbox process left behind
        # would show here.
        ps = subprocess.run(["pgrep", "-f", "runsc.*" + (self.tmp or "/nonexistent")],
                            capture_output=True, text=True, check=False)
        if ps.stdout.strip():
            left.append("runsc processes %s" % ps.stdout.split())
        self.proc = None
        return left

    def __exit__(self, *exc):
        left = self.close()
        if left and exc[0] is None:
            raise AssertionError("left on the runsc engine: %s" % left)
        return False

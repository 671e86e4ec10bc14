# SPDX-License-Identifier: MIT
"""Shared helpers for the sandbox-mcp integration tests: a temporary
workspace with a real ODS file, and the server started over HTTP on an
ephemeral loopback port (or a unix socket) and stopped again."""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from itest import stop_process  # noqa: E402

SOURCE_ROOT = os.environ.get("SBX_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD_ROOT = os.environ.get("SBX_BUILD_ROOT", os.path.join(SOURCE_ROOT, "build"))
SERVER = os.environ.get("SANDBOX_MCP", os.path.join(BUILD_ROOT, "server", "sandbox-mcp"))
ODS = os.path.join(SOURCE_ROOT, "tests", "server", "data", "cash_flows.ods")


@contextlib.contextmanager
def workspace(ods=ODS, prefix="sbx-mcp-it-"):
    """A temporary workspace holding a copy of ods as cash_flows.ods."""
    d = tempfile.mkdtemp(prefix=prefix)
    try:
        shutil.copy(ods, os.path.join(d, "cash_flows.ods"))
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@contextlib.contextmanager
def http_server(ws, *extra, unix=None, user=None, env=None):
    """Starts sandbox-mcp; yields its base URL (http://127.0.0.1:PORT or unix:PATH)."""
    ready = os.path.join(ws + ".ready")
    args = [SERVER, "--workspace", ws, "--ready-file", ready]
    args += ["--unix", unix] if unix else ["--http", "127.0.0.1:0"]
    args += list(extra)
    kw = {}
    if user is not None:
        kw.update(user=user, group=user, extra_groups=[])
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, **kw)
    try:
        deadline = time.time() + 10
        while not os.path.exists(ready):
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("server did not start: %s" % proc.stderr.read().decode())
            time.sleep(0.02)
        with open(ready) as f:
            yield f.read().strip(), proc
    finally:
        stop_process(proc, timeout=10)
        proc.stderr.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(ready)

# SPDX-License-Identifier: MIT
"""Starting and stopping a `sandboxctl serve` of one's own: a free loopback
port, its URL read from its first stdout line, its stderr kept in a file.

The service is bound to the process that starts it: on Linux it gets SIGTERM
when its parent dies (PR_SET_PDEATHSIG), and SIGTERM makes serve drain and
remove every sandbox it made. A service killed with SIGKILL leaves its
sandboxes labelled with its (now dead) pid: `sandboxctl gc` removes them."""
from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

_PR_SET_PDEATHSIG = 1


def binary() -> str:
    """The sandboxctl program: $SANDBOXCTL_BIN, else the one on PATH."""
    exe = os.environ.get("SANDBOXCTL_BIN") or shutil.which("sandboxctl")
    if not exe or not os.access(exe, os.X_OK):
        raise FileNotFoundError("sandboxctl not found: put it on PATH or set SANDBOXCTL_BIN "
                                "(e.g. SANDBOXCTL_BIN=build/cmd/sandboxctl)")
    return exe


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


class ServeProcess:
    """`sandboxctl serve --listen 127.0.0.1:0 ARGS...`; start() returns its URL."""

    def __init__(self, args: list[str] | None = None, exe: str | None = None,
                 listen: str = "127.0.0.1:0") -> None:
        self.exe = exe or binary()
        self.args = list(args or [])
        self.listen = listen
        self.token: str | None = None  # with listen "unix:PATH": serve's second line
        self.dir = tempfile.mkdtemp(prefix="sandboxctl-serve-")
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.service_id = ""

    def start(self, timeout: float = 120.0) -> str:
        """Starts serve and waits for its URL (it prints it once every engine
        answered and the pools are checked); raises RuntimeError with serve's
        own error line when it exits instead."""
        err_path = os.path.join(self.dir, "serve.log")
        with open(err_path, "w") as err:
            self.proc = subprocess.Popen(
                [self.exe, "serve", "--listen", self.listen, "--runs-dir", os.path.join(self.dir, "runs"),
                 *self.args],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, text=True,
                # its own session: the terminal's Ctrl-C goes to the eval, which then
                # removes its sandboxes before it stops the service
                start_new_session=True,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
        lines: list[str] = []

        out = self.proc.stdout
        assert out is not None

        def read() -> None:
            lines.append(out.readline())
            if lines[0].startswith("unix:"):  # then "token T"
                lines.append(out.readline())

        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(timeout)
        self.url = lines[0].strip() if lines else ""
        if self.url.startswith("unix:"):
            tok = lines[1].split() if len(lines) > 1 else []
            self.token = tok[1] if len(tok) == 2 and tok[0] == "token" else None
        if not self.url:
            self.stop(timeout=10)
            raise RuntimeError(f"sandboxctl serve did not start: {self.log().strip()[-2000:]}")
        first = self.log().split("\n", 1)[0].split()
        self.service_id = first[1] if len(first) > 2 and first[0] == "serve:" else ""
        return self.url

    def log(self) -> str:
        try:
            with open(os.path.join(self.dir, "serve.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def stop(self, timeout: float = 60.0) -> int | None:
        """SIGTERM (serve drains: every sandbox it made is removed), then SIGKILL
        past timeout; its exit status."""
        p, self.proc = self.proc, None
        if p is None:
            return None
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
        if p.stdout:
            p.stdout.close()
        shutil.rmtree(os.path.join(self.dir, "runs"), ignore_errors=True)
        return rc

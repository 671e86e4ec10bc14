#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An older image's server for test-lifecycle: the real sandbox-mcp behind a
proxy that answers 404 for /control/... as a server built before the control
API did. Takes sandbox-mcp's arguments; SANDBOX_MCP names the real binary."""
import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from unix_http import UnixHTTP as Upstream  # noqa: E402


def read_head(f):
    lines = []
    while True:
        line = f.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            return lines
        lines.append(line.decode("latin-1").rstrip("\r\n"))


def serve(conn, upstream_path):
    f = conn.makefile("rb")
    while True:
        head = read_head(f)
        if not head:
            break
        method, target, _ = head[0].split(" ", 2)
        headers = dict(h.split(": ", 1) for h in head[1:] if ": " in h)
        body = f.read(int(headers.get("Content-Length", "0")))
        if target.startswith("/control"):
            status, reason, ctype = 404, "Not Found", "application/json"
            data = b'{"success":false,"result":null,"error":"Not found"}'
        else:
            up = Upstream(upstream_path)
            up.request(method, target, body=body or None, headers=headers)
            r = up.getresponse()
            status, reason, ctype, data = r.status, r.reason, r.getheader("Content-Type", ""), r.read()
            up.close()
        conn.sendall(b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s" %
                     (status, reason.encode(), ctype.encode(), len(data), data))
    conn.close()


def main():
    args = sys.argv[1:]
    i = args.index("--unix")
    path = args[i + 1]
    args[i + 1] = path + ".real"
    real = subprocess.Popen([os.environ["SANDBOX_MCP"]] + args)
    signal.signal(signal.SIGTERM, lambda *_: (real.terminate(), os._exit(0)))
    while not os.path.exists(path + ".real"):
        if real.poll() is not None:
            sys.exit(real.returncode)
        time.sleep(0.01)
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(path)
    lsock.listen(16)
    threading.Thread(target=lambda: (real.wait(), os._exit(real.returncode)), daemon=True).start()
    while True:
        c, _ = lsock.accept()
        threading.Thread(target=serve, args=(c, path + ".real"), daemon=True).start()


if __name__ == "__main__":
    main()

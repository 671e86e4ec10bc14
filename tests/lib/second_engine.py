"""A second Docker engine for the multi-engine tests (sweep, serve).

start(tmp) starts a dockerd of its own in its own network namespace (a
dockerd started with --bridge none deletes the interface named docker0 at
start, which in the host's namespace is the first engine's bridge), with a
config file of its own, empty by default (the host's daemon.json sets data-root), its socket, data,
exec root and containerd namespaces under tmp. copy_image moves an image from
one engine to another through the API (GET /images/{ref}/get, POST
/images/load): the engines have no registry to pull from. stop ends it.
Raises Unavailable when this machine cannot run a second engine.
"""
import http.client
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.parse

from itest import stop_process
from unix_http import UnixHTTP


class Unavailable(Exception):
    pass


def default_host():
    return os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")


def engine(method, url, body=None, host=None, headers=None, timeout=120):
    """(status, parsed JSON or bytes) of one Engine API call on host (unix:// only)."""
    host = host or default_host()
    c = UnixHTTP(host[len("unix://"):], timeout=timeout)
    c.request(method, url, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, (json.loads(data) if data and data[:1] in (b"[", b"{") else data)


def start(tmp, config=None):
    """Starts the engine; returns (process, "unix://…" host) once it answers /_ping.

    config: the daemon's config file as a dict (default empty), e.g. the
    runtimes it registers (tests/lib/runsc_engine.py)."""
    dockerd, unshare = shutil.which("dockerd"), shutil.which("unshare")
    if not dockerd or os.geteuid() != 0:
        raise Unavailable("a second engine needs dockerd and root")
    if not unshare:
        raise Unavailable("a second engine needs unshare (util-linux) for its own network namespace")
    cfg = os.path.join(tmp, "daemon.json")
    with open(cfg, "w") as f:
        json.dump(config or {}, f)
    sock = os.path.join(tmp, "d2.sock")  # short: unix socket paths hold 108 bytes
    log = open(os.path.join(tmp, "dockerd.log"), "w")
    proc = subprocess.Popen([unshare, "--net", "--", dockerd, "--config-file", cfg,
                             "--host", "unix://" + sock,
                             "--data-root", os.path.join(tmp, "data"),
                             "--exec-root", os.path.join(tmp, "exec"),
                             "--pidfile", os.path.join(tmp, "d2.pid"),
                             "--bridge", "none", "--iptables=false", "--ip6tables=false",
                             "--containerd-namespace", "d2",
                             "--containerd-plugins-namespace", "d2p"],
                            stdout=log, stderr=subprocess.STDOUT)
    host = "unix://" + sock
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            raise Unavailable("the second dockerd exited (%d): see %s" % (proc.returncode, log.name))
        try:
            if engine("GET", "/_ping", host=host)[0] == 200:
                return proc, host
        except OSError:
            pass
        time.sleep(0.2)
    proc.terminate()
    raise Unavailable("the second dockerd did not answer within 60 s")


def copy_image(ref, src_host, dst_host):
    """Copies image ref from one engine to the other; returns its size in bytes."""
    src = UnixHTTP(src_host[len("unix://"):], timeout=600)
    src.request("GET", "/images/%s/get" % urllib.parse.quote(ref, safe=""))
    r = src.getresponse()
    if r.status != 200:
        raise AssertionError("export %s: HTTP %d" % (ref, r.status))
    data = r.read()
    src.close()
    st, body = engine("POST", "/images/load?quiet=1", body=data, host=dst_host,
                      headers={"Content-Type": "application/x-tar"}, timeout=600)
    if st != 200:
        raise AssertionError("load %s: %s %s" % (ref, st, body))
    return len(data)


def stop(proc, tmp=None):
    """Stops the engine (SIGTERM, then SIGKILL) and removes tmp."""
    stop_process(proc)
    if tmp:
        for d in ("exec", "data"):
            subprocess.run(["umount", "-R", os.path.join(tmp, d)], capture_output=True, check=False)
        shutil.rmtree(tmp, ignore_errors=True)

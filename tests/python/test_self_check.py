# SPDX-License-Identifier: MIT
"""Inspect AI's own conformance suite for sandbox providers
(inspect_ai/util/_sandbox/self_check.py, from the inspect-ai package) run
against the sandboxctl provider on the real engine: one serve for the module
(started by the provider's task_init, as in an eval), a fresh sandbox per
check (sample_init, from the warm pool), deleted by sample_cleanup.

Expected failures, each our hardening (README, "Inspect AI"):
  test_exec_as_user   it must run adduser as root; sandboxes have no root
                      (non-root user, capabilities dropped, read-only root),
                      so user="root" raises SandboxUserUnsupportedError
"""
import asyncio
import os
import time

import pytest
from inspect_ai.util._sandbox.self_check import *  # noqa: F401,F403
from sandboxctl.inspect_provider import SandboxctlConfig, SandboxctlSandboxEnvironment as Provider
from sandboxctl.inspect_provider import _Service

import engine_state

# this build's sandboxctl, for the service the provider starts
_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
os.environ["SANDBOXCTL_BIN"] = os.path.join(os.environ.get("SBX_BUILD_ROOT", os.path.join(_SRC, "build")),
                                            "cmd", "sandboxctl")

XFAIL = {
    "test_exec_as_user": "hardening: no root in a sandbox (adduser needs it); "
                         "user='root' raises SandboxUserUnsupportedError",
}


@pytest.fixture(scope="module")
def service():
    # $SBX_PY_TEST_IMAGE (else $SBX_TEST_SLIM_IMAGE): another image than the slim
    # one (e.g. a hash tag, while other builds move :latest)
    image = os.environ.get("SBX_PY_TEST_IMAGE") or os.environ.get("SBX_TEST_SLIM_IMAGE")
    cfg = SandboxctlConfig(pool=2, serve_args=["--test-label"], image=image)
    asyncio.run(Provider.task_init("self_check", cfg))
    pid = _Service.proc.pid if _Service.proc else None  # None: $SANDBOXCTL_SERVE_URL's
    yield cfg
    t0 = time.monotonic()
    asyncio.run(Provider.task_cleanup("self_check", cfg, True))
    assert _Service.proc is None, "task_cleanup did not stop the service"
    left = engine_state.owned_by([pid]) if pid else []
    engine_state.remove(left)
    assert not left, "containers left: %s" % [c["Labels"].get("sandboxctl.run-id") for c in left]
    print("task_cleanup %.1f s" % (time.monotonic() - t0))


@pytest.fixture
async def sandbox_env(request, service):
    reason = XFAIL.get(request.node.originalname)
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    envs = await Provider.sample_init("self_check", service, {})
    try:
        yield next(iter(envs.values()))
    finally:
        await Provider.sample_cleanup("self_check", service, envs, False)


# ---- ours, on the same fixture: what the self-check cannot see here ----

PROCS = "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done"


async def test_sandboxctl_timeout_kills_tree(sandbox_env):
    """The self-check's kill checks use `ps`, which the slim image lacks (they
    pass vacuously there): here /proc is read instead."""
    with pytest.raises(TimeoutError):
        await sandbox_env.exec(["sh", "-c", "sleep 301 & sleep 302 & sleep 303; :"], timeout=1)
    time.sleep(0.5)
    left = (await sandbox_env.exec(["sh", "-c", PROCS])).stdout
    assert "sleep 30" not in left, "processes outlived the timeout:\n" + left
    r = await sandbox_env.exec(["sh", "-c", "echo still here"], timeout=5)
    assert r.stdout == "still here\n"


async def test_sandboxctl_users(sandbox_env):
    """Root and strangers are refused with Inspect's error; the sandbox's own
    user works; nothing runs as uid 0."""
    from inspect_ai.util import SandboxUserUnsupportedError
    for u in ("root", "0", "nobody", "sandbox"):
        with pytest.raises(SandboxUserUnsupportedError):
            await sandbox_env.exec(["id"], user=u)
    me = sandbox_env.users[0]
    r = await sandbox_env.exec(["id", "-un"], user=me)
    assert r.stdout.strip() == me, r
    r = await sandbox_env.exec(["sh", "-c", "id -u; grep CapEff /proc/self/status"])
    uid, caps = r.stdout.split("\n")[:2]
    assert uid != "0" and caps.split()[1] == "0000000000000000", r.stdout


async def test_sandboxctl_exec_output_limit(sandbox_env):
    from inspect_ai.util import OutputLimitExceededError
    from inspect_ai.util._sandbox.limits import override_max_exec_output_size
    with override_max_exec_output_size(1024):
        with pytest.raises(OutputLimitExceededError):
            await sandbox_env.exec(["sh", "-c", "head -c 4096 /dev/zero | tr '\\0' a"])
    r = await sandbox_env.exec(["sh", "-c", "head -c 4096 /dev/zero | tr '\\0' a"])
    assert r.stdout == "a" * 4096


async def test_sandboxctl_binary_output(sandbox_env):
    """Output that is not UTF-8 comes back (base64 on the wire) with
    replacement characters, not an exception."""
    r = await sandbox_env.exec(["printf", "\\303\\050ok"])
    assert r.stdout == "\ufffd(ok", repr(r.stdout)


async def test_sandboxctl_gone_is_unavailable(service):
    """A deleted sandbox: exec raises SandboxUnavailableError (a tool error
    for the model, the sample goes on), files too."""
    from inspect_ai.util._sandbox.environment import SandboxUnavailableError
    envs = await Provider.sample_init("self_check", service, {})
    env = envs["default"]
    from sandboxctl import AsyncClient
    async with AsyncClient(env._url) as c:
        await c.delete(env.sandbox_id)
    with pytest.raises(SandboxUnavailableError):
        await env.exec(["true"])
    with pytest.raises(SandboxUnavailableError):
        await env.read_file("/etc/hostname")
    await Provider.sample_cleanup("self_check", service, envs, False)  # a 404: not an error


async def test_sandboxctl_connection(sandbox_env):
    """connection() names the container and a shell as the sandbox's user (uid 1001)."""
    import shlex
    import subprocess
    c = await sandbox_env.connection()
    argv = shlex.split(c.command)
    assert argv[:2] == ["docker", "exec"] and c.container in argv, c
    r = subprocess.run([a for a in argv if a != "-it"][:-1] + ["id", "-u"], capture_output=True, text=True)
    assert r.stdout.strip() == "1001", (r.stdout, r.stderr)

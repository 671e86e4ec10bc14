# SPDX-License-Identifier: MIT
"""The package's sync client (sandboxctl.Client) on a real serve: sandboxes
(create, exec, files, errors, delete, list) over TCP and over a unix socket
with the token given apart; a wrong token is refused. Episodes are covered
by examples/rl_client.py in serve-clients (tests/serve)."""
import os
import tempfile

import httpx
import pytest
from sandboxctl import (Client, SandboxNotFoundError, ServeError, ServeProcess, TooLargeError,
                        UserUnsupportedError)
from sandboxctl._wire import error_of, file_error

import engine_state

_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
EXE = os.path.join(os.environ.get("SBX_BUILD_ROOT", os.path.join(_SRC, "build")), "cmd", "sandboxctl")
IMAGE = os.environ.get("SBX_PY_TEST_IMAGE") or os.environ.get("SBX_TEST_SLIM_IMAGE")  # as in test_self_check.py


@pytest.fixture(scope="module")
def serve():
    pool = ["--pool", "0", "--pool-image", IMAGE + "=1"] if IMAGE else ["--pool", "1"]
    p = ServeProcess(pool + ["--test-label"], exe=EXE)
    p.start()
    yield p
    pid = p.pid
    assert p.stop() == 0, p.log()
    left = engine_state.owned_by([pid])
    engine_state.remove(left)
    assert not left, "containers left: %d" % len(left)


def test_sandbox_roundtrip(serve):
    with Client(serve.url) as c:
        sb = c.create(image=IMAGE, timeout=300)
        assert sb.id in [s["id"] for s in c.sandboxes()]
        r = c.exec(sb, ["sh", "-c", "cat; printf '\\377' >&2; exit 3"], input=b"\x00in\xff")
        assert (r.returncode, r.stdout, r.stderr, r.success) == (3, b"\x00in\xff", b"\xff", False), r
        r = c.exec(sb, ["pwd"], cwd="/tmp", env={"X": "1"})
        assert r.stdout == b"/tmp\n"
        r = c.exec(sb, ["sleep", "5"], timeout=0.5)
        assert r.timed_out and not r.success, r
        c.write_file(sb, "d/e/f.bin", b"\x01\x02")
        assert c.read_file(sb, sb.path("d/e/f.bin")) == b"\x01\x02"
        with pytest.raises(FileNotFoundError) as e:
            c.read_file(sb, "/nope")
        assert e.value.filename == "/nope"
        with pytest.raises(IsADirectoryError):
            c.read_file(sb, "/etc")
        with pytest.raises(PermissionError):
            c.write_file(sb, "/etc/passwd", "x")
        with pytest.raises(TooLargeError):
            c.read_file(sb, sb.path("d/e/f.bin"), limit=1)
        with pytest.raises(UserUnsupportedError):
            c.exec(sb, ["id"], user="root")
        c.delete(sb)  # answered at once; the id is gone from then on
        with pytest.raises(SandboxNotFoundError) as e:
            c.exec(sb, ["true"])
        assert (e.value.status, e.value.code) == (404, "sandbox_not_found")
        # a file of a sandbox that is not there: the sandbox is missing, not the file
        with pytest.raises(SandboxNotFoundError):
            c.read_file(sb, "/nope")
        with pytest.raises(SandboxNotFoundError):
            c.delete(sb)
        assert sb.id not in [s["id"] for s in c.sandboxes()]


@pytest.mark.parametrize("body, want", [
    ({"error": "file_not_found", "message": "x"}, FileNotFoundError),
    ({"error": "sandbox_not_found", "message": "no such sandbox"}, SandboxNotFoundError),
    # a serve before the distinct codes
    ({"error": "not_found", "message": "'/nope': No such file or directory"}, FileNotFoundError),
    ({"error": "not_found", "message": "no such sandbox"}, SandboxNotFoundError),
    ({"error": "is_a_directory", "message": "x"}, IsADirectoryError),
])
def test_not_found_codes(body, want):
    """serve's two 404s: a missing file is FileNotFoundError (Inspect's
    providers must raise it), a missing sandbox is not."""
    e = error_of(httpx.Response(404 if "found" in body["error"] else 409, json=body), "GET x")
    assert isinstance(file_error(e, "/nope"), want)


def test_wrong_token(serve):
    bad = serve.url.rsplit("/", 1)[0] + "/" + "0" * 32
    with Client(bad) as c, pytest.raises(ServeError) as e:
        c.create()
    assert e.value.status == 401


def test_unix_socket():
    d = tempfile.mkdtemp(prefix="sbx-py-unix-")
    sock = os.path.join(d, "serve.sock")
    p = ServeProcess(["--test-label"], exe=EXE, listen="unix:" + sock)
    try:
        url = p.start()
        assert url == "unix:" + sock and p.token, (url, p.token)
        assert oct(os.stat(sock).st_mode & 0o777) == "0o600"
        with Client(url, token=p.token) as c:
            assert c.health()["status"] in ("ok", "degraded")
        with pytest.raises(ValueError):
            Client(url)  # the token is needed
    finally:
        p.stop()


def test_provider_waits_for_room():
    """The provider's sample_init on a full service (429) waits for a sandbox
    to go instead of failing the sample; other errors are not retried."""
    import anyio
    from sandboxctl.inspect_provider import SandboxctlConfig, SandboxctlSandboxEnvironment as P
    p = ServeProcess(["--pool", "0", "--max-sandboxes", "1", "--test-label"], exe=EXE)
    p.start()
    try:
        cfg = SandboxctlConfig(serve_url=p.url, image=IMAGE)

        async def run():
            first = await P.sample_init("t", cfg, {})
            got = {}

            async def second():
                got["envs"] = await P.sample_init("t", cfg, {})

            async with anyio.create_task_group() as tg:
                tg.start_soon(second)
                await anyio.sleep(1.5)
                assert "envs" not in got, "created past --max-sandboxes 1"
                await P.sample_cleanup("t", cfg, first, False)
            r = await got["envs"]["default"].exec(["true"])
            assert r.success
            await P.sample_cleanup("t", cfg, got["envs"], False)
            with pytest.raises(ServeError) as e:  # a bad config is not waited on
                await P.sample_init("t", SandboxctlConfig(serve_url=p.url, workdir="relative"), {})
            assert e.value.status == 400

        anyio.run(run)
    finally:
        pid = p.pid
        assert p.stop() == 0
        left = engine_state.owned_by([pid])
        engine_state.remove(left)
        assert not left

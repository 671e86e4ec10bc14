# SPDX-License-Identifier: MIT
"""The Inspect AI sandbox provider `sandboxctl`: `inspect eval task.py
--sandbox sandboxctl[:config.yaml]`.

One `sandboxctl serve` per eval process (started at the first task_init on a
free loopback port, unless $SANDBOXCTL_SERVE_URL names one), one serve
sandbox per sample: sample_init creates it (from serve's warm pool when the
config's limits fit it), sample_cleanup deletes it, task_cleanup deletes what
is left and stops the service (which removes anything still running).
cli_cleanup (`inspect sandbox cleanup sandboxctl [ID]`) runs `sandboxctl gc`,
which removes the sandboxes of a service that is gone (a killed eval)."""
from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import shlex
import subprocess
import threading
from pathlib import Path
from typing import Any, Iterator, Literal, Union, overload

import anyio
import httpx
from inspect_ai.util import (ExecResult, OutputLimitExceededError, SandboxEnvironment,
                             SandboxEnvironmentConfigType, SandboxEnvironmentLimits,
                             SandboxUserUnsupportedError, sandboxenv)
from inspect_ai.util._sandbox.environment import SandboxConnection, SandboxUnavailableError
from pydantic import BaseModel, ConfigDict

from ._wire import Sandbox, SandboxNotFoundError, ServeError, TooLargeError, UserUnsupportedError
from .aio import AsyncClient
from .service import ServeProcess, binary


class SandboxctlConfig(BaseModel):
    """`--sandbox sandboxctl:FILE` (YAML or JSON with these keys) or
    `Task(sandbox=("sandboxctl", FILE))`, or this model itself in a
    SandboxEnvironmentSpec. Every field is optional."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    image: str | None = None
    """slim (serve's default), full, or an image reference."""
    memory: str | int | None = None
    """e.g. "2g"; the warm pool holds default limits only, so setting a
    limit makes each sample a cold start."""
    cpus: float | None = None
    pids: int | None = None
    timeout: int | None = None
    """the sandbox's lifetime in seconds (serve removes it then)."""
    workdir: str | None = None
    pool: int = 4
    """warm sandboxes the provider's own serve keeps ready."""
    reuse: int = 100
    """samples one warm sandbox serves in turn (serve's --reuse): after a
    sample's cleanup it is reset in place (every process killed, every
    writable place emptied, a fresh server; PID 1 verifies the clean slate,
    else the sandbox is removed) and goes back to the pool, so a sample_init
    rarely waits for a container to start. 1: a new container per sample
    (docs/serve.md, "Reuse", says what a reset does not restore)."""
    serve_url: str | None = None
    """use this serve instead of starting one ($SANDBOXCTL_SERVE_URL too)."""
    serve_args: list[str] = []
    """more arguments for the serve the provider starts, e.g. ["--engine", URL]."""

    def limits(self) -> dict[str, Any]:
        return {"image": self.image, "memory": self.memory, "cpus": self.cpus, "pids": self.pids,
                "timeout": self.timeout, "workdir": self.workdir}


def _config(config: SandboxEnvironmentConfigType | None) -> SandboxctlConfig:
    if config is None:
        return SandboxctlConfig()
    if isinstance(config, SandboxctlConfig):
        return config
    if isinstance(config, BaseModel):
        return SandboxctlConfig.model_validate(config.model_dump())
    return _config_file(os.path.abspath(config))


@functools.lru_cache(maxsize=32)
def _config_file(path: str) -> SandboxctlConfig:
    """A config file, read once per eval (every sample_init asks for it)."""
    text = Path(path).read_text()
    if path.endswith(".json"):  # else YAML
        data = json.loads(text)
    else:
        import yaml

        data = yaml.safe_load(text)
    return SandboxctlConfig.model_validate(data or {})


class _Service:
    """The eval's serve: started once, counted by task_init/task_cleanup."""

    lock = threading.Lock()
    proc: ServeProcess | None = None
    users = 0

    @classmethod
    def url(cls, cfg: SandboxctlConfig) -> str:
        ext = cfg.serve_url or os.environ.get("SANDBOXCTL_SERVE_URL")
        if ext:
            return ext
        with cls.lock:
            if cls.proc is None:
                pool = (["--pool", str(cfg.pool)] if cfg.image in (None, "slim")
                        else ["--pool", "0", "--pool-image", f"{cfg.image}={cfg.pool}"])
                reuse = ["--reuse", str(cfg.reuse)] if cfg.reuse > 1 else []
                p = ServeProcess(pool + reuse + list(cfg.serve_args))
                p.start()
                cls.proc = p
            return cls.proc.url

    @classmethod
    def stop(cls) -> None:
        with cls.lock:
            p, cls.proc = cls.proc, None
        if p is not None:
            p.stop()


async def _create(client: AsyncClient, cfg: SandboxctlConfig) -> Sandbox:
    """A sandbox; while serve is full (429: --max-sandboxes live, e.g. other
    evals on a shared service) or its transfer slots are (503 busy), it waits
    for one, up to 120 s."""
    delay, waited = 0.1, 0.0
    while True:
        try:
            return await client.create(**cfg.limits())
        except ServeError as ex:
            if not (ex.status == 429 or ex.code == "busy") or waited >= 120:
                raise
        await anyio.sleep(delay)
        waited += delay
        delay = min(delay * 2, 2.0)


def _unavailable(e: Exception) -> SandboxUnavailableError:
    return SandboxUnavailableError(f"sandboxctl serve cannot run the request: {e}")


def _sandbox_gone(e: BaseException) -> bool:
    """serve's answer for a sandbox it no longer has (deleted, expired, or a
    service restarted): 404 sandbox_not_found (a file that is not there is
    404 file_not_found: FileNotFoundError)."""
    return isinstance(e, SandboxNotFoundError)


@sandboxenv(name="sandboxctl")
class SandboxctlSandboxEnvironment(SandboxEnvironment):
    """One sandbox of `sandboxctl serve`: network none, capabilities dropped,
    read-only root, a non-root user; exec and files over serve's API."""

    # sandbox id -> (serve URL) of every sandbox this process made and has not
    # deleted, for task_cleanup after an interrupted sample
    _live: dict[str, str] = {}

    def __init__(self, client: AsyncClient, url: str, sandbox: Sandbox) -> None:
        super().__init__()
        self._client = client
        self._url = url
        self.sandbox = sandbox  # serve's answer: id, image, workdir, users, expires_at, warm
        self.sandbox_id = sandbox.id
        self.workdir = sandbox.workdir
        self.users = sandbox.users

    @classmethod
    def config_files(cls) -> list[str]:
        # found next to the task when --sandbox sandboxctl names no file
        return ["sandboxctl.yaml", "sandboxctl.yml", "sandboxctl.json"]

    @classmethod
    def default_concurrency(cls) -> int | None:
        # serve holds at most 64 sandboxes at once (more: 429); a sandbox
        # waiting on the model costs little, so no lower CPU-based cap
        return 64

    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return SandboxctlConfig(**config)

    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        cfg = _config(config)
        if not (cfg.serve_url or os.environ.get("SANDBOXCTL_SERVE_URL")):
            binary()  # fail here, once, with what to do
        # in this thread, not a worker: the service gets SIGTERM when the
        # thread that started it ends (PR_SET_PDEATHSIG)
        _Service.url(cfg)
        with _Service.lock:
            _Service.users += 1

    @classmethod
    async def sample_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                          metadata: dict[str, str]) -> dict[str, SandboxEnvironment]:
        cfg = _config(config)
        url = _Service.url(cfg)
        client = AsyncClient(url)
        try:
            sb = await _create(client, cfg)
        except BaseException:
            await client.aclose()
            raise
        cls._live[sb.id] = url
        return {"default": cls(client, url, sb)}

    @classmethod
    async def sample_cleanup(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                             environments: dict[str, SandboxEnvironment], interrupted: bool) -> None:
        with anyio.CancelScope(shield=True):
            for env in environments.values():
                e = env.as_type(SandboxctlSandboxEnvironment)
                await e._delete()

    async def _delete(self) -> None:
        try:
            await self._client.delete(self.sandbox_id)
        except ServeError as ex:
            if ex.status != 404:
                raise
        except httpx.TransportError:
            pass  # the service is gone, and its sandboxes with it (or gc has them)
        finally:
            SandboxctlSandboxEnvironment._live.pop(self.sandbox_id, None)
            await self._client.aclose()

    @classmethod
    async def task_cleanup(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                           cleanup: bool) -> None:
        with anyio.CancelScope(shield=True):
            if cleanup:
                for sid, url in list(cls._live.items()):
                    async with AsyncClient(url) as c:
                        try:
                            await c.delete(sid)
                        except (ServeError, httpx.TransportError):
                            pass
                    cls._live.pop(sid, None)
            with _Service.lock:
                _Service.users = max(0, _Service.users - 1)
                last = _Service.users == 0
            # without cleanup (--no-sandbox-cleanup) an own service keeps its
            # sandboxes until this process exits (it then gets SIGTERM)
            if last and cleanup:
                await anyio.to_thread.run_sync(_Service.stop)

    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        url = os.environ.get("SANDBOXCTL_SERVE_URL")
        if url:
            async with AsyncClient(url) as c:
                ids = [id] if id else [str(s["id"]) for s in await c.sandboxes()]
                for sid in ids:
                    try:
                        await c.delete(sid)
                        print(f"removed sandbox {sid}")
                    except ServeError as ex:
                        print(f"sandbox {sid}: {ex}")
            return
        # a service of a killed eval is gone: gc knows its sandboxes by their
        # owner label (the dead service's pid) and removes them
        args = [binary(), "gc"] + (["--run-id", id] if id else [])
        r = await anyio.to_thread.run_sync(lambda: subprocess.run(args, capture_output=True, text=True))
        print((r.stdout + r.stderr).strip() or "nothing to remove")
        if r.returncode != 0:
            raise RuntimeError(f"sandboxctl gc failed (exit {r.returncode}): {r.stderr.strip()}")

    def _path(self, p: str) -> str:
        return p if p.startswith("/") else str(Path(self.workdir) / p)

    async def exec(self, cmd: list[str], input: str | bytes | None = None, cwd: str | None = None,
                   env: dict[str, str] | None = None, user: str | None = None, timeout: int | None = None,
                   timeout_retry: bool = True, concurrency: bool = True) -> ExecResult[str]:
        try:
            r = await self._client.exec(self.sandbox_id, cmd, input=input, env=env,
                                        cwd=self._path(cwd) if cwd else self.workdir, user=user,
                                        timeout=timeout)
        except UserUnsupportedError as ex:
            raise SandboxUserUnsupportedError(
                f"user {user!r}: the sandbox runs as its own non-root users only ({', '.join(self.users)})"
            ) from ex
        except ServeError as ex:
            # exec has no 404 of its own (a missing program is exit 127): the sandbox is gone
            if ex.status in (404, 502, 503):
                raise _unavailable(ex) from ex
            raise
        except httpx.TransportError as ex:
            raise _unavailable(ex) from ex
        out = r.stdout.decode("utf-8", errors="replace")
        err = r.stderr.decode("utf-8", errors="replace")
        if r.timed_out:
            t = TimeoutError(f"Command timed out after {timeout} seconds")
            setattr(t, "truncated_output", out + err)
            raise t
        if r.returncode == 126 and not out and _exec_refused(err, cmd):
            raise PermissionError(errno.EACCES, f"Permission denied executing command: {err.strip()}", cmd[0])
        limit = SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE
        if r.truncated or len(r.stdout) > limit or len(r.stderr) > limit:
            raise OutputLimitExceededError(limit_str=SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE_STR,
                                           truncated_output=out[-limit:])
        # a death by signal N: 128 + N, as Inspect expects (serve answers so; a
        # sandbox image older than that answered -N)
        rc = 128 - r.returncode if r.returncode < 0 else r.returncode
        return ExecResult(success=rc == 0, returncode=rc, stdout=out, stderr=err)

    async def write_file(self, file: str, contents: str | bytes) -> None:
        with _file_errors(file):
            await self._client.write_file(self.sandbox_id, self._path(file), contents)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> Union[str, bytes]:
        with _file_errors(file):
            data = await self._client.read_file(self.sandbox_id, self._path(file),
                                                limit=SandboxEnvironmentLimits.MAX_READ_FILE_SIZE)
        return data.decode("utf-8") if text else data

    async def connection(self, *, user: str | None = None) -> SandboxConnection:
        """A shell in the sandbox for a person (Inspect's connection info), as
        its own user: `docker exec`, since serve offers no shell of its own."""
        container = str(self.sandbox.raw.get("container") or "")
        if not container:
            raise ConnectionError(f"sandbox {self.sandbox_id}: serve did not name its container")
        if user not in (None, *self.users):
            raise SandboxUserUnsupportedError(f"user {user!r}: the sandbox's users are {self.users}")
        return SandboxConnection(type="sandboxctl", container=container,
                                 command=shlex.join(["docker", "exec", "-it", "--user", "1001", "--workdir",
                                                     self.workdir, container, "bash"]))

    def default_polling_interval(self) -> float:
        return 0.2


@contextlib.contextmanager
def _file_errors(file: str) -> Iterator[None]:
    """A file request's errors as Inspect's, naming file as the caller gave it."""
    try:
        yield
    except TooLargeError:  # a read past the limit (serve's 100 MiB or Inspect's own)
        raise OutputLimitExceededError(limit_str=SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR,
                                       truncated_output=None) from None
    except OSError as ex:
        raise type(ex)(ex.errno, ex.strerror, file) from None
    except ServeError as ex:
        if _sandbox_gone(ex) or ex.status in (502, 503):
            raise _unavailable(ex) from ex
        raise
    except httpx.TransportError as ex:
        raise _unavailable(ex) from ex


def _exec_refused(stderr: str, cmd: list[str]) -> bool:
    """Whether a 126 is the sandbox refusing to run cmd[0] itself (not a script's
    own 126): the sandbox's launcher says so in one line,
    "sandbox-io: PROG: Permission denied"."""
    lines = stderr.strip().splitlines()
    return (len(lines) == 1 and lines[0].startswith(f"sandbox-io: {cmd[0]}: ")
            and lines[0].lower().endswith("permission denied"))

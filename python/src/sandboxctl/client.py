# SPDX-License-Identifier: MIT
"""A typed client of `sandboxctl serve` (docs/serve.md): episodes for RL loops
and bare sandboxes (exec, files). One keep-alive connection pool per client;
safe to share between threads (httpx.Client is)."""
from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator

import httpx

from ._wire import (FILE_CAP, Address, Episode, ExecResult, Sandbox, answer_object, error_of, exec_body, file_error,
                    length_over, too_large)

# exec and file calls can take as long as the command; the rest answers fast
_SLOW = httpx.Timeout(None, connect=10.0)
_FAST = httpx.Timeout(120.0, connect=10.0)


class Client:
    """`Client(url)` with the URL serve printed (`http://127.0.0.1:PORT/<token>`,
    or `unix:PATH` and `token=`); `Client.from_env()` reads $SANDBOXCTL_SERVE_URL."""

    def __init__(self, url: str, token: str | None = None) -> None:
        self.address = Address.parse(url, token)
        self._http = httpx.Client(base_url=self.address.base, headers=self.address.headers(),
                                  transport=httpx.HTTPTransport(**self.address.transport_kw()),
                                  timeout=_FAST)

    @classmethod
    def from_env(cls) -> "Client":
        url = os.environ.get("SANDBOXCTL_SERVE_URL")
        if not url:
            raise ValueError("SANDBOXCTL_SERVE_URL is not set")
        return cls(url)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _json(self, method: str, path: str, body: Any = None, timeout: httpx.Timeout = _FAST) -> dict[str, Any]:
        r = self._http.request(method, path, json=body, timeout=timeout)
        if r.status_code >= 300:
            raise error_of(r, f"{method} {path}")
        return answer_object(r)

    # ---- service ----
    def health(self) -> dict[str, Any]:
        return self._json("GET", "/v1/health")

    def metrics(self) -> str:
        r = self._http.get("/metrics")
        if r.status_code != 200:
            raise error_of(r, "GET /metrics")
        return r.text

    # ---- episodes ----
    def claim(self, task: str, seed: int | None = None, timeout: int | None = None,
              tags: dict[str, Any] | None = None) -> Episode:
        """Claims an episode of task: its prompt and its agent's MCP URL."""
        body: dict[str, Any] = {"task": task}
        for k, v in (("seed", seed), ("timeout", timeout), ("tags", tags)):
            if v is not None:
                body[k] = v
        return Episode.from_json(self._json("POST", "/v1/episodes", body, timeout=_SLOW))

    def finish(self, episode: Episode | str) -> dict[str, Any]:
        """Collects, grades and removes: the result (`reward`, `status`, `grade`, ...)."""
        eid = episode if isinstance(episode, str) else episode.id
        res = self._json("POST", f"/v1/episodes/{eid}/finish", timeout=_SLOW)
        if isinstance(episode, Episode):
            episode.result = res
        return res

    def abort(self, episode: Episode | str) -> dict[str, Any]:
        eid = episode if isinstance(episode, str) else episode.id
        return self._json("DELETE", f"/v1/episodes/{eid}", timeout=_SLOW)

    def episode_info(self, eid: str) -> dict[str, Any]:
        return self._json("GET", f"/v1/episodes/{eid}")

    def episodes(self) -> list[dict[str, Any]]:
        return list(self._json("GET", "/v1/episodes").get("episodes") or [])

    @contextlib.contextmanager
    def episode(self, task: str, **kw: Any) -> Iterator[Episode]:
        """Claims, yields the episode, finishes it (graded) on a clean exit or
        aborts it on an exception; `episode.result` holds the answer."""
        ep = self.claim(task, **kw)
        try:
            yield ep
        except BaseException:
            with contextlib.suppress(Exception):
                ep.result = self.abort(ep)
            raise
        self.finish(ep)

    def rest(self, episode: Episode, method: str, path: str, body: Any = None) -> Any:
        """A call on the episode's own REST API (its relay: `rest_url` + path),
        e.g. rest(ep, "POST", "/task/complete", {})."""
        r = httpx.request(method, episode.rest_url.rstrip("/") + path, json=body, timeout=_SLOW)
        if r.status_code >= 300:
            raise error_of(r, f"{method} {path}")
        return answer_object(r)

    # ---- sandboxes ----
    def create(self, image: str | None = None, memory: str | int | None = None, cpus: float | None = None,
               pids: int | None = None, timeout: int | None = None, workdir: str | None = None) -> Sandbox:
        """A sandbox of image (serve's default: the slim one), hardened as every
        sandbox is; from the warm pool when it fits."""
        body = {k: v for k, v in (("image", image), ("memory", memory), ("cpus", cpus), ("pids", pids),
                                  ("timeout", timeout), ("workdir", workdir)) if v is not None}
        return Sandbox.from_json(self._json("POST", "/v1/sandboxes", body, timeout=_SLOW))

    def delete(self, sandbox: Sandbox | str) -> None:
        """Deletes: serve removes the sandbox and answers (200), or, under
        `--reuse`, answers at once (202) and resets it back into its pool in
        the background; the id is unknown from then on (SandboxNotFoundError)."""
        sid = sandbox if isinstance(sandbox, str) else sandbox.id
        self._json("DELETE", f"/v1/sandboxes/{sid}", timeout=_SLOW)

    def sandboxes(self) -> list[dict[str, Any]]:
        return list(self._json("GET", "/v1/sandboxes").get("sandboxes") or [])

    def exec(self, sandbox: Sandbox | str, cmd: list[str], input: str | bytes | None = None,
             env: dict[str, str] | None = None, cwd: str | None = None, user: str | None = None,
             timeout: float | None = None) -> ExecResult:
        """Runs cmd; at the timeout the whole process tree is killed (timed_out)."""
        sid = sandbox if isinstance(sandbox, str) else sandbox.id
        body = exec_body(cmd, input, env, cwd, user, timeout)
        return ExecResult.from_json(self._json("POST", f"/v1/sandboxes/{sid}/exec", body, timeout=_SLOW))

    def read_file(self, sandbox: Sandbox | str, path: str, limit: int = FILE_CAP) -> bytes:
        """The file's bytes; FileNotFoundError, IsADirectoryError,
        PermissionError; a TooLargeError past limit (read no further)."""
        sid = sandbox if isinstance(sandbox, str) else sandbox.id
        with self._http.stream("GET", f"/v1/sandboxes/{sid}/files", params={"path": path},
                               timeout=_SLOW) as r:
            if r.status_code >= 300:
                r.read()
                raise file_error(error_of(r, f"read {path}"), path)
            return _read_capped(r.iter_bytes(), r.headers.get("content-length"), limit, path)

    def write_file(self, sandbox: Sandbox | str, path: str, data: bytes | str) -> None:
        """Writes (creates parents, overwrites) the file."""
        sid = sandbox if isinstance(sandbox, str) else sandbox.id
        content = data.encode("utf-8") if isinstance(data, str) else data
        r = self._http.put(f"/v1/sandboxes/{sid}/files", params={"path": path}, content=content,
                           timeout=_SLOW)
        if r.status_code >= 300:
            raise file_error(error_of(r, f"write {path}"), path)



def _read_capped(chunks: Iterator[bytes], length: str | None, limit: int, path: str) -> bytes:
    if length_over(length, limit):
        raise too_large(path, limit)
    buf = bytearray()
    for c in chunks:
        buf += c
        if len(buf) > limit:
            raise too_large(path, limit)
    return bytes(buf)

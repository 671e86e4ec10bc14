# SPDX-License-Identifier: MIT
"""The async twin of client.Client (asyncio or trio, through httpx/anyio), for
code that runs many sandboxes in one event loop, as the Inspect provider does.
Requests and answers are built and parsed by _wire, as the sync client's are."""
from __future__ import annotations

from typing import Any

import httpx

from ._wire import (FILE_CAP, Address, Episode, ExecResult, Sandbox, answer_object, error_of, exec_body, file_error,
                    length_over, too_large)

_SLOW = httpx.Timeout(None, connect=10.0)
_FAST = httpx.Timeout(120.0, connect=10.0)


class AsyncClient:
    """Bound to the event loop it is first used in (httpx's pool is); close it there."""

    def __init__(self, url: str, token: str | None = None) -> None:
        self.address = Address.parse(url, token)
        self._http = httpx.AsyncClient(base_url=self.address.base, headers=self.address.headers(),
                                       transport=httpx.AsyncHTTPTransport(**self.address.transport_kw()),
                                       timeout=_FAST)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _json(self, method: str, path: str, body: Any = None, timeout: httpx.Timeout = _FAST) -> dict[str, Any]:
        r = await self._http.request(method, path, json=body, timeout=timeout)
        if r.status_code >= 300:
            raise error_of(r, f"{method} {path}")
        return answer_object(r)

    async def health(self) -> dict[str, Any]:
        return await self._json("GET", "/v1/health")

    async def claim(self, task: str, **kw: Any) -> Episode:
        body = {"task": task, **{k: v for k, v in kw.items() if v is not None}}
        return Episode.from_json(await self._json("POST", "/v1/episodes", body, timeout=_SLOW))

    async def finish(self, episode: Episode) -> dict[str, Any]:
        episode.result = await self._json("POST", f"/v1/episodes/{episode.id}/finish", timeout=_SLOW)
        return episode.result

    async def create(self, **limits: Any) -> Sandbox:
        """POST /v1/sandboxes with image, memory, cpus, pids, timeout, workdir (None: serve's default)."""
        body = {k: v for k, v in limits.items() if v is not None}
        return Sandbox.from_json(await self._json("POST", "/v1/sandboxes", body, timeout=_SLOW))

    async def delete(self, sandbox_id: str) -> None:
        """As Client.delete: answered at once, the reset or removal runs in serve."""
        await self._json("DELETE", f"/v1/sandboxes/{sandbox_id}", timeout=_SLOW)

    async def sandboxes(self) -> list[dict[str, Any]]:
        return list((await self._json("GET", "/v1/sandboxes")).get("sandboxes") or [])

    async def exec(self, sandbox_id: str, cmd: list[str], input: str | bytes | None = None,
                   env: dict[str, str] | None = None, cwd: str | None = None, user: str | None = None,
                   timeout: float | None = None) -> ExecResult:
        body = exec_body(cmd, input, env, cwd, user, timeout)
        d = await self._json("POST", f"/v1/sandboxes/{sandbox_id}/exec", body, timeout=_SLOW)
        return ExecResult.from_json(d)

    async def read_file(self, sandbox_id: str, path: str, limit: int = FILE_CAP) -> bytes:
        async with self._http.stream("GET", f"/v1/sandboxes/{sandbox_id}/files", params={"path": path},
                                     timeout=_SLOW) as r:
            if r.status_code >= 300:
                await r.aread()
                raise file_error(error_of(r, f"read {path}"), path)
            if length_over(r.headers.get("content-length"), limit):
                raise too_large(path, limit)
            buf = bytearray()
            async for c in r.aiter_bytes():
                buf += c
                if len(buf) > limit:
                    raise too_large(path, limit)
            return bytes(buf)

    async def write_file(self, sandbox_id: str, path: str, data: bytes | str) -> None:
        content = data.encode("utf-8") if isinstance(data, str) else data
        r = await self._http.put(f"/v1/sandboxes/{sandbox_id}/files", params={"path": path},
                                 content=content, timeout=_SLOW)
        if r.status_code >= 300:
            raise file_error(error_of(r, f"write {path}"), path)


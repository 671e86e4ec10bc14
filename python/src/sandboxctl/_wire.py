# SPDX-License-Identifier: MIT
"""What the sync and async clients share: the service's address, the typed
answers, and the mapping of serve's error answers to exceptions. Neither
transport lives here, so the two clients cannot drift apart."""
from __future__ import annotations

import base64
import errno
import json
import os
import posixpath
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

import httpx

#: serve's cap on one file read or written through /v1/sandboxes/{id}/files.
FILE_CAP = 100 * 1024 * 1024


class ServeError(RuntimeError):
    """serve answered an error: HTTP status, its `error` code, the whole body."""

    def __init__(self, status: int, code: str, message: str, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.body = body


class UserUnsupportedError(ServeError):
    """exec's `user` is not one of the sandbox's users (400 user_unsupported)."""


class SandboxNotFoundError(ServeError):
    """The sandbox is not there (404 sandbox_not_found): deleted, expired, or
    of a service that restarted; distinct from a file that is not there
    (FileNotFoundError, 404 file_not_found)."""


class TooLargeError(ServeError):
    """A file past serve's cap (413 too_large)."""


@dataclass(frozen=True)
class Address:
    """Where serve listens and its token: `http://127.0.0.1:PORT/<token>`, or
    `unix:PATH` with the token given apart (serve prints it on a second line)."""

    base: str
    token: str | None
    uds: str | None = None

    @classmethod
    def parse(cls, url: str, token: str | None = None) -> "Address":
        if url.startswith("unix:"):
            tok = token or os.environ.get("SANDBOXCTL_SERVE_TOKEN")
            if not tok:
                raise ValueError("a unix:PATH address needs its token (token= or $SANDBOXCTL_SERVE_TOKEN)")
            return cls("http://localhost", tok, uds=url[len("unix:"):])
        u = urllib.parse.urlsplit(url)
        if u.scheme != "http" or not u.hostname:
            raise ValueError(f"not a serve URL (http://HOST:PORT/TOKEN or unix:PATH): {url!r}")
        # the token is in the path already: every request goes under it
        return cls(url.rstrip("/"), token)

    def headers(self) -> dict[str, str]:
        return {"Authorization": "Bearer " + self.token} if self.token else {}

    def transport_kw(self) -> dict[str, Any]:
        # serve speaks plain HTTP on loopback or a unix socket: no TLS, so no
        # CA bundle either (loading it costs ~35 ms per client)
        return {"uds": self.uds, "verify": False} if self.uds else {"verify": False}


@dataclass
class Sandbox:
    """A sandbox of /v1/sandboxes, as POST answered it."""

    id: str
    image: str
    workdir: str
    user: str
    users: list[str]
    expires_at: Any
    raw: dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Sandbox":
        return cls(id=str(d["id"]), image=str(d.get("image", "")), workdir=str(d.get("workdir") or "/"),
                   user=str(d.get("user", "")), users=list(d.get("users") or []),
                   expires_at=d.get("expires_at"), raw=d)

    def path(self, p: str) -> str:
        """p made absolute: a relative path is under the sandbox's workdir."""
        return p if p.startswith("/") else posixpath.join(self.workdir, p)


@dataclass
class ExecResult:
    """One exec's answer; stdout and stderr as bytes (serve sends text or base64)."""

    returncode: int
    stdout: bytes
    stderr: bytes
    truncated: bool
    timed_out: bool

    @property
    def success(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "ExecResult":
        def stream(name: str) -> bytes:
            if d.get(name + "_b64") is not None:
                return base64.b64decode(d[name + "_b64"])
            return str(d.get(name) or "").encode("utf-8", "surrogateescape")

        return cls(returncode=int(d.get("returncode", -1)), stdout=stream("stdout"), stderr=stream("stderr"),
                   truncated=bool(d.get("truncated")), timed_out=bool(d.get("timed_out")))


@dataclass
class Episode:
    """A claimed episode (POST /v1/episodes); `result` once finished."""

    id: str
    task: str
    prompt: str
    mcp_url: str
    rest_url: str
    deadline: Any
    warm: bool
    claim_ms: Any
    raw: dict[str, Any] = field(repr=False, default_factory=dict)
    result: dict[str, Any] | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Episode":
        return cls(id=str(d["id"]), task=str(d.get("task", "")), prompt=str(d.get("prompt", "")),
                   mcp_url=str(d.get("mcp_url", "")), rest_url=str(d.get("rest_url", "")),
                   deadline=d.get("deadline"), warm=bool(d.get("warm")), claim_ms=d.get("claim_ms"), raw=d)

    @property
    def reward(self) -> float | None:
        return None if self.result is None else self.result.get("reward")


def exec_body(cmd: list[str], input: str | bytes | None, env: dict[str, str] | None, cwd: str | None,
              user: str | None, timeout: float | None) -> dict[str, Any]:
    if not cmd:
        raise ValueError("exec: cmd is empty")
    body: dict[str, Any] = {"cmd": list(cmd)}
    if isinstance(input, bytes):
        body["stdin_b64"] = base64.b64encode(input).decode("ascii")
    elif input is not None:
        body["stdin"] = input
    for k, v in (("env", env), ("cwd", cwd), ("user", user), ("timeout", timeout)):
        if v is not None:
            body[k] = v
    return body


def error_of(r: httpx.Response, what: str) -> ServeError:
    """The exception for an error answer (its body already read)."""
    try:
        body = r.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = r.text[:500]
    code = body.get("error", "") if isinstance(body, dict) else ""
    detail = body.get("message") or body.get("detail") if isinstance(body, dict) else None
    msg = f"{what}: HTTP {r.status_code} {code or body}" + (f" ({detail})" if detail else "")
    # serve before its distinct 404 codes said "not_found" with this message for a sandbox
    if code == "not_found" and isinstance(body, dict) and body.get("message") == "no such sandbox":
        code = "sandbox_not_found"
    cls = {"user_unsupported": UserUnsupportedError, "too_large": TooLargeError,
           "sandbox_not_found": SandboxNotFoundError}.get(code, ServeError)
    return cls(r.status_code, code, msg, body)


def file_error(e: ServeError, path: str) -> Exception:
    """A file request's error as Python's own exception for it, naming path
    (a sandbox that is not there stays a SandboxNotFoundError)."""
    if isinstance(e, SandboxNotFoundError):
        return e
    # file_not_found; not_found from a serve older than the distinct codes
    if e.code in ("file_not_found", "not_found") or (e.status == 404 and not e.code):
        return FileNotFoundError(errno.ENOENT, "No such file or directory", path)
    if e.code == "is_a_directory":
        return IsADirectoryError(errno.EISDIR, "Is a directory", path)
    if e.code == "permission_denied":
        return PermissionError(errno.EACCES, "Permission denied", path)
    return e


def length_over(length: str | None, limit: int) -> bool:
    """Whether a Content-Length already says the body is past limit."""
    return length is not None and length.isdigit() and int(length) > limit


def too_large(path: str, limit: int) -> TooLargeError:
    return TooLargeError(413, "too_large", f"read {path}: larger than the limit of {limit} bytes")


def answer_object(r: httpx.Response) -> dict[str, Any]:
    """A success answer's JSON object ({} for an empty body, e.g. a 204)."""
    if not r.content:
        return {}
    d = r.json()
    if not isinstance(d, dict):
        raise ServeError(r.status_code, "", f"expected a JSON object, got {type(d).__name__}", d)
    return d

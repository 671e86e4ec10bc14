# SPDX-License-Identifier: MIT
"""Python client of `sandboxctl serve` (episodes and sandboxes) and, with
inspect-ai installed, the Inspect AI sandbox provider `sandboxctl`."""
from ._wire import (Episode, ExecResult, Sandbox, SandboxNotFoundError, ServeError,
                    TooLargeError, UserUnsupportedError)
from .aio import AsyncClient
from .client import Client
from .service import ServeProcess

__all__ = ["AsyncClient", "Client", "Episode", "ExecResult", "Sandbox", "SandboxNotFoundError", "ServeError",
           "ServeProcess", "TooLargeError", "UserUnsupportedError"]

# SPDX-License-Identifier: MIT
"""Inspect AI's entry point (group `inspect_ai`): importing the provider
registers `sandboxctl` for `--sandbox sandboxctl`."""
from .inspect_provider import SandboxctlConfig, SandboxctlSandboxEnvironment

__all__ = ["SandboxctlConfig", "SandboxctlSandboxEnvironment"]

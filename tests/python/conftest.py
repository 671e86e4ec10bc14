# SPDX-License-Identifier: MIT
"""Without the packages these tests drive (inspect-ai from PyPI, this tree's
python/ installed), the run is meson's skip (77) saying what to install,
unless under scripts/test.sh (SBX_CI), which installed them: then it fails."""
import os

import pytest

try:
    import inspect_ai  # noqa: F401
    import pytest_asyncio  # noqa: F401
    import sandboxctl  # noqa: F401
    _missing = None
except ImportError as e:
    if os.environ.get("SBX_CI"):
        raise
    _missing = e


def pytest_configure(config):
    if _missing is not None:
        pytest.exit("skip: %s (scripts/deps.sh installs inspect-ai, pytest-asyncio and ./python)" % _missing,
                    returncode=77)

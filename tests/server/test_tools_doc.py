#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/tools.md's tables are what this build's sandbox-mcp lists (tools/list, both
toolsets): a schema changed without `scripts/tools_doc.py` fails here."""
import os
import subprocess
import sys

SRC = os.environ.get("SBX_SOURCE_ROOT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.exit(subprocess.run([sys.executable, os.path.join(SRC, "scripts", "tools_doc.py"), "--check"]).returncode)

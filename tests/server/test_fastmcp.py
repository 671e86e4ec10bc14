# SPDX-License-Identifier: MIT
"""The fastmcp client's CLI against sandbox-mcp over Streamable HTTP:
`fastmcp list URL` shows our tools, `fastmcp call URL tool k=v` runs one."""

import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import mcp_harness as h  # noqa: E402


def run(*args):
    exe = shutil.which("fastmcp")
    if not exe:
        print("fastmcp not installed: skipped")
        sys.exit(77)
    p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError(f"fastmcp {' '.join(args)} -> {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p.stdout


def main():
    with h.workspace() as ws, h.http_server(ws) as (base, _):
        url = base + "/mcp"
        out = run("list", url)
        for name in ("read_cell", "write_cell", "list_sheets", "execute_python"):
            assert name in out, f"fastmcp list lacks {name}:\n{out}"
        out = run("call", url, "read_cell", "file_path=cash_flows.ods", "sheet_name=Sheet1",
                  "cell_reference=A1")
        assert "Period" in out, f"fastmcp call read_cell:\n{out}"
        out = run("call", url, "list_sheets", "file_path=cash_flows.ods")
        assert "Sheet1" in out, f"fastmcp call list_sheets:\n{out}"
        print("fastmcp list/call: ok")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The tools and their arguments, as the server lists them, into docs/tools.md.

Runs this build's sandbox-mcp over stdio on an empty workspace, asks tools/list
for the default toolset and for a GUI task's (SANDBOX_TOOLSET=gui), and writes one
table per toolset between the markers of docs/tools.md. The tables are generated:
edit the server's schemas, then run this.

  scripts/tools_doc.py [--build DIR]          rewrite docs/tools.md
  scripts/tools_doc.py [--build DIR] --check  exit 1 when docs/tools.md differs
                                              (tests/server/test_tools_doc.py)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DOC = os.path.join(SRC, "docs", "tools.md")
BEGIN, END = "<!-- tools: begin (scripts/tools_doc.py) -->", "<!-- tools: end -->"
TOOLSETS = [("Default (every task but `tools: gui`)", {}, []),
            ("GUI tasks (`tools: gui`: the desktop)", {"SANDBOX_TOOLSET": "gui"},
             ["--display", ":99"])]


def tools_list(server, env_extra, args):
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "tools_doc", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    with tempfile.TemporaryDirectory() as ws:
        env = dict(os.environ, **env_extra)
        p = subprocess.run([server, "--workspace", ws, "--stdio"] + args, env=env, text=True,
                           input="".join(json.dumps(m) + "\n" for m in msgs),
                           capture_output=True, timeout=30)
    for line in p.stdout.splitlines():
        m = json.loads(line)
        if m.get("id") == 2:
            return m["result"]["tools"]
    sys.exit("tools_doc: no tools/list answer from %s: %s" % (server, p.stderr[-500:]))


def cell(text):
    return " ".join(str(text).split()).replace("|", "\\|")


def argument(name, schema, required):
    kind = schema.get("type", "any")
    if kind == "array" and isinstance(schema.get("items"), dict):
        kind = "array of %s" % schema["items"].get("type", "any")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    out = "`%s`%s (%s" % (name, "*" if name in required else "", kind)
    if "enum" in schema:
        out += ": " + ", ".join("`%s`" % v for v in schema["enum"])
    out += ")"
    if schema.get("description"):
        out += ": " + schema["description"]
    return out


def table(tools):
    rows = ["| tool | arguments (* required) | what it does |", "|---|---|---|"]
    for t in tools:
        s = t.get("inputSchema", {})
        req = s.get("required", [])
        args = [argument(n, p, req) for n, p in s.get("properties", {}).items()]
        rows.append("| `%s` | %s | %s |" % (t["name"], cell("; ".join(args) or "none"),
                                           cell(t.get("description", ""))))
    return "\n".join(rows)


def generate(server):
    parts = [BEGIN]
    for title, env, args in TOOLSETS:
        parts += ["", "### " + title, "", table(tools_list(server, env, args))]
    return "\n".join(parts + ["", END])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("SBX_BUILD_ROOT", os.path.join(SRC, "build")))
    ap.add_argument("--check", action="store_true")
    o = ap.parse_args()
    text = open(DOC).read()
    if BEGIN not in text or END not in text:
        sys.exit("tools_doc: %s has no %s ... %s markers" % (DOC, BEGIN, END))
    head, rest = text.split(BEGIN, 1)
    new = head + generate(os.path.join(o.build, "server", "sandbox-mcp")) + rest.split(END, 1)[1]
    if o.check:
        if new != text:
            print("docs/tools.md is not what the server lists: run scripts/tools_doc.py")
            return 1
        print("docs/tools.md matches the server's tool schemas")
        return 0
    with open(DOC, "w") as f:
        f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())

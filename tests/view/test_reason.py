#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every non-pass says why in one line, first: result.json's "reason", the end of
`sandboxctl run`'s verdict line, and the run page's first text after its title,
rendered in headless chromium (as test_view_integration.py does).

Two real runs on the machine's engine: an agent that crashes ("echo boom; exit 1"),
and one that changes a given cell of sales_revenue (its gate 'inputs unchanged'),
writing markup there, so the page must show it escaped.

The image: $SBX_RUN_TEST_IMAGE if it names one, else $SBX_TEST_SLIM_IMAGE (default sandboxctl/sandbox-slim:latest).
"""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_view_integration as tvi  # noqa: E402

GATE_AGENT = ('curl -sS -X POST -H "Content-Type: application/json" "$SANDBOX_REST_URL/tools/call" '
              '-d \'{"tool_name":"write_range","arguments":{"file_path":"sales_data.ods",'
              '"sheet_name":"Sheet1","start_cell":"A2","values":[["<b>changed</b>"]]}}\' '
              '>/dev/null && curl -sS -X POST -d "{}" "$SANDBOX_REST_URL/task/complete" >/dev/null')
CASES = [
    # run id, task, agent, exit code, the reason
    ("crash", "banking_reserve", "echo boom; exit 1", 5, "agent exited 1: boom"),
    ("gate", "sales_revenue", GATE_AGENT, 1,
     "gate 'inputs unchanged' failed: Sheet1!A2 changed (expected \"Notebook 001\", "
     "got \"<b>changed</b>\")"),
]


def first_text_after_title(dom):
    """The first non-blank text after the page's </h1>, tags stripped, unescaped."""
    after = dom.split("</h1>", 1)[1] if "</h1>" in dom else ""
    for chunk in re.split(r"<[^>]*>", after):
        text = html.unescape(chunk).strip()
        if text:
            return text
    return None


def main():
    tmp = tempfile.mkdtemp(prefix="test-reason-")
    tvi.CHROME_PROFILE = os.path.join(tmp, "chrome")
    runs = os.path.join(tmp, "runs")
    view = None
    try:
        for rid, task, agent, code, want in CASES:
            p = subprocess.run([tvi.SANDBOXCTL, "run", "--tasks-dir", tvi.TASKS, "--task", task,
                                "--agent", agent, "--image", tvi.IMAGE, "--runs-dir", runs,
                                "--run-id", rid, "--test-label", "--quiet"],
                               capture_output=True, text=True, timeout=300)
            if p.returncode == 3:
                print(f"SKIP: no engine or image: {p.stderr.strip()[-300:]}")
                return tvi.SKIP
            tvi.check(p.returncode == code, f"{rid}: exit {p.returncode}, want {code}: {p.stderr}")
            res = json.load(open(os.path.join(runs, rid, "result.json")))
            tvi.check(res["reason"] == want, f"{rid}: result.json reason {res['reason']!r}")
            last = p.stdout.strip().splitlines()[-1]
            tvi.check(last.endswith(": " + want), f"{rid}: the verdict line {last!r}")
            print(f"{rid}: {last}")
        # A pass has no reason.
        p = subprocess.run([tvi.SANDBOXCTL, "run", "--tasks-dir", tvi.TASKS, "--task",
                            "banking_reserve", "--agent", "oracle", "--image", tvi.IMAGE,
                            "--runs-dir", runs, "--run-id", "pass", "--test-label", "--quiet"],
                           capture_output=True, text=True, timeout=300)
        res = json.load(open(os.path.join(runs, "pass", "result.json")))
        tvi.check(p.returncode == 0 and res["reason"] is None, f"pass: {p.returncode} {res['reason']}")

        view = subprocess.Popen([tvi.SANDBOXCTL, "view", runs, "--port", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        url = view.stdout.readline().strip()
        tvi.check(url.startswith("http://127.0.0.1:"), f"printed URL: {url!r}")
        prefix = urllib.parse.urlsplit(url).path
        for rid, _, _, _, want in CASES:
            st, _, page = tvi.get(url, prefix + "r/0/" + rid)
            tvi.check(st == 200, f"{rid}: run page {st}")
            tvi.check(first_text_after_title(page) == want,
                      f"{rid}: first text after the title in the HTML: "
                      f"{first_text_after_title(page)!r}")
            tvi.check("<b>changed</b>" not in page, f"{rid}: the agent's markup unescaped")
        if not tvi.CHROMIUM:
            tvi.check(not os.environ.get("SBX_CI"), "chromium not installed (scripts/deps.sh)")
            print("SKIP: chromium not installed: the browser checks did not run")
            return 0
        for rid, _, _, _, want in CASES:
            dom = tvi.chromium("--virtual-time-budget=3000", "--dump-dom", url + "r/0/" + rid)
            got = first_text_after_title(dom)
            tvi.check(got == want, f"{rid}: chromium's first text after the title: {got!r}")
            tvi.check("<b>changed</b>" not in dom, f"{rid}: markup from the agent rendered")
        print("chromium: the reason is the first text after the title on both pages")
        return 0
    finally:
        if view:
            view.terminate()
            view.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

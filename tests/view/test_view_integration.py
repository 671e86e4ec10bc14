#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`sandboxctl view` and `report` against a real run and a real sweep.

Makes a PARTIAL run whose agent writes markup into a cell
(tests/view/hostile_agent.sh), a GUI run recorded with `run --record 1` and
a 2-episode sweep on the machine's Docker engine, serves them with `sandboxctl view` on a free port, then:

  - the token: a request without it, or with a wrong one, is 401
  - attacks: `../`, %2e%2e, a symlink out (file and directory), a POST, the
    run's connection.json: all refused
  - the GUI run: PNG frames in frames/, counted in result.json, drawn as a
    filmstrip captioned with the tool call made between two frames
  - the run page: the red cell Sheet1!D2 with expected/got, the hostile
    <script> shown escaped, the tool error highlighted; the sweep page: its
    pass rate; raw files with a safe content type
  - live: a run directory still being written: the event stream reports the
    transcript's growth, then the end when result.json appears; a live GUI run:
    a new frame in frames/ is a change, then a new figure on the page
  - report: one file, no http(s) resource referenced, a CSP forbidding network
  - with chromium (scripts/deps.sh installs it; missing: skipped, under
    scripts/test.sh failed): each page rendered headless,
    a live run followed (a new transcript entry appears without reload, a new
    frame becomes the live screen's picture),
    the DOM after the script ran (its red-cell list, the title not rewritten
    by the hostile text), a screenshot that is not blank, the report opened
    with every host name mapped to nothing

The image: $SBX_RUN_TEST_IMAGE if it names one, else $SBX_TEST_SLIM_IMAGE (default sandboxctl/sandbox-slim:latest).
"""
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import zlib

SRC = os.environ.get("SBX_SOURCE_ROOT", os.path.dirname(os.path.abspath(__file__)) + "/../..")
BUILD = os.environ.get("SBX_BUILD_ROOT", SRC + "/build")
SANDBOXCTL = os.path.join(BUILD, "cmd", "sandboxctl")
TASKS = os.path.join(SRC, "tasks")
AGENT = os.path.join(SRC, "tests", "view", "hostile_agent.sh")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from itest import SLIM_IMAGE  # noqa: E402
IMAGE = os.environ.get("SBX_RUN_TEST_IMAGE", "real")
if IMAGE in ("", "real"):
    IMAGE = SLIM_IMAGE
SKIP = 77
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def fail(msg):
    raise AssertionError(msg)


def check(cond, msg):
    if not cond:
        fail(msg)


def get(base, path, method="GET", raw=False):
    """(status, headers, body) of one request to the viewer; path is sent as is."""
    u = urllib.parse.urlsplit(base)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.putrequest(method, path, skip_accept_encoding=True)
    c.endheaders()
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, dict(r.getheaders()), body if raw else body.decode("utf-8", "replace")


def chromium(*args, timeout=90):
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-extensions", "--user-data-dir=" + CHROME_PROFILE] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.stdout


class Browser:
    """Headless chromium driven over --remote-debugging-pipe (fds 3 and 4): no websocket needed."""
    def __init__(self, exe, profile):
        r1, w1 = os.pipe()  # we write commands, chromium reads on fd 3
        r2, w2 = os.pipe()  # chromium writes on fd 4
        def fds():
            a, b = os.dup(r1), os.dup(w2)  # out of the way of 3 and 4 first
            os.dup2(a, 3)
            os.dup2(b, 4)
        self.p = subprocess.Popen([exe, "--headless", "--no-sandbox", "--disable-gpu",
                                   "--remote-debugging-pipe", "--user-data-dir=" + profile,
                                   "about:blank"], preexec_fn=fds, pass_fds=(),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=False)
        os.close(r1); os.close(w2)
        self.w, self.r, self.buf, self.n = w1, r2, b"", 0

    def call(self, method, params=None, session=None, timeout=20):
        self.n += 1
        msg = {"id": self.n, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        end = time.time() + timeout
        while time.time() < end:
            while b"\0" in self.buf:
                line, self.buf = self.buf.split(b"\0", 1)
                m = json.loads(line)
                if m.get("id") == self.n:
                    if "error" in m:
                        raise RuntimeError(f"{method}: {m['error']}")
                    return m["result"]
            self.buf += os.read(self.r, 65536)
        raise TimeoutError(method)

    def open(self, url):
        t = self.call("Target.createTarget", {"url": url})["targetId"]
        return self.call("Target.attachToTarget", {"targetId": t, "flatten": True})["sessionId"]

    def eval(self, session, expr):
        return self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True},
                         session)["result"].get("value")

    def close(self):
        self.p.kill()
        self.p.wait()


def wait_event(sock, event, timeout=15):
    """What the event stream sock sent until `event: EVENT` came, or timeout seconds passed."""
    got, want = b"", b"event: " + event.encode()
    deadline = time.time() + timeout
    while want not in got and time.time() < deadline:
        got += sock.recv(4096)
    return got


def png_is_blank(path):
    """True when every pixel row of an 8-bit PNG decodes to one value (a blank page)."""
    data = open(path, "rb").read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG")
    pos, idat = 8, b""
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    raw = zlib.decompress(idat)
    # Filtered scanlines of a uniform image hold a handful of byte values; a page holds many.
    return len(set(raw)) < 16


def main():
    global CHROME_PROFILE
    tmp = tempfile.mkdtemp(prefix="test-view-")
    CHROME_PROFILE = os.path.join(tmp, "chrome")
    runs, sweeps = os.path.join(tmp, "runs"), os.path.join(tmp, "sweeps")
    os.makedirs(sweeps)
    view = None
    try:
        t0 = time.time()
        p = subprocess.run([SANDBOXCTL, "run", "--task-dir", os.path.join(TASKS, "banking_reserve"),
                            "--agent", AGENT, "--image", IMAGE, "--runs-dir", runs],
                           capture_output=True, text=True, timeout=300)
        if p.returncode == 3:
            print(f"SKIP: no engine or image: {p.stderr.strip()[-300:]}")
            return SKIP
        check(p.returncode == 1, f"hostile run: exit {p.returncode}: {p.stderr[-800:]}")
        run_id = os.listdir(runs)[0]
        p = subprocess.run([SANDBOXCTL, "sweep", "--tasks-dir", TASKS, "--image", IMAGE,
                            "--task", "banking_reserve", "--agent", "oracle", "--epochs", "2",
                            "--jobs", "2", "--out", os.path.join(sweeps, "small")],
                           capture_output=True, text=True, timeout=600)
        check(p.returncode == 0, f"sweep: exit {p.returncode}: {p.stderr[-800:]}")
        # A GUI run recorded every second (run --record): its filmstrip.
        gui_agent = ('sleep 3; curl -s -X POST -H "Content-Type: application/json" '
                     '"$SANDBOX_REST_URL/tools/call" -d \'{"tool_name":"list_files","arguments":{}}\' '
                     '>/dev/null; sleep 2; curl -s -X POST -H "Content-Type: application/json" '
                     '-d "{}" "$SANDBOX_REST_URL/task/complete" >/dev/null')
        gui_runs = os.path.join(tmp, "gui")
        p = subprocess.run([SANDBOXCTL, "run", "--task-dir", os.path.join(TASKS, "gui_sort_table"),
                            "--agent", gui_agent, "--record", "1", "--runs-dir", gui_runs,
                            "--run-id", "gui-run"], capture_output=True, text=True, timeout=300)
        check(p.returncode == 1, f"gui run: exit {p.returncode}: {p.stderr[-800:]}")
        frames = sorted(os.listdir(os.path.join(gui_runs, "gui-run", "frames")))
        res = json.load(open(os.path.join(gui_runs, "gui-run", "result.json")))
        check(len(frames) >= 3 and res["files"]["frame_count"] == len(frames), f"frames: {frames}")
        check(all(open(os.path.join(gui_runs, "gui-run", "frames", f), "rb").read(8) ==
                  b"\x89PNG\r\n\x1a\n" for f in frames), "frames are PNGs")
        print(f"run, GUI run ({len(frames)} frames) and sweep made in {time.time() - t0:.1f} s")

        # A run still being written, for the live test, and symlinks pointing out.
        live = os.path.join(runs, "live-run")
        os.makedirs(live)
        with open(os.path.join(live, "transcript.jsonl"), "w") as f:
            f.write(json.dumps({"t_ms": 1, "dir": "agent->server", "path": "/tools/call",
                                "message": {"tool_name": "list_files", "arguments": {}}}) + "\n")
        secret = os.path.join(tmp, "secret.txt")
        open(secret, "w").write("TOP-SECRET\n")
        os.symlink(secret, os.path.join(runs, run_id, "leak.txt"))
        os.symlink(tmp, os.path.join(runs, run_id, "leakdir"))
        # A run's connection.json reached by another name, a symlink or a hard link.
        linked = os.path.join(runs, "linked-run")
        os.makedirs(os.path.join(linked, "outputs"))
        with open(os.path.join(linked, "connection.json"), "w") as f:
            f.write('{"authorization": "Bearer TOP-SECRET"}\n')
        os.symlink("../connection.json", os.path.join(linked, "outputs", "soft.txt"))
        os.link(os.path.join(linked, "connection.json"), os.path.join(linked, "outputs", "hard.txt"))

        view = subprocess.Popen([SANDBOXCTL, "view", runs, sweeps, gui_runs, "--port", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        url = view.stdout.readline().strip()
        check(url.startswith("http://127.0.0.1:") and url.endswith("/"), f"printed URL: {url!r}")
        prefix = urllib.parse.urlsplit(url).path
        token = prefix.strip("/")
        check(len(token) == 32, f"token: {token!r}")

        # The token.
        for path in ["/", "/r/0/" + run_id, "/" + "0" * 32 + "/", "/" + token[:-1] + "/",
                     "/" + token + "x/", "/f/0/" + run_id + "/result.json"]:
            st, _, _ = get(url, path)
            check(st == 401, f"{path}: {st}, want 401")
        print("no token or a wrong one: 401")

        # The list.
        t = time.time()
        st, hdr, index = get(url, prefix)
        check(st == 200 and run_id in index and "small" in index, f"index: {st}")
        check("Content-Security-Policy" in hdr and "nonce-" in hdr["Content-Security-Policy"],
              f"index CSP: {hdr}")
        check(hdr.get("Referrer-Policy") == "no-referrer", "Referrer-Policy")
        st, _, filtered = get(url, prefix + "?status=partial")
        check(run_id in filtered and "small" not in filtered, "filter by status")
        print(f"index: {len(index)} bytes in {1000 * (time.time() - t):.1f} ms")

        # The run page.
        t = time.time()
        st, _, page = get(url, prefix + "r/0/" + run_id)
        check(st == 200, f"run page: {st}")
        print(f"run page: {len(page)} bytes in {1000 * (time.time() - t):.1f} ms")
        check('id="run-id">' + run_id in page, "run id")
        check("st-partial" in page, "status partial")
        check('class="bad" data-cell="Sheet1!D2" title="expected 14302.07, got &lt;script&gt;' in page,
              "the red cell D2 with expected and got")
        check('class="ok" data-cell="Sheet1!D3"' in page, "a green cell")
        check("<script>document.title" not in page and "<img src=x" not in page,
              "hostile text unescaped")
        check("&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in page,
              "hostile text shown escaped")
        check('turn result error' in page and "File not found: no_such_file.ods" in page,
              "the tool error highlighted")
        check('<svg class="timeline"' in page and "Hardening" in page and "Provenance" in page,
              "timeline, hardening, provenance")
        check("connection.json" not in page, "connection.json listed")
        # The trajectory (trajectory.json, ATIF): its steps, each tool call with its result.
        traj = page.split('id="trajectory">')[1].split("</table>")[0] if 'id="trajectory">' in page else ""
        check("<b>write_cell</b>" in traj and "&lt;script&gt;document.title=" in traj
              and "<script>" not in traj, "trajectory steps, hostile text escaped")
        check(re.search(r'id="tjstats">ATIF-v1\.4, \d+ steps, [1-9]\d* tool calls;', page),
              "trajectory summary, every call with a result")

        # The sweep page and an episode's page through it.
        st, _, spage = get(url, prefix + "s/1/small")
        check(st == 200 and "100.0%" in spage and 'id="summary"' in spage, f"sweep page: {st}")
        check('<svg class="bars"' in spage and 'class="whisker"' in spage, "bar chart")
        ep = spage.split('href="' + prefix + "r/1/small/runs/")[1].split('"')[0]
        st, _, cpage = get(url, prefix + "c/1/small?with=1/small")
        check(st == 200 and 'id="paired"' in cpage and 'id="summary-b"' in cpage, f"compare: {st}")
        st, _, _ = get(url, prefix + "c/1/small?with=1/../..")
        check(st == 404, f"compare with an escape: {st}")
        st, _, epage = get(url, prefix + "r/1/small/runs/" + ep)
        check(st == 200 and "st-pass" in epage, f"episode page: {st}")

        # The GUI run's filmstrip: its frames, the list_files call in a caption.
        st, _, gpage = get(url, prefix + "r/2/gui-run")
        check(st == 200 and 'id="filmstrip"' in gpage and gpage.count("<figure") == len(frames),
              "filmstrip")
        check(" list_files</figcaption>" in gpage, "the tool call between frames")
        st, hdr, png = get(url, prefix + "f/2/gui-run/frames/" + frames[0], raw=True)
        check(st == 200 and hdr["Content-Type"] == "image/png" and png[:4] == b"\x89PNG", "a frame")

        # Raw files, and the attacks.
        st, hdr, body = get(url, prefix + f"f/0/{run_id}/result.json")
        check(st == 200 and json.loads(body)["run_id"] == run_id, "result.json served")
        check(hdr["Content-Type"] == "application/json" and hdr["X-Content-Type-Options"] == "nosniff",
              f"result.json headers: {hdr}")
        st, hdr, _ = get(url, prefix + f"f/0/{run_id}/transcript.jsonl")
        check(st == 200 and hdr["Content-Type"].startswith("text/plain"), "transcript as text/plain")
        attacks = [f"f/0/{run_id}/../../secret.txt", f"f/0/../secret.txt", "f/0/%2e%2e/secret.txt",
                   f"f/0/{run_id}/..%2f..%2fsecret.txt", f"f/0/{run_id}/leak.txt",
                   f"f/0/{run_id}/leakdir/secret.txt", f"r/0/{run_id}/leakdir", "f/0//etc/passwd",
                   "f/0/%2fetc%2fpasswd", "f/9/x", f"f/0/{run_id}/connection.json", "r/0/..",
                   "s/0/../sweeps/small"]
        for a in attacks:
            st, _, body = get(url, prefix + a)
            check(st == 404 and "TOP-SECRET" not in body and "root:" not in body,
                  f"{a}: {st} {body[:200]!r}")
        for a in ("f/0/linked-run/outputs/soft.txt", "f/0/linked-run/outputs/hard.txt",
                  "r/0/linked-run"):
            st, _, body = get(url, prefix + a)
            check(st in (403, 404) and "TOP-SECRET" not in body, f"{a}: {st} {body[:200]!r}")
        st, _, _ = get(url, prefix, method="POST")
        check(st == 405, f"POST: {st}")
        print(f"{len(attacks)} path attacks: 404; POST: 405")

        # Live: the stream reports growth, then the end.
        u = urllib.parse.urlsplit(url)
        s = socket.create_connection((u.hostname, u.port), timeout=20)
        s.sendall(f"GET {prefix}e/0/live-run HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        got = wait_event(s, "change")
        check(b"text/event-stream" in got and b"event: change" in got, f"live: {got[:300]!r}")
        st, _, lpage = get(url, prefix + "r/0/live-run")
        check(st == 200 and "st-running" in lpage and "data-live=" in lpage, "live page")
        with open(os.path.join(live, "transcript.jsonl"), "a") as f:
            f.write(json.dumps({"t_ms": 2, "dir": "agent->server", "path": "/tools/call",
                                "message": {"tool_name": "read_cell", "arguments": {"x": "NEWENTRY"}}}) + "\n")
        got = wait_event(s, "change")
        check(b"event: change" in got, "live: no change after the transcript grew")
        shutil.copy(os.path.join(runs, run_id, "result.json"), os.path.join(live, "result.json"))
        got = wait_event(s, "done")
        check(b"event: done" in got, "live: no done after result.json")
        s.close()
        os.remove(os.path.join(live, "result.json"))
        print("live: change on growth, done on result.json")

        # The live GUI screen: a new frame in frames/ of a run still going is a change,
        # and the page then shows it (the newest frame is what the player opens on).
        live_gui = os.path.join(gui_runs, "live-gui")
        os.makedirs(os.path.join(live_gui, "frames"))
        shutil.copy(os.path.join(gui_runs, "gui-run", "transcript.jsonl"), live_gui)
        frame_png = os.path.join(gui_runs, "gui-run", "frames", frames[-1])

        def add_frame(i):
            name = f"{i:04d}-{1764740000000 + 2000 * i}.png"
            shutil.copy(frame_png, os.path.join(live_gui, "frames", name + ".tmp"))
            os.rename(os.path.join(live_gui, "frames", name + ".tmp"),
                      os.path.join(live_gui, "frames", name))
            return name

        first = add_frame(1)
        s = socket.create_connection((u.hostname, u.port), timeout=20)
        s.sendall(f"GET {prefix}e/2/live-gui HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        got = wait_event(s, "change")
        check(b"event: change" in got, f"live GUI: no first event: {got[:300]!r}")
        st, _, lg = get(url, prefix + "r/2/live-gui")
        check(st == 200 and "data-live=" in lg and lg.count("<figure") == 1 and first in lg,
              "live GUI page, one frame")
        time.sleep(1.1)  # a directory mtime a poll can tell apart
        second = add_frame(2)
        got = wait_event(s, "change")
        check(b"event: change" in got, "live GUI: no change after a new frame")
        s.close()
        st, _, lg = get(url, prefix + "r/2/live-gui")
        check(st == 200 and lg.count("<figure") == 2 and second in lg, "live GUI: the new frame")
        print("live GUI: a new frame is a change event and a new figure")

        # The report.
        report = os.path.join(tmp, "report.html")
        p = subprocess.run([SANDBOXCTL, "report", os.path.join(sweeps, "small"), "-o", report],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, f"report: {p.stderr}")
        html = open(report).read()
        for bad in ('src="http', "src='http", 'href="http', "url(http", "@import"):
            check(bad not in html, f"report references {bad}")
        check("default-src 'none'" in html and "100.0%" in html and "st-pass" in html, "report")
        p = subprocess.run([SANDBOXCTL, "report", os.path.join(runs, run_id), "-o", report],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0 and "&lt;script&gt;document.title" in open(report).read(),
              "run report")
        print(f"report: {os.path.getsize(report)} bytes")

        if not CHROMIUM:
            # Half the checks are the browser's: without it the test did not run. Under
            # scripts/test.sh (which installs chromium) that is a failure, not a skip.
            check(not os.environ.get("SBX_CI"), "chromium not installed (scripts/deps.sh installs it)")
            print("SKIP: chromium not installed: the browser checks did not run")
            return SKIP
        # In the browser: the DOM after our script ran.
        dom = chromium("--virtual-time-budget=3000", "--dump-dom", url + "r/0/" + run_id)
        check('<ul id="redcells">' in dom and ">Sheet1!D2</a>" in dom, "JS red-cell list")
        check('data-js="on"' in dom, "the script did not run")
        check('id="trajectory"><tbody><tr><th>step</th>' in dom, "trajectory table in the DOM")
        check("<title>pwned" not in dom and "<title>" + run_id in dom, "hostile script ran")
        dom = chromium("--virtual-time-budget=3000", "--dump-dom", url + "r/2/gui-run")
        check('<div id="player"><button>play</button><input type="range"' in dom, "film player")
        dom = chromium("--virtual-time-budget=3000", "--dump-dom", url)
        check('<table id="statuscounts"' in dom and run_id in dom, "JS status counts on the list")
        dom = chromium("--virtual-time-budget=3000", "--dump-dom", url + "s/1/small")
        check("100.0%" in dom and 'id="sweep-id">small' in dom, "sweep DOM")
        for name, path in [("run", "r/0/" + run_id), ("sweep", "s/1/small"), ("list", "")]:
            shot = os.path.join(tmp, name + ".png")
            chromium("--window-size=1280,1200", "--screenshot=" + shot, url + path)
            check(os.path.exists(shot) and not png_is_blank(shot), f"{name} screenshot blank")
        # The report offline: every host name resolves to nothing.
        dom = chromium("--host-resolver-rules=MAP * ~NOTFOUND", "--virtual-time-budget=3000",
                       "--dump-dom", "file://" + report)
        check('<ul id="redcells">' in dom and run_id in dom, "report in the browser")
        print("chromium: DOM, screenshots and the offline report checked")

        # Following a live run in the browser: a new transcript entry appears without reload.
        b = Browser(CHROMIUM, CHROME_PROFILE + "-live")
        try:
            s = b.open(url + "r/0/live-run")
            end = time.time() + 30
            while b.eval(s, "document.body && document.body.getAttribute('data-js')") != "on":
                check(time.time() < end, "live page: the script never ran")
                time.sleep(0.1)
            time.sleep(1)  # the event stream is open
            before = b.eval(s, "document.querySelectorAll('.turn').length")
            with open(os.path.join(live, "transcript.jsonl"), "a") as f:
                f.write(json.dumps({"t_ms": 3, "dir": "agent->server", "path": "/tools/call",
                                    "message": {"tool_name": "write_cell",
                                                "arguments": {"x": "LIVEENTRY"}}}) + "\n")
            t = time.time()
            while not b.eval(s, "document.body.innerHTML.indexOf('LIVEENTRY') >= 0"):
                check(time.time() - t < 15, "live: the new entry never appeared")
                time.sleep(0.1)
            after = b.eval(s, "document.querySelectorAll('.turn').length")
            check(after == before + 1, f"live: {before} -> {after} entries")
            print(f"chromium: a live entry appeared in {time.time() - t:.2f} s without reload")
            # The live GUI screen: the player follows the newest frame without reload.
            s = b.open(url + "r/2/live-gui")
            end = time.time() + 30
            while b.eval(s, "document.body && document.body.getAttribute('data-js')") != "on":
                check(time.time() < end, "live GUI page: the script never ran")
                time.sleep(0.1)
            shown = "document.querySelector('#player img').getAttribute('src')"
            check(second in b.eval(s, shown), f"live GUI: the player shows {b.eval(s, shown)}")
            time.sleep(1.1)
            third = add_frame(3)
            t = time.time()
            while b.eval(s, "document.querySelectorAll('#filmstrip figure').length") != 3:
                check(time.time() - t < 15, "live GUI: the new frame never appeared")
                time.sleep(0.1)
            check(third in b.eval(s, shown), f"live GUI: the player shows {b.eval(s, shown)}")
            print(f"chromium: a new frame on the live screen in {time.time() - t:.2f} s")
        finally:
            b.close()
        return 0
    finally:
        if view:
            view.terminate()
            try:
                view.wait(10)
            except subprocess.TimeoutExpired:
                view.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The in-container helpers, run on the host: sandbox-init's exit statuses,
deadline, signal forwarding and reaping; sandbox-bridge's copying both ways.

Usage: test_helpers.py SANDBOX_INIT SANDBOX_BRIDGE
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

INIT, BRIDGE = sys.argv[1], sys.argv[2]


class InitTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        # As root, the init drops to uid 1000 first: it must be able to write here.
        os.chmod(self.tmp.name, 0o777)
        self.env = {"PATH": os.environ["PATH"], "SANDBOX_RUN_DIR": self.tmp.name + "/run"}

    def tearDown(self):
        self.tmp.cleanup()

    def run_init(self, *args, env=None, timeout=20):
        e = dict(self.env, **(env or {}))
        t0 = time.monotonic()
        p = subprocess.run([INIT, *args], env=e, capture_output=True, text=True, timeout=timeout)
        return p, time.monotonic() - t0

    def test_exit_status_of_main_program(self):
        p, _ = self.run_init("sh", "-c", "exit 7")
        self.assertEqual(p.returncode, 7, p.stderr)
        p, _ = self.run_init("--", "true")
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_runs_unprivileged(self):
        p, _ = self.run_init("sh", "-c", "id -u; grep NoNewPrivs /proc/self/status")
        self.assertEqual(p.returncode, 0, p.stderr)
        uid, nnp = p.stdout.split("\n")[:2]
        self.assertNotEqual(uid, "0")
        self.assertTrue(nnp.endswith("1"), nnp)

    def test_missing_program(self):
        p, _ = self.run_init("/nonexistent/program")
        self.assertEqual(p.returncode, 126)
        self.assertIn("/nonexistent/program", p.stderr)

    def test_deadline_from_timeout(self):
        p, took = self.run_init("sleep", "60", env={"SANDBOX_TIMEOUT": "1", "SANDBOX_GRACE": "1"})
        self.assertEqual(p.returncode, 124, p.stderr)
        self.assertIn("deadline", p.stderr)
        self.assertGreaterEqual(took, 1.9)
        self.assertLess(took, 6)

    def test_deadline_kills_a_program_that_ignores_sigterm(self):
        p, took = self.run_init("sh", "-c", "trap '' TERM; while :; do sleep 0.1; done",
                                env={"SANDBOX_TIMEOUT": "0", "SANDBOX_GRACE": "1"})
        self.assertEqual(p.returncode, 124, p.stderr)
        self.assertLess(took, 8)  # 1 s grace + 3 s SIGTERM-to-SIGKILL + slack

    def test_deadline_from_unix_time(self):
        deadline = str(int(time.time()) + 1)
        p, took = self.run_init("sleep", "60",
                                env={"SANDBOX_DEADLINE": deadline, "SANDBOX_GRACE": "0"})
        self.assertEqual(p.returncode, 124, p.stderr)
        self.assertLess(took, 4)
        # Already passed: stops at once.
        p, took = self.run_init("sleep", "60", env={"SANDBOX_DEADLINE": "1000", "SANDBOX_GRACE": "0"})
        self.assertEqual(p.returncode, 124)
        self.assertLess(took, 2)

    def test_bad_settings_fail_closed(self):
        for env in ({"SANDBOX_DEADLINE": "soon"}, {"SANDBOX_TIMEOUT": "-5"},
                    {"SANDBOX_TIMEOUT": "5s"}, {"SANDBOX_GRACE": "x"},
                    {"SANDBOX_TIMEOUT": "99999999999999999999"}):
            p, _ = self.run_init("true", env=env)
            self.assertEqual(p.returncode, 125, (env, p.stderr))

    def test_network_modes(self):
        p, _ = self.run_init("true", env={"SANDBOX_NETWORK": "bridge"})
        self.assertEqual(p.returncode, 125, p.stderr)
        self.assertIn("SANDBOX_NETWORK='bridge'", p.stderr)
        p, _ = self.run_init("true", env={"SANDBOX_NETWORK": "none"})
        self.assertEqual(p.returncode, 0, p.stderr)
        # Published sets a firewall: only as a container's PID 1 (its own network
        # namespace), never on the host; it refuses before running anything.
        p, _ = self.run_init("sh", "-c", "echo ran", env={"SANDBOX_NETWORK": "published"})
        self.assertEqual(p.returncode, 126, p.stderr)
        self.assertIn("needs PID 1 of a container", p.stderr)
        self.assertNotIn("ran", p.stdout)

    def test_sigterm_is_forwarded(self):
        e = dict(self.env)
        p = subprocess.Popen([INIT, "sh", "-c", "trap 'exit 42' TERM; while :; do sleep 0.05; done"],
                             env=e, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=10)
        p.stderr.close()
        self.assertEqual(rc, 42)

    def test_orphans_are_reaped(self):
        # The main program leaves a background child behind; the init still exits promptly
        # and no zombie of it stays.
        p, took = self.run_init("sh", "-c", "sleep 30 & echo $!; exit 3")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertLess(took, 6)
        pid = int(p.stdout.strip())
        time.sleep(0.2)
        self.assertFalse(os.path.exists(f"/proc/{pid}"), "the orphan outlived the init")

    def test_help(self):
        p, _ = self.run_init("--help")
        self.assertEqual(p.returncode, 0)
        self.assertIn("SANDBOX_DEADLINE", p.stdout)


class BridgeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "s.sock")

    def tearDown(self):
        self.tmp.cleanup()

    def serve(self, handler, delay=0.0):
        def run():
            time.sleep(delay)
            srv = socket.socket(socket.AF_UNIX)
            srv.bind(self.path)
            srv.listen(1)
            conn, _ = srv.accept()
            handler(conn)
            conn.close()
            srv.close()
        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t

    def test_both_directions_at_once(self):
        # The server answers while the client is still sending: a bridge that blocks on
        # one direction deadlocks here.
        def upper(conn):
            total = 0
            while True:
                d = conn.recv(65536)
                if not d:
                    break
                conn.sendall(d.upper())
                total += len(d)
            conn.sendall(b"TOTAL %d\n" % total)
        t = self.serve(upper)
        while not os.path.exists(self.path):
            time.sleep(0.01)
        data = os.urandom(3 << 20).hex().encode()  # 6 MiB
        p = subprocess.run([BRIDGE, self.path], input=data, capture_output=True, timeout=60)
        t.join(5)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout[:-len(b"TOTAL %d\n" % len(data))], data.upper())
        self.assertTrue(p.stdout.endswith(b"TOTAL %d\n" % len(data)))

    def test_waits_for_the_socket(self):
        t = self.serve(lambda c: c.sendall(b"hello\n"), delay=0.5)
        p = subprocess.run([BRIDGE, "-w", "5", self.path], input=b"", capture_output=True,
                           timeout=20)
        t.join(5)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, b"hello\n")

    def test_missing_socket_fails(self):
        t0 = time.monotonic()
        p = subprocess.run([BRIDGE, "-w", "0", self.path], capture_output=True, timeout=10)
        self.assertEqual(p.returncode, 1)
        self.assertIn(self.path.encode(), p.stderr)
        self.assertLess(time.monotonic() - t0, 2)

    def test_usage(self):
        for args in ([], ["-w", "x", "p"], ["a", "b"]):
            p = subprocess.run([BRIDGE, *args], capture_output=True, timeout=10)
            self.assertEqual(p.returncode, 2, args)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])

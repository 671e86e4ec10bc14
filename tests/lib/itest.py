# SPDX-License-Identifier: MIT
"""What the integration tests of sandboxctl (run, sweep, serve and the suites
that import them) share: this tree's paths, the skip and failure exceptions,
the loops that run cases, waiting for a condition and stopping a child. A Skip
ends in exit 77, meson's skip."""
import os
import signal
import subprocess
import sys
import time

SRC = os.environ.get("SBX_SOURCE_ROOT",
                     os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BUILD = os.environ.get("SBX_BUILD_ROOT", os.path.join(SRC, "build"))
SANDBOXCTL = os.path.join(BUILD, "cmd", "sandboxctl")
TASKS = os.path.join(SRC, "tasks")
SKIP = 77
# The images `sandboxctl build` makes, as every test and bench names them:
# $SBX_TEST_SLIM_IMAGE and $SBX_TEST_FULL_IMAGE pin others (a build under a
# tag of one's own, an older image) without moving the :latest tags.
# DEFAULT_SLIM_IMAGE is what sandboxctl itself takes without --image (a test of
# that default, or of a script that passes none, needs that one).
DEFAULT_SLIM_IMAGE = "sandboxctl/sandbox-slim:latest"
DEFAULT_FULL_IMAGE = "sandboxctl/sandbox:latest"
SLIM_IMAGE = os.environ.get("SBX_TEST_SLIM_IMAGE") or DEFAULT_SLIM_IMAGE
FULL_IMAGE = os.environ.get("SBX_TEST_FULL_IMAGE") or DEFAULT_FULL_IMAGE


class Skip(Exception):
    pass


def fail(msg):
    raise AssertionError(msg)


def stop_process(proc, sig=signal.SIGTERM, timeout=60):
    """Sends sig unless proc has exited, waits up to timeout seconds, then kills
    it; returns its exit status."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def wait_until(cond, timeout, poll=0.05):
    """Calls cond() every poll seconds until it is true or timeout seconds have
    passed; whether it came true."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(poll)
    return False


def run_main(fn):
    """A test file's entry point: fn(), a Skip exits 77 (meson's skip) with its reason."""
    try:
        fn()
    except Skip as e:
        print("skip:", e)
        sys.exit(SKIP)


def run_cases(names, cases, make_env):
    """Runs cases[name](env) for each name, each in a fresh make_env() cleaned up
    after it; the exit code: 1 if any failed, SKIP if all skipped."""
    failed = skipped = 0
    for n in names:
        env = make_env()
        try:
            cases[n](env)
            print("ok   %s" % n)
        except Skip as e:
            skipped += 1
            print("skip %s: %s" % (n, e))
        except Exception as e:  # noqa: BLE001 - report any failure of the case
            failed += 1
            while isinstance(e, BaseExceptionGroup) and e.exceptions:
                e = e.exceptions[0]
            print("FAIL %s: %s: %s" % (n, type(e).__name__, e))
        finally:
            try:
                env.cleanup()
            except AssertionError as e:
                failed += 1
                print("FAIL %s cleanup: %s" % (n, e))
    if failed:
        return 1
    return SKIP if skipped == len(names) else 0


def main_cases(names, run_case):
    """A test file of named cases: run_case(argv[1]) under run_main, then "ok"."""
    if len(sys.argv) != 2 or sys.argv[1] not in names:
        sys.exit("usage: %s {%s}" % (os.path.basename(sys.argv[0]), ",".join(names)))
    run_main(lambda: run_case(sys.argv[1]))
    print("ok")

# SPDX-License-Identifier: MIT
"""What the Python tests ask the engine: the containers a serve process owns
(label sandboxctl.owner = "host:pid:start"), to check none is left."""
import json
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from second_engine import engine  # noqa: E402


def owned_by(pids):
    """Containers (test-labelled) whose owner is one of pids."""
    f = urllib.parse.quote(json.dumps({"label": ["sandboxctl.test=1"]}))
    st, body = engine("GET", "/containers/json?all=1&filters=" + f)
    assert st == 200, "engine: list containers: %s %s" % (st, body)
    want = {str(p) for p in pids}
    return [c for c in body if c["Labels"].get("sandboxctl.owner", "::").split(":")[1] in want]


def remove(containers):
    for c in containers:
        engine("DELETE", "/containers/%s?force=1&v=1" % c["Id"])

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The reference's scripted demo agent as a sandboxctl agent: solves
banking_reserve through the REST API at $SANDBOX_REST_URL (the relay) with
ref_client.py, which changes nothing of the reference's client but the URL.

    sandboxctl run --task-dir tests/compat/data/banking_reserve \
        --agent "python3 tests/compat/ref_agent.py"
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_client as rc  # noqa: E402

client = rc.MCPClient(os.environ["SANDBOX_REST_URL"])
client.wait_until_up()
rc.demo_agent(client, log=lambda s: print("ref-agent: " + s, file=sys.stderr))

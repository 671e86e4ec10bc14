#!/bin/bash
# Graded by Python's unittest (pytest is not in the slim image); Harbor's contract:
# the reward goes to /logs/verifier/reward.txt.
cd /workspace
if python3 /tests/test_stats.py -v 2>&1 | tee /tmp/unittest.log; then
	grep -q '^OK' /tmp/unittest.log && echo 1 > /logs/verifier/reward.txt && exit 0
fi
echo 0 > /logs/verifier/reward.txt

#!/bin/sh
# Graded by a shell script; writes reward.json (wins over reward.txt) with an extra key.
expected='1:HELLO
2:HARBOR TASKS
3:VERIFIED APART'
lines=$(wc -l < /workspace/output.txt 2>/dev/null || echo 0)
if [ "$(cat /workspace/output.txt 2>/dev/null)" = "$expected" ]; then
	echo "{\"reward\": 1, \"lines\": $lines}" > /logs/verifier/reward.json
else
	echo "output differs"
	echo "{\"reward\": 0, \"lines\": $lines}" > /logs/verifier/reward.json
fi

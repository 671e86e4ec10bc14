#!/bin/sh
# Graded in /app, where the task's image put the input and the agent worked (run there).
expected='1:HELLO
2:HARBOR TASKS
3:VERIFIED APART'
if [ "$(pwd)" != /app ]; then
	echo "run in $(pwd), not /app"
	echo 0 > /logs/verifier/reward.txt
elif [ "$(cat /app/output.txt 2>/dev/null)" = "$expected" ] && [ -f /app/input.txt ]; then
	echo 1 > /logs/verifier/reward.txt
else
	echo "output differs"
	echo 0 > /logs/verifier/reward.txt
fi

#!/bin/sh
# Reward 1 only when PID 1 is ours (from the bundle) and the image's entrypoint never ran.
if [ "$(cat /proc/1/comm)" = sandbox-init ] && [ ! -e /tmp/pwned ]; then
	echo 1 > /logs/verifier/reward.txt
else
	echo "PID 1: $(cat /proc/1/comm); $(ls -l /tmp/pwned 2>&1)"
	echo 0 > /logs/verifier/reward.txt
fi

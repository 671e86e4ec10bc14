#!/bin/sh
# 30 MB of output, a FIFO for reward.json (a reader that opened it would block),
# a 10 MB reward.txt: no reward, one line why, the output's tail only.
head -c 30000000 /dev/zero | tr '\0' 'x'
echo END-OF-FLOOD
mkfifo /logs/verifier/reward.json
head -c 10000000 /dev/zero | tr '\0' '1' > /logs/verifier/reward.txt

#!/bin/sh
cd /app && echo 0 > /logs/verifier/reward.txt

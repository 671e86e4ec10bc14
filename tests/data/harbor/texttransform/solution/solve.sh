#!/bin/sh
awk '{ print NR ":" toupper($0) }' /workspace/input.txt > /workspace/output.txt

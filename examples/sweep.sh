#!/bin/sh
# sweep.sh AGENT EPOCHS TASK...: every task EPOCHS times with AGENT, two at a time, into
# sweeps/<agent>-<time> (summary on stdout). After Ctrl-C: sandboxctl sweep --resume DIR.
#   examples/sweep.sh oracle 3 banking_reserve sales_revenue
set -eu
agent=${1:?usage: sweep.sh AGENT EPOCHS TASK...} epochs=${2:?epochs}; shift 2
out=sweeps/$(printf %s "$agent" | tr -c 'A-Za-z0-9_-' _)-$(date -u +%Y%m%d-%H%M%S)
for t in "$@"; do set -- "$@" --task "$t"; shift; done
exec "${SANDBOXCTL:-sandboxctl}" sweep --agent "$agent" --epochs "$epochs" --jobs 2 --out "$out" "$@"

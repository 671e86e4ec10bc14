#!/bin/bash
cat > /workspace/stats.py <<'PY'
def mean(values):
    """The arithmetic mean of values."""
    if not values:
        raise ValueError("mean of no values")
    return sum(values) / len(values)
PY

# SPDX-License-Identifier: MIT
"""A1-style references for the Python tests that write or read sheets."""


def col_name(i):
    """The column letters of 0-based column i: 0 -> A, 25 -> Z, 26 -> AA."""
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s

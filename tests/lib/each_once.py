# SPDX-License-Identifier: MIT
"""Concurrent clients for the serve test and benchmark: each_once(n, threads, fn)."""
import threading


def each_once(n, threads, fn):
    """Calls fn(i) once for each i in 1..n, from `threads` threads at a time;
    returns when every call has returned. fn handles its own errors."""
    lock, taken = threading.Lock(), [0]

    def worker():
        while True:
            with lock:
                if taken[0] >= n:
                    return
                taken[0] += 1
                i = taken[0]
            fn(i)

    ths = [threading.Thread(target=worker) for _ in range(threads)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()

"""The timing rule of the peer and benchmark scripts: one warm-up call, then
up to max_reps timed calls (at least 3, stopping once min_seconds have
passed), and their median in milliseconds. sync waits for work a call left
queued on a device (torch.cuda.synchronize)."""

import time


def median_ms(fn, max_reps, min_seconds=float("inf"), sync=lambda: None):
    fn()
    sync()
    times = []
    start = time.perf_counter()
    for i in range(max_reps):
        t0 = time.perf_counter()
        fn()
        sync()
        t1 = time.perf_counter()
        times.append(t1 - t0)
        if i >= 2 and t1 - start > min_seconds:
            break
    times.sort()
    return times[len(times) // 2] * 1e3

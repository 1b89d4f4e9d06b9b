"""Wall-clock timing shared by the peer scripts."""
import time


def wall_samples(f, reps=5):
    """Seconds of each of `reps` calls of `f`, after one untimed call (the warm-up)."""
    f()
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return out

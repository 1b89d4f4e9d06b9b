"""PyTorch beside `.gpu/reductions` (crates/ndgpu/examples/reductions.rs): the same
per-axis sums of squares and argmax, and the device-to-device copy of the same matrix,
f32, CUDA events, median of 20 after one untimed run.

    python3 crates/shootout/peer/reductions.py
"""
import torch

from kmeans import events  # CUDA events, median of 20 after one untimed run

SHAPES = [(1 << 24, 16), (16, 1 << 24), (8192, 8192), (1 << 20, 32)]


def timed(f):
    return events(f)[0]


print("| backend | shape (f32) | op | axis | median ms | GB/s | of copy |")
print("|---|---|---|---:|---:|---:|---:|")
for rows, cols in SHAPES:
    x = torch.rand(rows, cols, device="cuda")
    dst = torch.empty_like(x)
    nbytes = rows * cols * 4
    copy = timed(lambda: dst.copy_(x))
    copy_rate = 2 * nbytes / (copy * 1e-3) / 1e9
    print(f"| pytorch | {rows}x{cols} | copy | 0 | {copy:.3f} | {copy_rate:.0f} | 1.00 |")
    for axis in (0, 1):
        kept = cols if axis == 0 else rows
        for op, f, written in (
            ("sumsq", lambda: x.square().sum(axis), kept * 4),
            ("sumsq (vector_norm)", lambda: torch.linalg.vector_norm(x, 2, dim=axis), kept * 4),
            ("argmax", lambda: x.argmax(axis), kept * 8),
        ):
            t = timed(f)
            rate = (nbytes + written) / (t * 1e-3) / 1e9
            print(f"| pytorch | {rows}x{cols} | {op} | {axis} | {t:.3f} | {rate:.0f} | {rate / copy_rate:.2f} |")

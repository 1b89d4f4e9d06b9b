"""PyTorch beside `.gpu/scaling`: a 16384² f32 GEMM on one GPU, and on every GPU with
A's rows split and B copied to the other devices inside the timed region (what the
`cuda:all` backend does). TF32 off, as ndgpu's f32 products. Median of 7 runs after one
untimed run, CUDA events on device 0, which waits for the others.

    python3 crates/shootout/peer/multi_gemm.py [N]
"""
import sys

import torch

torch.backends.cuda.matmul.allow_tf32 = False
n = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
devs = [torch.device(f"cuda:{i}") for i in range(torch.cuda.device_count())]
a = torch.rand(n, n, device=devs[0]) - 0.5
b = torch.rand(n, n, device=devs[0]) - 0.5


def timed(f):
    f()
    for d in devs:
        torch.cuda.synchronize(d)
    out = []
    for _ in range(7):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        f()
        for d in devs[1:]:
            torch.cuda.current_stream(d).synchronize()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end))
    out.sort()
    return out[len(out) // 2], out[0], out[-1]


def one():
    torch.mm(a, b)


rows = [n * r // len(devs) for r in range(len(devs) + 1)]
parts = [a[rows[r]:rows[r + 1]].to(d) for r, d in enumerate(devs)]


def split():
    bs = [b] + [b.to(d, non_blocking=True) for d in devs[1:]]
    for p, bb in zip(parts, bs):
        torch.mm(p, bb)


for name, f, count in [("torch", one, 1), ("torch, rows split", split, len(devs))]:
    med, lo, hi = timed(f)
    print(f"| {name} | {count} | gemm {n} f32 | {med:.3f} | {lo:.3f}–{hi:.3f} |")

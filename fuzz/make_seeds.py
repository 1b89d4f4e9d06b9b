#!/usr/bin/env python3
"""Writes the seed inputs of the npy_read fuzz target (fuzz/seeds/npy_read/): small
.npy files of every kind the CLI meets, valid and not, written by hand (format 1.0 and
2.0) so that no NumPy is needed. Run from the repository root: python3 fuzz/make_seeds.py
The files named found_* beside them are inputs the fuzzer found, kept so that every run
replays them; this script leaves them alone."""
import os
import struct

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds", "npy_read")
os.makedirs(out, exist_ok=True)


def npy(descr, shape, data, fortran=False, version=1):
    """descr is written quoted (a type string) unless it is a list (a structured dtype)."""
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    descr = descr if descr.startswith("[") else "'%s'" % descr
    text = "{'descr': %s, 'fortran_order': %s, 'shape': (%s), }" % (
        descr, "True" if fortran else "False", dims)
    prefix = 8 + (2 if version == 1 else 4)
    text += " " * ((-(prefix + len(text) + 1)) % 64) + "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(text))
    return b"\x93NUMPY" + bytes([version, 0]) + length + text.encode() + data


def floats(fmt, values):
    return b"".join(struct.pack(fmt, v) for v in values)


seeds = {
    "f32_3x5_c": npy("<f4", (3, 5), floats("<f", range(15))),
    "f64_4x2_fortran": npy("<f8", (4, 2), floats("<d", [0.5 * i for i in range(8)]), fortran=True),
    "f32_vector_7": npy("<f4", (7,), floats("<f", [1, -2, float("nan"), float("inf"), 0, -0.0, 3])),
    "f64_big_endian_2x2": npy(">f8", (2, 2), floats(">d", [4, 2, 2, 3])),
    "f32_empty_0x4": npy("<f4", (0, 4), b""),
    "f32_rank3": npy("<f4", (2, 2, 2), floats("<f", range(8))),
    "f32_scalar": npy("<f4", (), floats("<f", [1.5])),
    "i64_2x2": npy("<i8", (2, 2), struct.pack("<4q", 1, 2, 3, 4)),
    "f32_v2_header": npy("<f4", (2, 3), floats("<f", range(6)), version=2),
    "f32_truncated": npy("<f4", (3, 3), floats("<f", range(7))),
    "f32_trailing": npy("<f4", (1, 2), floats("<f", [1, 2]) + b"xx"),
    "structured": npy("[('a', '<f4')]", (2,), floats("<f", [1, 2])),
}
for name, data in seeds.items():
    with open(os.path.join(out, name + ".npy"), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds in {out}")

#!/usr/bin/env python3
"""Writes the seed corpora of the rudder-hessian fuzz targets into seeds/<target>/seed-*.

Seeds are the bodies of the real dubbo:// frames captured in it/fixtures/dubbo-exchanges.txt
(requests and responses between Java Dubbo 3.3 peers), plus synthetic bodies that once made the
decoder amplify: a 64 KiB class name used by 300,000 objects, a 64 KiB list type used by reference
200,000 times, a back-reference bomb, and the same shapes as short recipes (see fuzz_targets/body.rs).

Both targets fuzz small inputs (options/<target> sets -max_len, so they run thousands of inputs a
second under ASan): their seeds leave out the two full-size bodies (hundreds of KiB, which libFuzzer
would cut to -max_len), keeping their shapes as short recipes; the full-size bodies are decoded by
tests/hessian/amplification.rs.

Run from this directory: python3 make_seeds.py
"""
import pathlib
import struct

HERE = pathlib.Path(__file__).resolve().parent
FIXTURES = HERE.parents[2] / "it" / "fixtures" / "dubbo-exchanges.txt"
TARGETS = ["decode", "from_value"]
# Largest seed per target, where the target's options file sets a -max_len.
MAX_SEED = {"decode": 8192, "from_value": 8192}
HEADER_LEN = 16
MAX_LEN = 1 << 20


def hessian_int(n):
    if -16 <= n <= 47:
        return bytes([0x90 + n])
    return b"I" + struct.pack(">i", n)


def hessian_string(s):
    """ASCII only: chunks of at most 32768 units, as Java writes long strings."""
    data = s.encode("ascii")
    out = b""
    while len(data) > 32768:
        out += b"R" + struct.pack(">H", 32768) + data[:32768]
        data = data[32768:]
    if len(data) <= 31:
        return out + bytes([len(data)]) + data
    return out + b"S" + struct.pack(">H", len(data)) + data


def long_name(prefix):
    return prefix + "x" * (64 * 1024 - len(prefix))


def captured_bodies():
    for line in FIXTURES.read_text().splitlines():
        if not line.startswith(("c2s ", "s2c ")):
            continue
        frame = bytes.fromhex(line.rsplit(" ", 1)[1])
        body = frame[HEADER_LEN:]
        if body:
            yield body


def synthetic_bodies():
    # A list of 300,000 objects of one class with a 64 KiB name and one field.
    n = 300_000
    yield (b"X" + hessian_int(n) + b"C" + hessian_string(long_name("com.example."))
           + hessian_int(1) + hessian_string("value") + b"\x60N" * n)
    # A list of 200,000 typed lists of two nulls, naming a 64 KiB type by reference.
    n = 200_000
    yield (b"X" + hessian_int(n) + b"\x72" + hessian_string(long_name("[com.example."))
           + b"NN" + b"\x72\x90NN" * (n - 1))
    # Each list holds two references to the one before: 2^40 copies if expanded naively.
    bomb = b"X\xb9\x79\x90"
    for i in range(1, 41):
        bomb += b"\x7a" + b"Q" + hessian_int(i) + b"Q" + hessian_int(i)
    yield bomb
    # Recipes: 0xff, count / 16 (u16), split, prefix, unit.
    prefix = b"V" + b"C" + hessian_string("com.example." + "x" * 200) + hessian_int(1) + hessian_string("v")
    yield b"\xff" + struct.pack(">HB", 4096, len(prefix)) + prefix + b"\x60N"
    prefix = b"V\x72" + hessian_string("[com.example." + "x" * 200) + b"NN"
    yield b"\xff" + struct.pack(">HB", 4096, len(prefix)) + prefix + b"\x72\x90NN"
    prefix = b"H"
    yield b"\xff" + struct.pack(">HB", 2048, len(prefix)) + prefix + b"\x01a\x90"


def main():
    bodies = [("capture", b) for b in captured_bodies()] + [("synthetic", b) for b in synthetic_bodies()]
    for target in TARGETS:
        seeds = HERE / "seeds" / target
        seeds.mkdir(parents=True, exist_ok=True)
        for old in seeds.glob("seed-*"):
            old.unlink()
        limit = MAX_SEED.get(target, MAX_LEN)
        kept = [(i, kind, body) for i, (kind, body) in enumerate(bodies) if len(body) <= limit]
        for i, kind, body in kept:
            (seeds / f"seed-{kind}-{i:02}").write_bytes(body)
        print(f"{target}: {len(kept)} seeds, largest {max(len(b) for _, _, b in kept)} bytes")


if __name__ == "__main__":
    main()

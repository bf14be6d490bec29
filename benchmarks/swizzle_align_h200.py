"""Where may a swizzled TMA + WGMMA operand start in shared memory? Measured on a Hopper GPU.

For each swizzle (128B, 64B), start offset from a 1,024-byte boundary and setting of the WGMMA
descriptor's base-offset field (left 0, or ``(address >> 7) & 7`` as the PTX ISA's matrix
descriptor section gives it), ``probe.cu`` loads a 64-row A and B tile with TMA and multiplies them
with one warpgroup's WGMMA; the result is compared with ``torch.matmul`` and the bytes TMA wrote are
matched against the swizzle computed on the absolute shared-memory address and on the offset from
the buffer's start. Each case runs in its own process, so a fault in one leaves the others alone.

    nvcc -gencode arch=compute_90a,code=sm_90a -O2 -shared -Xcompiler -fPIC \\
        -o build/probe.so benchmarks/swizzle_align/probe.cu      # on any machine with CUDA 13
    python3 benchmarks/swizzle_align_h200.py --lib build/probe.so --json out.json   # on the GPU

Prints a Markdown table (results/swizzle_align_h200.md holds the H200's).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import subprocess
import sys

SPANS = (128, 64)
OFFSETS = (128, 256, 384, 512, 640, 768, 896, 1024)
ATOM = {128: 1024, 64: 512}  # bytes after which each swizzle pattern repeats


def swizzled(addr: int, span: int) -> int:
    """TMA's swizzle of one byte address: bits [4, 4+b) XOR bits [7, 7+b), b = 3 (128B) or 2 (64B)."""
    mask = 7 if span == 128 else 3
    return addr ^ (((addr >> 7) & mask) << 4)


def pattern(raw: bytes, logical: bytes, offset: int, span: int) -> str:
    """Which addressing TMA's swizzle followed: 'absolute' (the shared-memory address), 'relative'
    (the offset from the buffer's start), 'both' (they agree here) or 'neither'."""
    found = []
    for name, start in (("absolute", offset % 1024), ("relative", 0)):
        ok = all(
            raw[swizzled(start + pos, span) - start : swizzled(start + pos, span) - start + 16]
            == logical[pos : pos + 16]
            for pos in range(0, len(logical), 16)
        )
        if ok:
            found.append(name)
    return "both" if len(found) == 2 else (found[0] if found else "neither")


def run_case(lib: str, span: int, offset: int, set_base: int) -> dict:
    import torch

    torch.manual_seed(span * 10_000 + offset)
    k = span // 2
    a = torch.randn(64, k, device="cuda", dtype=torch.float16)
    b = torch.randn(64, k, device="cuda", dtype=torch.float16)
    d = torch.zeros(64, 64, device="cuda", dtype=torch.float32)
    raw = torch.zeros(64 * span, device="cuda", dtype=torch.uint8)
    probe = ctypes.CDLL(lib).probe
    probe.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int] * 3
    rc = probe(a.data_ptr(), b.data_ptr(), d.data_ptr(), raw.data_ptr(), offset, span, set_base)
    out = {"span": span, "offset": offset, "base_offset": set_base, "rc": rc}
    if rc:
        return out
    ref = torch.matmul(a.float(), b.float().T)
    err = (d - ref).abs().max().item()
    out["max_abs_err"] = err
    out["correct"] = bool(torch.allclose(d, ref, rtol=1e-3, atol=1e-2))
    out["tma_pattern"] = pattern(raw.cpu().numpy().tobytes(), a.cpu().view(torch.uint8).numpy().tobytes(), offset, span)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="probe.so built from benchmarks/swizzle_align/probe.cu")
    ap.add_argument("--json", help="write the rows here too")
    ap.add_argument("--offsets", type=int, nargs="+", default=list(OFFSETS), help="start offsets to try (bytes)")
    ap.add_argument("--case", nargs=3, type=int, metavar=("SPAN", "OFFSET", "BASE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        print(json.dumps(run_case(args.lib, *args.case)))
        return
    import torch

    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, CUDA {torch.version.cuda}")
    rows = []
    for span in SPANS:
        for offset in args.offsets:
            for set_base in (0, 1):
                cmd = [sys.executable, __file__, "--lib", args.lib, "--case", str(span), str(offset), str(set_base)]
                try:
                    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
                    line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
                    row = json.loads(line) if line.startswith("{") else {"error": done.stderr.strip()[-300:]}
                except subprocess.TimeoutExpired:
                    row = {"error": "timed out (60 s)"}
                row.update(span=span, offset=offset, base_offset=set_base)
                rows.append(row)
    print()
    print(
        "| swizzle | start (B from a 1,024 B boundary) | start mod atom | base offset field | result vs torch.matmul | max abs error | TMA wrote the swizzle of |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        base = "(addr >> 7) & 7" if r["base_offset"] else "0"
        if "error" in r or r.get("rc"):
            res, err, pat = f"failed: {r.get('error') or 'rc ' + str(r['rc'])}", "-", "-"
        else:
            res = "correct" if r["correct"] else "WRONG"
            err, pat = f"{r['max_abs_err']:.3g}", r["tma_pattern"]
        print(f"| {r['span']}B | {r['offset']:,} | {r['offset'] % ATOM[r['span']]} | {base} | {res} | {err} | {pat} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Joins kiln's GPU bench (benches/h200.rs) with its PyTorch peers (scripts/gpu-bench.py) and
prints one Markdown table of speed ratios, peer_ms / kiln_ms (above 1: kiln is faster).

    python3 scripts/gpu_ratios.py KILN.jsonl [KILN2.jsonl ...] -- TORCH.jsonl [TORCH2.jsonl ...]

kiln's case names end in " [ENGINE]" (or " [ENGINE variant]"); the peers' either match kiln's
name without it (cuBLAS/cuDNN through aten: matmul, conv, conv gradients) or add
" torch-<peer>" (flash, cudnn, eager, compile, copy: a device copy of the same bytes). Only kiln's first engine per case is used
unless --all-engines is given. Standard library only: it runs on the GPU machine (run.sh).
"""
from __future__ import annotations

import json
import re
import sys


def read(paths: list[str]) -> list[dict]:
    rows = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    return [r for r in rows if "case" in r and "ms" in r and r["ms"] > 0]


def normalise(case: str) -> str:
    return case.replace("causal=False", "causal=false").replace("causal=True", "causal=true")


def main(argv: list[str]) -> int:
    all_engines = "--all-engines" in argv
    argv = [a for a in argv if a != "--all-engines"]
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    split = argv.index("--")
    kiln, torch = read(argv[:split]), read(argv[split + 1:])
    peers: dict[str, dict[str, float]] = {}
    for r in torch:
        m = re.match(r"(.*) torch-(\w+)$", r["case"])
        name, peer = (m.group(1), m.group(2)) if m else (r["case"], "aten")
        peers.setdefault(normalise(name), {})[peer] = r["ms"]
    order = ["aten", "flash", "cudnn", "eager", "compile", "copy"]
    seen: set[str] = set()
    print("| case | kiln engine | kiln ms | kiln TFLOP/s or TB/s | " + " | ".join(
        f"vs {p}" for p in order) + " |")
    print("|---|---|---|---|" + "---|" * len(order))
    for r in kiln:
        m = re.match(r"(.*?) \[(.*)\]$", r["case"])
        name, engine = (m.group(1), m.group(2)) if m else (r["case"], "")
        name = normalise(name)
        if not all_engines and name in seen:
            continue
        seen.add(name)
        got = peers.get(name, {})
        if not got:
            continue
        rate = f"{r['tflops']:.1f} TF" if r.get("tflops") else f"{r.get('tbps', 0):.2f} TB/s"
        cells = [f"{got[p] / r['ms']:.2f}" if p in got else "" for p in order]
        print(f"| {name} | {engine} | {r['ms']:.4f} | {rate} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

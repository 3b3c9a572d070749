"""Runner speed and timing noise on a CUDA device; prints a Markdown report.

    python3 benchmarks/runner.py [--out DIR] [--batch 32] [--skip-load-inline-batch]

Measures, on the problem tests/references/add_large.py (fp32 (4096, 4096) + (4096, 4096)):
1. compile time per backend, cold (empty cache) and cached (same source again);
2. evaluations per minute for a batch of distinct candidates, NVRTC and load_inline (cold
   builds), against building the load_inline sources one after another with plain
   `load_inline` as KernelBench does (measured on 2 sources, extrapolated to the batch);
3. NVRTC end to end: `gpurunner.evaluate` wall time, 10 calls, reference cached;
4. timing noise: the same kernel measured 10 times by `gpurunner.timing.bench` and by
   `triton.testing.do_bench`, spread = (max - min) / median of the 10 medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpurunner import EvalOptions, evaluate, evaluate_batch  # noqa: E402

REFERENCE = (ROOT / "tests/references/add_large.py").read_text()


def candidate(name: str) -> str:
    return (ROOT / "tests/candidates" / f"{name}.py").read_text()


def variant(source: str, i: int) -> str:
    """A distinct source (own build, own cache entry) that computes the same thing."""
    return source.replace('"""\n', f'"""\n# variant {i}\n', 1) if i else source


def load_inline_variant(i: int) -> str:
    src = candidate("gpu_add_load_inline")
    return src.replace("__global__ void elementwise_add_kernel",
                       f"// variant {i}\n__global__ void elementwise_add_kernel", 1)


def nvrtc_variant(i: int) -> str:
    return candidate("gpu_add_nvrtc").replace('extern "C"', f'// variant {i}\nextern "C"', 1)


def options(cache: str, **kw) -> EvalOptions:
    return EvalOptions(device="cuda", cache_dir=cache, compile_baseline=False,
                       timeout_s=120.0, **kw)


def compile_times() -> list[dict]:
    rows = []
    sources = {"nvrtc": candidate("gpu_add_nvrtc"), "triton": candidate("gpu_add_triton"),
               "cuda_cpp (load_inline)": candidate("gpu_add_load_inline"),
               "torch": "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                        "    def forward(self, a, b):\n        return torch.add(a, b)\n"}
    with tempfile.TemporaryDirectory() as cache:
        evaluate(REFERENCE, sources["torch"], options(cache))  # reference outputs cached first
        for name, src in sources.items():
            cold = evaluate(REFERENCE, src, options(cache))
            warm = evaluate(REFERENCE, src, options(cache))
            rows.append({"backend": name, "verdict": cold.verdict, "cold_compile_s": cold.compile_s,
                         "cached_compile_s": warm.compile_s, "cold_eval_s": cold.eval_s,
                         "cached_eval_s": warm.eval_s, "cand_ms": warm.cand_ms})
            print(rows[-1], flush=True)
    return rows


def batch(kind: str, n: int) -> dict:
    make = nvrtc_variant if kind == "nvrtc" else load_inline_variant
    sources = [make(i) for i in range(n)]
    with tempfile.TemporaryDirectory() as cache:
        evaluate(REFERENCE, sources[0] if kind == "nvrtc" else candidate("gpu_add_triton"),
                 options(cache))  # reference cached, as in a running search
        t0 = time.monotonic()
        verdicts = evaluate_batch(REFERENCE, sources, options(cache))
        wall = time.monotonic() - t0
    correct = sum(v.verdict == "correct" for v in verdicts)
    row = {"kind": kind, "n": n, "wall_s": wall, "per_minute": 60 * n / wall, "correct": correct,
           "verdicts": sorted({v.verdict for v in verdicts}),
           "reasons": sorted({v.reason[:120] for v in verdicts if v.verdict != "correct"}),
           "eval_s_median": statistics.median(v.eval_s or 0 for v in verdicts),
           "compile_s_median": statistics.median(v.compile_s or 0 for v in verdicts),
           "stages_last": verdicts[-1].stages_s}
    print(row, flush=True)
    return row


def plain_load_inline(n: int) -> dict:
    """KernelBench style: build each source with plain load_inline, one after another."""
    times = []
    for i in range(n):
        src = load_inline_variant(100 + i)
        with tempfile.TemporaryDirectory() as ext:
            code = textwrap.dedent(f"""
                import time, runpy, sys
                t = time.monotonic()
                runpy.run_path({str(Path(ext) / "cand.py")!r})
                print(time.monotonic() - t)
            """)
            (Path(ext) / "cand.py").write_text(src)
            env = dict(os.environ, TORCH_EXTENSIONS_DIR=ext)
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 env=env, check=True)
            times.append(float(out.stdout.strip().splitlines()[-1]))
    row = {"builds": n, "build_s": times, "mean_s": statistics.mean(times)}
    print(row, flush=True)
    return row


def nvrtc_end_to_end(reps: int = 10) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        src = candidate("gpu_add_nvrtc")
        evaluate(REFERENCE, src, options(cache))  # reference cached, spare worker started
        walls, cand = [], []
        for i in range(reps):
            t0 = time.monotonic()
            v = evaluate(REFERENCE, variant(src, i + 1), options(cache))
            walls.append(time.monotonic() - t0)
            cand.append(v.cand_ms)
            time.sleep(3.0)  # a search's proposer takes longer than this between batches
    med = statistics.median(cand)
    row = {"reps": reps, "median_s": statistics.median(walls), "max_s": max(walls),
           "walls": walls, "verdict": v.verdict, "stages_last": v.stages_s,
           "cand_ms_median": med, "cand_ms_spread_pct": 100 * (max(cand) - min(cand)) / med}
    print(row, flush=True)
    return row


def noise(reps: int = 10) -> dict:
    import torch
    import triton.testing

    from gpurunner.timing import bench

    a = torch.randn(4096, 4096, device="cuda")
    b = torch.randn(4096, 4096, device="cuda")
    out = torch.empty_like(a)

    def fn() -> None:
        torch.add(a, b, out=out)

    ours = [bench(fn, device="cuda").median_ms for _ in range(reps)]
    theirs = [triton.testing.do_bench(fn, return_mode="median") for _ in range(reps)]

    def spread(xs: list[float]) -> float:
        return 100 * (max(xs) - min(xs)) / statistics.median(xs)

    row = {"ours_ms": ours, "ours_spread_pct": spread(ours), "do_bench_ms": theirs,
           "do_bench_spread_pct": spread(theirs)}
    print(row, flush=True)
    return row


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--plain", type=int, default=2, help="plain load_inline builds to time")
    p.add_argument("--only", default="noise,compile,e2e,nvrtc,load_inline,plain")
    args = p.parse_args()
    only = set(args.only.split(","))
    results: dict = {}
    import torch

    results["device"] = torch.cuda.get_device_name(0)
    results["cores"] = os.cpu_count()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sections = [("noise", "noise", noise), ("compile", "compile", compile_times),
                ("e2e", "nvrtc_end_to_end", nvrtc_end_to_end),
                ("nvrtc", "batch_nvrtc", lambda: batch("nvrtc", args.batch)),
                ("load_inline", "batch_load_inline", lambda: batch("load_inline", args.batch)),
                ("plain", "plain_load_inline", lambda: plain_load_inline(args.plain))]
    for flag, key, fn in sections:
        if flag in only:
            results[key] = fn()
            # Written after every section: a run cut short keeps what it measured.
            (out / "runner_bench.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

"""Runner speed and timing noise; prints what it measured and writes runner_bench.json.

    python3 benchmarks/runner.py [--out DIR] [--batch 32] [--only SECTIONS]     (CUDA)
    python3 benchmarks/runner.py --device cpu --only paired_noise                 (any host)
    python3 benchmarks/runner.py --device cpu --kernelbench DIR [--names a,b] [--out DIR]

Measures, on the problem tests/references/add_large.py (fp32 (4096, 4096) + (4096, 4096)):
1. compile time per backend, cold (empty cache) and cached (same source again);
2. evaluations per minute for a batch of distinct candidates, NVRTC and load_inline (cold
   builds), against building the load_inline sources one after another with plain
   `load_inline` as KernelBench does (measured on 2 sources, extrapolated to the batch);
3. NVRTC end to end: `gpurunner.evaluate` wall time, 10 calls, reference cached;
4. timing noise: the same kernel measured 10 times by `gpurunner.timing.bench` and by
   `triton.testing.do_bench`, spread = (max - min) / median of the 10 medians.
5. paired noise (`paired_noise`, any device): the identity candidate (`class ModelNew(Model):
   pass`) evaluated 10 times on examples/softmax.py while two other processes keep two cores
   busy; goal: every speedup within [0.9, 1.1] on the CPU ([0.98, 1.02] on a GPU) or marked
   noisy.
6. KernelBench sweep (`--kernelbench DIR`): for each reference, `check`, then the identity
   candidate: validated, verdict, speedup and its interval, wall time, peak disk and memory
   taken (host, and GPU on CUDA). Resumable: problems already in kernelbench.json are skipped.
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


def identity(reference: str) -> str:
    """The identity candidate: the reference itself, with ModelNew = Model."""
    return reference + "\n\nclass ModelNew(Model):\n    pass\n"


def paired_noise(device: str, reps: int = 10, busy: int = 2) -> dict:
    """The identity candidate evaluated `reps` times while `busy` processes spin."""
    reference = (ROOT / "examples/softmax.py").read_text()
    bound = (0.98, 1.02) if device.startswith("cuda") else (0.9, 1.1)
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(busy)]
    rows = []
    try:
        with tempfile.TemporaryDirectory() as cache:
            opts = EvalOptions(device=device, cache_dir=cache, compile_baseline=False)
            for _ in range(reps):
                v = evaluate(reference, identity(reference), opts)
                rows.append({"verdict": v.verdict, "speedup": v.speedup,
                             "speedup_ci": v.speedup_ci, "noisy": v.noisy, "ref_ms": v.ref_ms,
                             "cand_ms": v.cand_ms, "eval_s": v.eval_s})
                print(rows[-1], flush=True)
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    inside = [r for r in rows if r["speedup"] and bound[0] <= r["speedup"] <= bound[1]]
    outside_plain = [r for r in rows if r not in inside and not r["noisy"]]
    row = {"device": device, "busy_processes": busy, "bound": bound, "runs": rows,
           "within_bound": len(inside), "noisy": sum(r["noisy"] for r in rows),
           "outside_and_not_noisy": len(outside_plain), "goal_met": not outside_plain}
    print({k: v for k, v in row.items() if k != "runs"}, flush=True)
    return row


class _Peaks:
    """Samples, in a thread, the disk space used under the temporary folder and the host (and
    GPU) memory in use, and keeps the largest rise over the start."""

    def __init__(self, device: str):
        import threading

        self.device = device
        self.base = self._sample()
        self.peak = dict(self.base)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> dict:
        st = os.statvfs(tempfile.gettempdir())
        info = Path("/proc/meminfo").read_text()
        kb = {line.split(":")[0]: int(line.split()[1]) for line in info.splitlines()}
        got = {"disk": (st.f_blocks - st.f_bfree) * st.f_frsize,
               "mem": (kb["MemTotal"] - kb["MemAvailable"]) * 1024}
        if self.device.startswith("cuda"):
            out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used",
                                  "--format=csv,noheader,nounits"], capture_output=True,
                                 text=True).stdout.split()
            got["gpu"] = int(out[0]) * 2**20 if out else 0
        return got

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            for k, v in self._sample().items():
                self.peak[k] = max(self.peak[k], v)

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        return {f"peak_{k}_mb": round((self.peak[k] - self.base[k]) / 2**20, 1)
                for k in self.base}


def kernelbench(folder: Path, device: str, out: Path, names: set[str] | None) -> dict:
    """check, then the identity candidate, for every reference under `folder`."""
    from gpurunner import check_reference

    path = out / "kernelbench.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    cache = str(out / "kernelbench-cache")
    for ref_path in sorted(folder.rglob("*.py")):
        key = str(ref_path.relative_to(folder))
        if key in results or (names and ref_path.stem not in names and key not in names):
            continue
        source = ref_path.read_text()
        t0 = time.monotonic()
        peaks = _Peaks(device)
        report = check_reference(source, device=device)
        row: dict = {"validated": report.ok, "check_s": round(time.monotonic() - t0, 2)}
        if not report.ok:
            row["error"] = report.error
        else:
            t1 = time.monotonic()
            v = evaluate(source, identity(source), EvalOptions(
                device=device, cache_dir=cache, compile_baseline=False, timeout_s=600.0))
            row.update(verdict=v.verdict, reason=v.reason[:300], speedup=v.speedup,
                       speedup_ci=v.speedup_ci, noisy=v.noisy, ref_ms=v.ref_ms,
                       cand_ms=v.cand_ms, evaluate_s=round(time.monotonic() - t1, 2))
        row.update(peaks.stop())
        row["wall_s"] = round(time.monotonic() - t0, 2)
        results[key] = row
        print(key, row, flush=True)
        path.write_text(json.dumps(results, indent=2))  # resumable after every problem
    return results


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    p.add_argument("--device", default="cuda")
    p.add_argument("--kernelbench", type=Path, default=None,
                   help="a KernelBench folder: sweep its references (check + identity)")
    p.add_argument("--names", default="", help="with --kernelbench: only these problems")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--plain", type=int, default=2, help="plain load_inline builds to time")
    p.add_argument("--only", default="paired_noise,noise,compile,e2e,nvrtc,load_inline,plain")
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.kernelbench:
        names = set(filter(None, args.names.split(","))) or None
        kernelbench(args.kernelbench, args.device, out, names)
        return
    only = set(args.only.split(","))
    results: dict = {}
    import torch

    results["device"] = (torch.cuda.get_device_name(0) if args.device.startswith("cuda")
                         else "cpu")
    results["cores"] = os.cpu_count()
    sections = [("paired_noise", "paired_noise", lambda: paired_noise(args.device)),
                ("noise", "noise", noise), ("compile", "compile", compile_times),
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

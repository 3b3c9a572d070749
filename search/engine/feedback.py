"""What a proposer learns from the search so far, as data and as text for prompts.

Every tried idea carries the outcome of each implementation: verdict and failed checks, the
compiler error, max error, timings, speedups over eager and torch.compile, roofline percent.
"""

from __future__ import annotations

import re
from typing import Any

from search.engine.speedups import Speedup, speedup_of
from search.engine.types import CATEGORIES, Node, TriedIdea
from search.engine.verdicts import first_lines

# A traceback frame in the candidate's own file (the runner writes it as candidate.py in the
# job's directory; the harness's module of the same name lives in gpurunner/).
_CANDIDATE_FRAME = re.compile(r'^\s*File "(?![^"]*/gpurunner/)[^"]*/candidate\.py", line (\d+), in (\S+)\s*$')
# Absolute paths of this server's files: only their last part means anything to the model.
_PATH = re.compile(r'(?<![\w.:/])/(?:[\w.+@-]+/)+([\w.+@-]+)')


def without_paths(text: str) -> str:
    """Text with every absolute path reduced to its file name (server paths stay here)."""
    return _PATH.sub(r"\1", text or "")


def candidate_frames(traceback_text: str) -> list[str]:
    """The frames of a traceback that are in the candidate's own file, with their code line:
    `candidate.py line 12, in forward: y = x @ w`. The harness's frames are left out."""
    lines = (traceback_text or "").splitlines()
    frames = []
    for i, line in enumerate(lines):
        match = _CANDIDATE_FRAME.match(line)
        if match:
            code = lines[i + 1].strip() if i + 1 < len(lines) and not lines[i + 1].lstrip().startswith("File ") else ""
            frames.append(f"candidate.py line {match.group(1)}, in {match.group(2)}" + (f": {code}" if code else ""))
    return frames


def error_for_model(kernel: Node) -> str:
    """Why a kernel failed, as the model should read it: the verdict's one-line reason (the
    candidate's own exception), the compiler's errors, or the candidate's own frames of the
    traceback; never the harness's frames or this server's paths."""
    if kernel.status == "correct":
        return ""
    verdict = kernel.verdict or {}
    reason = (verdict.get("reason") or kernel.error or "").strip()
    if verdict.get("compile_log"):
        detail = first_lines(verdict["compile_log"], 8, 1200)
    else:
        detail = "\n".join(candidate_frames(verdict.get("error") or "")[-4:])
    # The compiler's first error is often the reason itself: each line is said once.
    text = "\n".join([reason] + [line for line in detail.splitlines() if line.strip() and line.strip() not in reason])
    return without_paths(first_lines(text, 10, 1500))


def outcome_of(kernel: Node) -> dict[str, Any]:
    """One implementation's outcome, the way the proposer sees it."""
    verdict = kernel.verdict or {}
    failed = [
        f"{c.get('name')}: {c.get('detail')}".rstrip(": ")
        for c in verdict.get("checks", [])
        if isinstance(c, dict) and not c.get("passed", True)
    ]
    return {
        "key": kernel.key,
        "status": kernel.status,
        **speedup_of(kernel).to_dict(),
        "cand_ms": kernel.cand_ms,
        "ref_ms": verdict.get("ref_ms"),
        "failed_checks": failed,
        "error": error_for_model(kernel),
        "max_abs_err": verdict.get("max_abs_err"),
        "rel_err": verdict.get("rel_err"),
        "roofline_pct": verdict.get("roofline_pct"),
        "precision": verdict.get("precision"),
        "backend": kernel.backend,
    }


def tried_ideas(nodes: list[Node], before_round: int | None = None) -> list[TriedIdea]:
    """Every idea in the tree (of rounds before `before_round`, if given) with its outcomes."""
    kernels_by_parent: dict[int | None, list[Node]] = {}
    for node in nodes:
        if node.kind == "kernel":
            kernels_by_parent.setdefault(node.parent_id, []).append(node)
    history = []
    for node in nodes:
        if node.kind != "idea" or not node.idea:
            continue
        if before_round is not None and node.round >= before_round:
            continue
        outcomes = [outcome_of(k) for k in kernels_by_parent.get(node.id, [])]
        history.append(TriedIdea(node.round, node.idea, node.category, outcomes))
    return history


def unexplored_categories(history: list[TriedIdea]) -> list[str]:
    """Categories (keys of CATEGORIES) that no tried idea belongs to yet."""
    tried = {t.category for t in history}
    return [c for c in CATEGORIES if c not in tried]


def _num(value: Any, fmt: str) -> str | None:
    return None if value is None else format(value, fmt)


def render_outcome(outcome: dict[str, Any]) -> str:
    """One line (plus an error excerpt) describing how an implementation fared."""
    parts = [outcome.get("status", "?")]
    speedup = Speedup.from_json(outcome)
    for which, what in (("eager", "eager"), ("compile", "torch.compile")):
        if speedup.value(which) is not None:
            parts.append(f"{speedup.text(which, 'x', short=True)} {what}{speedup.note(which)}")
    if outcome.get("cand_ms") is not None:
        parts.append(f"{outcome['cand_ms']:.4g} ms")
    if outcome.get("roofline_pct") is not None:
        parts.append(f"{outcome['roofline_pct']:.0f}% of roofline")
    if outcome.get("max_abs_err") is not None:
        parts.append(f"max abs err {outcome['max_abs_err']:.2g}")
    if outcome.get("rel_err") is not None:
        parts.append(f"rel err {outcome['rel_err']:.2g}")
    if outcome.get("precision"):
        parts.append(f"precision {outcome['precision']}")
    if outcome.get("backend"):
        parts.append(f"backend {outcome['backend']}")
    line = ", ".join(parts)
    if outcome.get("failed_checks"):
        line += "; failed checks: " + "; ".join(outcome["failed_checks"])
    if outcome.get("error"):
        line += "\n      error: " + outcome["error"].replace("\n", "\n      ")
    return line


def render_history(history: list[TriedIdea]) -> str:
    """Every tried idea and its outcomes as plain text, oldest first."""
    if not history:
        return "No ideas have been tried yet."
    lines = []
    for tried in history:
        label = CATEGORIES.get(tried.category, tried.category or "uncategorised")
        lines.append(f"- Round {tried.round} [{label}] {tried.text}")
        if not tried.outcomes:
            lines.append("    (not evaluated yet)")
        for i, outcome in enumerate(tried.outcomes):
            lines.append(f"    implementation {i + 1}: {render_outcome(outcome)}")
    return "\n".join(lines)


def render_measurements(kernel: Node) -> str:
    """A kernel's measurements in one line (the reference reads as the eager baseline)."""
    if kernel.kind == "reference":
        ms = _num(kernel.cand_ms, ".4g")
        return f"the reference (eager PyTorch){f', {ms} ms' if ms else ''}"
    return render_outcome(outcome_of(kernel))


def render_profile(verdict: dict[str, Any], top: int = 8) -> str:
    """Where a kernel's time goes (the runner's profile of one call), slowest operators first."""
    profile = verdict.get("profile") or {}
    ops = profile.get("ops") or {}
    total = float(profile.get("total_us") or sum(ops.values()) or 0.0)
    if not ops or total <= 0:
        return ""
    ranked = sorted(ops.items(), key=lambda kv: -kv[1])[:top]
    return "Time per operator in one call: " + ", ".join(
        f"{name} {us:.1f} us ({100 * us / total:.0f}%)" for name, us in ranked)


def render_kernels(verdict: dict[str, Any], top: int = 8) -> str:
    """Each GPU kernel's registers, local memory (spills) and shared memory from its compiled
    code, with Nsight Compute's counters for one call where the runner had them."""
    from gpurunner.kernel_resources import describe

    rows = [r for r in verdict.get("kernels") or [] if isinstance(r, dict) and r.get("name")]
    if not rows:
        return ""
    counted = any("duration_us" in r for r in rows)
    head = ("Per kernel (registers and local memory as ptxas compiled them; Nsight Compute's "
            "counters for one call, caches flushed and clocks at base):" if counted else
            "Per kernel (registers and local memory as ptxas compiled them):")
    lines = [head] + [f"- {describe(r)}" for r in rows[:top]]
    if verdict.get("kernels_note"):
        lines.append(f"(no Nsight Compute counters: {verdict['kernels_note']})")
    return "\n".join(lines)


def render_seeds(seeds: list[Node]) -> str:
    """The seed kernels, each with its measurements, time breakdown, per-kernel figures and
    full source."""
    blocks = []
    for i, seed in enumerate(seeds):
        details = [text for text in (render_profile(seed.verdict or {}),
                                     render_kernels(seed.verdict or {})) if text]
        blocks.append(f"### Seed {i + 1} ({seed.key}): {render_measurements(seed)}\n"
                      + "".join(f"{text}\n" for text in details)
                      + f"```python\n{seed.source.strip()}\n```")
    return "\n\n".join(blocks)


def _si(value: float, unit: str) -> str:
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor:
            return f"{value / factor:.4g} {prefix}{unit}"
    return f"{value:.4g} {unit}"


def render_hardware(hw: dict[str, Any]) -> str:
    """The device's facts as the runner reported them (gpurunner.hardware.describe)."""
    if not hw:
        return "(the runner reported no hardware facts)"
    if hw.get("kind") == "cuda":
        lines = [f"GPU: {hw.get('name')}, compute capability {hw.get('compute_capability')} "
                 f"({hw.get('sm')}{', ' + hw['architecture'] if hw.get('architecture') else ''})"]
        if hw.get("features"):
            lines.append(f"Architecture features: {hw['features']}")
        if hw.get("sm_count"):
            lines.append(f"{hw['sm_count']} SMs, {hw.get('max_threads_per_sm', '?')} threads per SM, "
                         f"warp size {hw.get('warp_size', 32)}")
        if hw.get("registers_per_sm"):
            lines.append(f"Registers: {hw['registers_per_sm']} 32-bit per SM")
        if hw.get("shared_memory_per_sm"):
            lines.append(f"Shared memory: {hw['shared_memory_per_sm'] // 1024} KiB per SM, "
                         f"{hw.get('shared_memory_per_block', 0) // 1024} KiB per block by default, "
                         f"{hw.get('shared_memory_per_block_optin', 0) // 1024} KiB per block opted in")
        if hw.get("l2_bytes"):
            lines.append(f"L2 cache: {hw['l2_bytes'] / 2**20:.0f} MiB")
        if hw.get("memory_bytes"):
            bw = (f", {_si(hw['measured_bandwidth'], 'B/s')} measured copy bandwidth "
                  f"({_si(hw['peak_bandwidth'], 'B/s')} peak)") if hw.get("measured_bandwidth") else ""
            lines.append(f"Device memory: {hw['memory_bytes'] / 2**30:.0f} GiB{bw}")
        if hw.get("flops_bf16"):
            lines.append(f"Measured arithmetic: {_si(hw['flops_fp32'], 'FLOP/s')} fp32, "
                         f"{_si(hw['flops_tf32'], 'FLOP/s')} tf32, {_si(hw['flops_bf16'], 'FLOP/s')} bf16")
        versions = [f"CUDA {hw['cuda']}" if hw.get("cuda") else "", f"torch {hw.get('torch')}",
                    f"Triton {hw['triton']}" if hw.get("triton") else ""]
    else:
        lines = [f"CPU: {hw.get('name')}, {hw.get('cores')} cores available, "
                 f"{hw.get('threads')} torch threads"]
        if hw.get("vector_isa"):
            lines.append(f"Vector ISA: {', '.join(hw['vector_isa'])} (torch dispatches "
                         f"{hw.get('torch_cpu_capability')})")
        versions = [f"torch {hw.get('torch')}"]
    lines.append("Software: " + ", ".join(v for v in versions if v))
    return "\n".join(f"- {line}" for line in lines)


def roofline_floor_ms(info: dict[str, Any]) -> tuple[float, str] | None:
    """The least time the reference's bytes and FLOPs allow on this device, and the rate used
    (None when the device's ceilings are not known): a target to approach, never to beat."""
    hw = info.get("hardware") or {}
    bw = hw.get("measured_bandwidth")
    if not bw or not (info.get("bytes") or info.get("flops")):
        return None
    half = any("16" in str(d) for d in info.get("input_dtypes") or [])
    kind = "bf16" if half else "fp32"
    rate = hw.get(f"flops_{kind}") or float("inf")
    return 1e3 * max(float(info.get("bytes") or 0) / bw, float(info.get("flops") or 0) / rate), kind


def render_reference_info(info: dict[str, Any]) -> str:
    """Shapes, dtypes, operators and roofline inputs of the reference, as a few lines."""
    lines = []
    if info.get("input_shapes"):
        pairs = zip(info.get("input_shapes", []), info.get("input_dtypes", []) or [""] * 99, strict=False)
        lines.append("inputs: " + ", ".join(f"{d} {list(s)}".strip() for s, d in pairs))
    if info.get("output_shapes"):
        pairs = zip(info.get("output_shapes", []), info.get("output_dtypes", []) or [""] * 99, strict=False)
        lines.append("outputs: " + ", ".join(f"{d} {list(s)}".strip() for s, d in pairs))
    if info.get("init_inputs"):
        lines.append(f"constructor arguments: {info['init_inputs']}")
    if info.get("operators"):
        lines.append("operators: " + ", ".join(info["operators"]))
    if info.get("flops"):
        lines.append(f"FLOPs per call: {info['flops']:.4g}")
    if info.get("bytes"):
        lines.append(f"bytes moved at least: {info['bytes']:.4g}")
    floor = roofline_floor_ms(info)
    if floor is not None:
        lines.append(f"roofline floor: {floor[0]:.4g} ms (those bytes at the measured bandwidth, or those "
                     f"FLOPs at the measured {floor[1]} rate, whichever is longer)")
    if info.get("eager_ms"):
        compiled = f"; torch.compile {info['compile_ms']:.4g} ms" if info.get("compile_ms") else ""
        lines.append(f"time per call: eager PyTorch {info['eager_ms']:.4g} ms{compiled}")
    elif isinstance(info.get("eager_ms_estimate"), int | float) and info["eager_ms_estimate"] > 0:
        lines.append(f"time per call: eager PyTorch about {info['eager_ms_estimate']:.4g} ms "
                     "(a few calls timed when the reference was checked; the runner's paired "
                     "measurement, and torch.compile's, come with the first candidates)")
    else:
        lines.append("time per call: not measured yet (the runner times the reference with the first "
                     "candidates)")
    return "\n".join(lines) or "(no measurements of the reference)"

"""Pure comparisons of a candidate's outputs with the reference's: no processes, no state.

Every function returns `Check`s (name, passed, detail) so each outcome is shown to the user.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gpurunner.report import Check

# Checks whose failure means the values are wrong (verdict `incorrect`); every other failed
# check means the values were right but a rule was broken (verdict `rejected`).
CORRECTNESS_CHECKS = ("output_count", "shape_dtype", "plain_outputs", "finite", "allclose",
                      "relative_norm", "timed_outputs")


@dataclass
class Comparison:
    """The outcome of comparing one call's outputs: checks, worst absolute and relative error."""

    checks: list[Check]
    max_abs_err: float
    rel_err: float

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)


def _as_float(t: torch.Tensor) -> torch.Tensor:
    """float32 for float32 and narrower (differences of such values are exact enough),
    float64 otherwise."""
    if t.is_complex():
        t = torch.view_as_real(t)
    if t.dtype in (torch.float32, torch.float16, torch.bfloat16):
        return t.float()
    return t.double()


def compare_outputs(ref: list[torch.Tensor], out: list[torch.Tensor], atol: float, rtol: float,
                    device: str = "cpu") -> Comparison:
    """Compare one call's outputs with the reference's.

    Shapes and dtypes must match; NaN or Inf where the reference has none fails; values must
    pass `allclose` with the absolute tolerance capped by the output's own scale
    (`min(atol, rtol * max|ref|)`, so zeros do not pass for an output that is everywhere
    smaller than `atol`, e.g. a softmax over 4096 columns) and the relative norm error
    `||out - ref|| / ||ref||` must be at most `rtol`.
    """
    checks: list[Check] = []
    if len(ref) != len(out):
        checks.append(Check("output_count", False,
                            f"{len(out)} outputs where the reference returns {len(ref)}"))
        return Comparison(checks, float("inf"), float("inf"))
    max_abs, worst_rel = 0.0, 0.0
    shape_ok, finite_ok, close_ok, norm_ok = True, True, True, True
    shape_msg, finite_msg, close_msg, norm_msg = [], [], [], []
    for i, (r, o) in enumerate(zip(ref, out, strict=True)):
        if not isinstance(o, torch.Tensor):
            shape_ok = False
            shape_msg.append(f"output {i} is a {type(o).__name__}, not a tensor")
            continue
        if tuple(r.shape) != tuple(o.shape) or r.dtype != o.dtype:
            shape_ok = False
            shape_msg.append(f"output {i} is {tuple(o.shape)} {o.dtype}, expected "
                             f"{tuple(r.shape)} {r.dtype}")
            continue
        rd, od = _as_float(r.detach().to(device)), _as_float(o.detach().to(device))
        ref_all_finite = bool(torch.isfinite(rd).all())
        if ref_all_finite and not bool(torch.isfinite(od).all()):
            finite_ok = False
            n_bad = int((~torch.isfinite(od)).sum())
            finite_msg.append(f"output {i} has {n_bad} NaN/Inf values where the reference is finite")
            max_abs, worst_rel = float("inf"), float("inf")
            continue
        if ref_all_finite:  # the common case, in few passes over large outputs
            same_nonfinite, rf, of = True, rd.reshape(-1), od.reshape(-1)
        else:
            ref_finite = torch.isfinite(rd)
            bad = ~torch.isfinite(od) & ref_finite
            if bool(bad.any()):
                finite_ok = False
                finite_msg.append(f"output {i} has {int(bad.sum())} NaN/Inf values where the "
                                  "reference is finite")
                max_abs, worst_rel = float("inf"), float("inf")
                continue
            # Non-finite reference values must be matched exactly (NaN by NaN, Inf by Inf).
            same_nonfinite = bool(torch.equal(rd[~ref_finite].nan_to_num(),
                                              od[~ref_finite].nan_to_num()))
            rf, of = rd[ref_finite], od[ref_finite]
        if rf.numel() == 0:
            continue
        diff = (of - rf).abs_()
        err = float(diff.max())
        ref_abs = rf.abs()
        scale = float(ref_abs.max())
        eff_atol = min(atol, rtol * scale) if scale > 0 else atol
        tol = ref_abs.mul_(rtol).add_(eff_atol)
        over = diff > tol
        ok = not bool(over.any()) and same_nonfinite
        ref_norm = float(torch.linalg.vector_norm(rf))
        rel = float(torch.linalg.vector_norm(diff)) / ref_norm if ref_norm > 0 else (
            0.0 if err == 0 else float("inf"))
        max_abs, worst_rel = max(max_abs, err), max(worst_rel, rel)
        if not ok:
            close_ok = False
            n_bad = int(over.sum())
            close_msg.append(f"output {i}: {n_bad} of {rf.numel()} values off by more than "
                             f"atol={eff_atol:.3g} + rtol={rtol:g}*|ref| (max abs error {err:.3g})")
        if ref_norm > 0 and rel > rtol:
            norm_ok = False
            norm_msg.append(f"output {i}: relative norm error {rel:.3g} > {rtol:g}")
    checks.append(Check("shape_dtype", shape_ok, "; ".join(shape_msg) or "shapes and dtypes match"))
    if shape_ok:
        checks.append(Check("finite", finite_ok, "; ".join(finite_msg) or "no NaN/Inf"))
        checks.append(Check("allclose", close_ok, "; ".join(close_msg) or
                            f"within atol={atol:g} (capped by output scale), rtol={rtol:g}"))
        checks.append(Check("relative_norm", norm_ok, "; ".join(norm_msg) or
                            f"relative norm error {worst_rel:.3g} <= {rtol:g}"))
    else:
        max_abs, worst_rel = float("inf"), float("inf")
    return Comparison(checks, max_abs, worst_rel)


def merge_trials(comparisons: list[Comparison]) -> Comparison:
    """One Comparison for all trials: a check passes only if it passed in every trial;
    the detail names the first failing trial."""
    merged: dict[str, Check] = {}
    for n, comp in enumerate(comparisons):
        for c in comp.checks:
            if c.name not in merged:
                merged[c.name] = Check(c.name, c.passed, c.detail)
            if not c.passed and merged[c.name].passed:
                merged[c.name] = Check(c.name, False, f"trial {n + 1}: {c.detail}")
            elif not c.passed and not merged[c.name].detail.startswith("trial"):
                merged[c.name].detail = f"trial {n + 1}: {c.detail}"
    if merged and all(c.passed for c in merged.values()):
        for c in merged.values():
            c.detail = f"{len(comparisons)} trials: {c.detail}"
    max_abs = max((c.max_abs_err for c in comparisons), default=0.0)
    rel = max((c.rel_err for c in comparisons), default=0.0)
    return Comparison(list(merged.values()), max_abs, rel)


def inputs_unchanged(mutated: list[int]) -> Check:
    """The input-mutation check from the indices of inputs the candidate changed in place."""
    if mutated:
        return Check("inputs_unchanged", False,
                     f"the candidate changed input(s) {sorted(set(mutated))} in place")
    return Check("inputs_unchanged", True, "no input changed in place")


def host_cross_check(event_ms: float, host_ms: float | None) -> Check:
    """Events on the current stream against the host clock around call + device-wide sync.

    Both are taken around the same calls started on an idle device, so they differ by the
    sync overhead only; work launched on another stream finishes after the end event and the
    host time then exceeds the event time by more than 30% + 0.03 ms."""
    if host_ms is None:
        return Check("side_stream_work", True, "not applicable on the CPU")
    ok = host_ms <= 1.3 * event_ms + 0.03
    detail = (f"host {host_ms:.4f} ms vs events {event_ms:.4f} ms")
    if not ok:
        detail += ": work ran outside the timed stream"
    return Check("side_stream_work", ok, detail)

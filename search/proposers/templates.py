"""Prompts for model-backed proposers, rendered from the template files in prompts/."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template

from search.engine import feedback
from search.engine.types import CATEGORIES, Idea, Node, ProposalContext

PROMPTS = Path(__file__).with_name("prompts")

POLICIES = {
    "any": "anything faster counts (framework-level changes are allowed).",
    "custom-kernels": "custom kernels only: the candidate's own kernels must do the work, "
                      "no falling back to the reference's torch operators.",
}


@cache
def template(name: str) -> Template:
    """The prompt template `prompts/<name>.md` (placeholders are $names)."""
    return Template((PROMPTS / f"{name}.md").read_text())


def _device_kind(device: str) -> str:
    return "cuda" if device.startswith("cuda") else "cpu"


def tolerance_text(tolerance: float) -> str:
    """The correctness rule exactly as gpurunner.checks enforces it (atol = rtol = tolerance)."""
    return template("tolerance").safe_substitute(atol=f"{tolerance:g}", rtol=f"{tolerance:g}").strip()


def reask_prompt(error: str) -> str:
    """The follow-up after a malformed answer, quoting why it could not be read."""
    return template("reask").safe_substitute(error=error).strip()


def system_prompt() -> str:
    return template("system").template.strip()


def _common(ctx: ProposalContext) -> dict[str, str]:
    return {
        "reference": ctx.reference.strip(),
        "reference_info": feedback.render_reference_info(ctx.reference_info),
        "device": ctx.device,
        "device_notes": template(f"device_{_device_kind(ctx.device)}").template.strip(),
        "tolerance_text": tolerance_text(ctx.tolerance),
        "hardware": feedback.render_hardware(ctx.reference_info.get("hardware") or {}),
        "policy_text": POLICIES.get(ctx.policy, ctx.policy),
        "history": feedback.render_history(ctx.history),
    }


def ideas_prompt(ctx: ProposalContext, k: int) -> str:
    """The request for k ideas: reference, seed with measurements, every tried idea and outcome."""
    values = _common(ctx) | {
        "k": str(k),
        "seeds": feedback.render_seeds(ctx.seeds) or "(the reference itself)",
        "categories": "\n".join(f"- `{key}`: {label}" for key, label in CATEGORIES.items()),
        "unexplored": ", ".join(f"`{c}`" for c in ctx.unexplored_categories) or "none",
    }
    return template("ideas").safe_substitute(values)


def implement_prompt(ctx: ProposalContext, parent: Node, idea: Idea) -> str:
    """The request for one ModelNew file implementing an idea from its parent kernel."""
    values = _common(ctx) | {
        "parent_source": parent.source.strip(),
        "parent_measurements": feedback.render_measurements(parent),
        "idea": idea.text,
        "category_label": CATEGORIES.get(idea.category, idea.category),
        "examples": template(f"examples/{_device_kind(ctx.device)}").template.strip(),
    }
    return template("implement").safe_substitute(values)

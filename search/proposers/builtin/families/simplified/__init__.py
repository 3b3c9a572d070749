"""The reference's computation after the exact simplifications its graph shows (simplify.py),
written out as the aten calls that remain."""

from pathlib import Path

from search.proposers.builtin.analysis import ProblemShape
from search.proposers.builtin.families import Family
from search.proposers.builtin.families.common import need
from search.proposers.builtin.fusion.replay import replay_nodes
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.templating import fill


def render(recipe: Recipe, shape: ProblemShape) -> str:
    simplified = shape.simplified
    need(simplified is not None, "the graph shows no exact simplification")
    assert simplified is not None
    lines, names = replay_nodes(simplified.inputs, simplified.nodes)
    outputs = [names[o["ref"]] if isinstance(o, dict) and "ref" in o else repr(o) for o in simplified.outputs]
    result = outputs[0] if len(outputs) == 1 else "(" + ", ".join(outputs) + ",)"
    notes = "\n".join(f"    # - {note}" for note in simplified.notes)
    return fill(FAMILY.template("core.py.tmpl"), notes=notes,
                body="\n".join("    " + line for line in lines), result=result)


FAMILY = Family(
    core="simplified", title="The reference's computation, simplified exactly (rewritten from its graph)",
    devices=("cpu", "cuda"), backends=("torch",), render=render, folder=Path(__file__).parent,
    matches=lambda shape: shape.simplified is not None, owns_parameters=True,
)

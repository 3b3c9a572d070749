"""The reference's own forward under framework-level settings (precision, layout, compile)."""

from pathlib import Path

from search.proposers.builtin.families import Family
from search.proposers.builtin.templating import fill


def render(recipe, shape) -> str:
    return fill(FAMILY.template("core.py.tmpl"), compile=bool(recipe.options.get("compile")))


FAMILY = Family(core="reference", title="The reference computation under framework-level settings",
                devices=("cpu", "cuda"), backends=("torch",), render=render, folder=Path(__file__).parent,
                framework_options=True)

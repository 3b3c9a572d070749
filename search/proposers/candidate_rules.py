"""What a model-written candidate may not contain, checked before it is run or shown as a seed.

A candidate defines ModelNew; the reference's names belong to the harness. A file a model wrote
that redefines them or runs code under `__main__` is refused with the line that breaks the rule
(and the model is asked once more, told why). The built-in proposer's trusted files embed the
reference verbatim and are not held to this.
"""

from __future__ import annotations

import ast
from collections.abc import Collection

RESERVED = ("Model", "get_inputs", "get_init_inputs")


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    names = [node.test.left, *node.test.comparators]
    return any(isinstance(n, ast.Name) and n.id == "__name__" for n in names) and any(
        isinstance(n, ast.Constant) and n.value == "__main__" for n in names)


def reserved_names(source: str) -> set[str]:
    """The reserved names a file defines at module level (a built-in seed embeds the reference's)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = {n.name for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)}
    names |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    return names & set(RESERVED)


def broken_rule(source: str, allowed: Collection[str] = ()) -> str:
    """Why the candidate is refused, or "" when it may be run. `allowed` are reserved names the
    starting kernel already defines (kept when a model edits such a file). A file that does not
    parse is left to the runner, which reports the syntax error with its line."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    for node in tree.body:
        defined: list[str] = []
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            defined = [node.name]
        elif isinstance(node, ast.Assign):
            defined = [t.id for t in node.targets if isinstance(t, ast.Name)]
        clash = [name for name in defined if name in RESERVED and name not in allowed]
        if clash:
            return (f"the candidate defines `{clash[0]}` (line {node.lineno}); a candidate defines only "
                    "`ModelNew` and its helpers: Model, get_inputs and get_init_inputs come from the reference")
        if _is_main_guard(node):
            return (f"the candidate runs code under `if __name__ == \"__main__\"` (line {node.lineno}); "
                    "a candidate file only defines ModelNew and its helpers")
    return ""

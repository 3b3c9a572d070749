"""Fill a template file: `${name}` fields and `#% if` blocks, so a candidate carries only the
code its recipe runs (no `if False:` branches for a user to read past).

A block is a line `#% if NAME` (or `#% if not NAME`), optional `#% else`, and `#% end`, each
alone on its line (indentation ignored); NAME is a field of the values, read as a truth value.
Blocks nest.
"""

from __future__ import annotations

import re
from string import Template
from typing import Any

_DIRECTIVE = re.compile(r"^\s*#% (if not |if |else|end)\s*(\w*)\s*$")


def fill(text: str, **values: Any) -> str:
    """`text` with its blocks resolved and its `${name}` fields substituted.

    Raises KeyError for a field or a block condition that `values` lacks, ValueError for an
    unbalanced block.
    """
    out: list[str] = []
    stack: list[tuple[bool, bool]] = []  # (this branch is kept, the enclosing block is kept)
    keep = True
    for line in text.splitlines(keepends=True):
        match = _DIRECTIVE.match(line)
        if match is None:
            if keep:
                out.append(line)
            continue
        word, name = match.group(1).strip(), match.group(2)
        if word in ("if", "if not"):
            condition = bool(values[name]) != (word == "if not")
            stack.append((condition, keep))
            keep = keep and condition
        elif not stack:
            raise ValueError(f"'#% {word}' without an open '#% if'")
        elif word == "else":
            condition, outer = stack[-1]
            stack[-1] = (not condition, outer)
            keep = outer and not condition
        else:
            _, keep = stack.pop()
    if stack:
        raise ValueError(f"{len(stack)} '#% if' block(s) without '#% end'")
    return Template("".join(out)).substitute(values)

"""The prefix of a fused program (what runs before its kernel) as Python: the same aten calls
the reference made, on the candidate's own parameters; and the operators that run after it."""

from __future__ import annotations

import re
from typing import Any

from search.proposers.builtin.fusion.program import Program, Unsupported


def replay(program: Program) -> tuple[list[str], dict[str, str]]:
    """(lines of `_run_core`, graph name -> Python expression) for the prefix and the inputs.

    Forward inputs come from `inputs`, parameters and buffers from `model.<target>`.
    """
    return replay_nodes(program.inputs, program.prefix)


def replay_nodes(inputs: list[dict[str, Any]], nodes: list[dict[str, Any]]) -> tuple[list[str], dict[str, str]]:
    """(lines, graph name -> Python expression) that compute `nodes` (graph-format operators) from
    the graph's `inputs`, as the same aten calls."""
    names: dict[str, str] = {}
    forward = [i for i in inputs if i["kind"] == "input"]
    lines = ([f"{_ident(forward[0]['name'])} = inputs[0]"] if len(forward) == 1 else
             [f"{', '.join(_ident(i['name']) for i in forward)} = inputs"] if forward else [])
    for i in forward:
        names[i["name"]] = _ident(i["name"])
    for i in inputs:
        if i["kind"] != "input":
            names[i["name"]] = "model" + "".join(f"[{part}]" if part.isdigit() else f".{part}"
                                                 for part in i["target"].split("."))
    lines += _calls(nodes, names)
    return lines, names


def finish(program: Program, names: dict[str, str], value: str) -> tuple[list[str], str]:
    """(lines, the returned expression) after the kernel produced `value`: the suffix's
    operators replayed on it (nothing when the kernel computes the forward's output)."""
    if not program.suffix:
        return [], value
    names = {**names, program.result: _ident(program.result)}
    lines = [f"{_ident(program.result)} = {value}"] + _calls(program.suffix, names)
    return lines, _ident(program.suffix[-1]["name"])


def _calls(nodes: list[dict[str, Any]], names: dict[str, str]) -> list[str]:
    lines = []
    for node in nodes:
        args = [_python(a, names) for a in node["args"]]
        kwargs = [f"{k}={_python(v, names)}" for k, v in (node.get("kwargs") or {}).items()]
        name = _ident(node["name"])
        if node["target"] == "getitem":
            lines.append(f"{name} = {args[0]}[{args[1]}]")
        else:
            lines.append(f"{name} = torch.ops.{node['target']}({', '.join(args + kwargs)})")
        names[node["name"]] = name
    return lines


def _ident(name: str) -> str:
    return name if name.isidentifier() else "t_" + "".join(c if c.isalnum() else "_" for c in name)


def _python(value: Any, names: dict[str, str]) -> str:
    if isinstance(value, dict):
        if "ref" in value:
            return names[value["ref"]]
        if "dtype" in value:
            return f"torch.{value['dtype']}"
        if "float" in value:
            return f"float({value['float']!r})"
        if "device" in value:
            return f"torch.device({value['device']!r})"
        if re.fullmatch(r"torch\.\w+", str(value.get("repr", ""))):  # a layout or memory format
            return value["repr"]
        raise Unsupported(f"the argument {value!r} cannot be written back")
    if isinstance(value, list):
        return "[" + ", ".join(_python(v, names) for v in value) + "]"
    return repr(value)

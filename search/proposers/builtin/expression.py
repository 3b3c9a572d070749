"""Read a reference's forward as a chain of elementwise float ops and write it as C.

The forward must be assignments to local names and one `return`, over its tensor arguments,
numbers and numeric attributes set in `__init__`, using only the operators and functions in
`_UNARY`/`_BINARY` (and `+ - * / **`, unary minus). Anything else is not an elementwise chain,
and `read_chain` returns None. The C text is the same for CUDA (NVRTC) and C++: one `float`
statement per local, then the result; inputs are `v0, v1, ...`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

# name -> C template over its argument {0}; the same spelling compiles in CUDA and C++.
_UNARY = {
    "relu": "({0} > 0.0f ? {0} : 0.0f)",
    "sigmoid": "(1.0f / (1.0f + expf(-({0}))))",
    "tanh": "tanhf({0})",
    "exp": "expf({0})",
    "log": "logf({0})",
    "sqrt": "sqrtf({0})",
    "rsqrt": "(1.0f / sqrtf({0}))",
    "abs": "fabsf({0})",
    "neg": "(-({0}))",
    "square": "(({0}) * ({0}))",
    "silu": "(({0}) / (1.0f + expf(-({0}))))",
    "softplus": "(({0}) > 20.0f ? ({0}) : log1pf(expf({0})))",
    "mish": "(({0}) * tanhf(({0}) > 20.0f ? ({0}) : log1pf(expf({0}))))",
    "gelu": "(0.5f * ({0}) * (1.0f + erff(({0}) * 0.70710678118654752f)))",
    "gelu_tanh": "(0.5f * ({0}) * (1.0f + tanhf(0.7978845608028654f * (({0}) + 0.044715f * ({0}) * ({0}) * ({0})))))",
    "hardsigmoid": "fminf(fmaxf(({0}) / 6.0f + 0.5f, 0.0f), 1.0f)",
    "hardswish": "(({0}) * fminf(fmaxf(({0}) + 3.0f, 0.0f), 6.0f) / 6.0f)",
    "selu": "(1.0507009873554805f * (({0}) > 0.0f ? ({0}) : 1.6732632423543772f * (expf({0}) - 1.0f)))",
}
_BINARY = {
    "add": "(({0}) + ({1}))", "sub": "(({0}) - ({1}))", "mul": "(({0}) * ({1}))",
    "div": "(({0}) / ({1}))", "maximum": "fmaxf({0}, {1})", "minimum": "fminf({0}, {1})",
}
_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_NAMESPACES = ("torch", "F", "torch.nn.functional", "nn.functional", "functional")


@dataclass
class Chain:
    """An elementwise forward as C: `statements` (one per local), then `result`."""

    inputs: list[str]
    statements: list[str] = field(default_factory=list)
    result: str = ""
    ops: list[str] = field(default_factory=list)  # the torch-level ops, in order, for idea texts


class _NotElementwise(Exception):
    pass


def read_chain(forward: ast.FunctionDef, constants: dict[str, float]) -> Chain | None:
    """The forward as an elementwise chain, or None. `constants` holds numeric `self.` attributes."""
    args = [a.arg for a in forward.args.args[1:]]
    if not args or forward.args.vararg or forward.args.kwarg:
        return None
    chain = Chain(inputs=args)
    names = {a: f"v{i}" for i, a in enumerate(args)}
    try:
        body = [s for s in forward.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        for stmt in body[:-1]:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)):
                return None
            local = f"t{len(chain.statements)}"
            chain.statements.append(f"const float {local} = {_c(stmt.value, names, constants, chain)};")
            names[stmt.targets[0].id] = local
        last = body[-1] if body else None
        if not isinstance(last, ast.Return) or last.value is None:
            return None
        chain.result = _c(last.value, names, constants, chain)
    except _NotElementwise:
        return None
    return chain if chain.ops else None


def _c(node: ast.AST, names: dict[str, str], constants: dict[str, float], chain: Chain) -> str:
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise _NotElementwise(node.id)
        return names[node.id]
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return _literal(node.value)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        if node.attr not in constants:
            raise _NotElementwise(node.attr)
        return _literal(constants[node.attr])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return f"(-({_c(node.operand, names, constants, chain)}))"
    if isinstance(node, ast.BinOp):
        left = _c(node.left, names, constants, chain)
        if isinstance(node.op, ast.Pow):
            return _power(left, node.right, chain)
        if type(node.op) not in _BINOPS:
            raise _NotElementwise(type(node.op).__name__)
        right = _c(node.right, names, constants, chain)
        chain.ops.append({"+": "add", "-": "sub", "*": "mul", "/": "div"}[_BINOPS[type(node.op)]])
        return f"({left} {_BINOPS[type(node.op)]} {right})"
    if isinstance(node, ast.Call):
        return _call(node, names, constants, chain)
    raise _NotElementwise(type(node).__name__)


def _call(node: ast.Call, names: dict[str, str], constants: dict[str, float], chain: Chain) -> str:
    func = node.func
    if not isinstance(func, ast.Attribute):
        raise _NotElementwise("call")
    owner = dotted(func.value)
    # torch.relu(x) / F.relu(x): the tensor is the first argument; x.relu(): it is the owner.
    if owner in _NAMESPACES:
        operands = list(node.args)
    else:
        operands = [func.value, *node.args]
    name = func.attr.rstrip("_") if func.attr.endswith("_") and not func.attr.startswith("_") else func.attr
    kw = {k.arg: k.value for k in node.keywords if k.arg}
    values = [_c(a, names, constants, chain) for a in operands]
    if name == "gelu" and _const(kw.get("approximate")) == "tanh":
        name = "gelu_tanh"
    if name in _UNARY and len(values) == 1 and set(kw) <= {"approximate", "inplace"}:
        chain.ops.append(name)
        return _UNARY[name].format(values[0])
    if name in _BINARY and len(values) == 2 and not kw:
        chain.ops.append(name)
        return _BINARY[name].format(*values)
    if name in ("clamp", "clip", "hardtanh") and len(values) >= 1:
        lo_node = kw.get("min", kw.get("min_val", operands[1] if len(operands) > 1 else None))
        hi_node = kw.get("max", kw.get("max_val", operands[2] if len(operands) > 2 else None))
        if name == "hardtanh":
            lo_node = lo_node if lo_node is not None else ast.Constant(-1.0)
            hi_node = hi_node if hi_node is not None else ast.Constant(1.0)
        out = values[0]
        if lo_node is not None:
            out = f"fmaxf({out}, {_c(lo_node, names, constants, chain)})"
        if hi_node is not None:
            out = f"fminf({out}, {_c(hi_node, names, constants, chain)})"
        chain.ops.append(name)
        return out
    if name == "leaky_relu" and len(values) <= 2:
        slope_node = kw.get("negative_slope", operands[1] if len(operands) > 1 else ast.Constant(0.01))
        slope = _c(slope_node, names, constants, chain)
        chain.ops.append(name)
        return f"({values[0]} > 0.0f ? {values[0]} : {values[0]} * {slope})"
    raise _NotElementwise(name)


def _power(base: str, exponent: ast.AST, chain: Chain) -> str:
    value = _const(exponent)
    if not isinstance(value, int | float):
        raise _NotElementwise("pow")
    chain.ops.append("pow")
    if value == 2:
        return f"(({base}) * ({base}))"
    if value == 3:
        return f"(({base}) * ({base}) * ({base}))"
    if value == 0.5:
        return f"sqrtf({base})"
    return f"powf({base}, {_literal(value)})"


def _const(node: ast.AST | None) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return -node.operand.value
    return None


def _literal(value: float) -> str:
    text = repr(float(value))
    return f"{text}f" if ("e" in text or "." in text) else f"{text}.0f"


def dotted(node: ast.AST) -> str:
    """`torch.nn.functional.softmax` for an attribute chain, '' for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""

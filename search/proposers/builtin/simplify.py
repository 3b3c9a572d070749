"""Exact algebraic simplifications the reference's graph shows, as a rewritten operator list.

The captured graph already leaves out what an eval-mode forward does not run (dropout with p=0,
identity modules). On top of that:
- a reduction over dimensions of size 1 (sum, mean, max, min, logsumexp with keepdim) is the
  identity;
- constant scalings (`x * a`, `x / b`) are carried through linear steps (sums, means) and
  applied once, as one multiplication, where a non-linear operator needs the value;
- a sum over the output features of a linear layer is folded into its weights:
  `sum(x @ W.T + b, -1) = x @ W.sum(0) + b.sum()`, a matrix-vector product instead of a GEMM.
Equal up to floating-point rounding (sums in another order), so within any tolerance the
runner accepts. Operators that are dead after the rewrites are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from search.proposers.builtin.graph_facts import short

_IDENTITY_REDUCTIONS = {"sum", "mean", "amax", "amin", "logsumexp"}
_LINEAR_REDUCTIONS = {"sum", "mean"}
_RANDOM = ("rand", "dropout", "bernoulli", "normal", "uniform", "randn", "randint", "multinomial")


class CannotSimplify(ValueError):
    pass


@dataclass
class Simplified:
    """The rewritten graph: inputs as captured, nodes in execution order, outputs, and one
    sentence per rewrite."""

    inputs: list[dict[str, Any]]
    nodes: list[dict[str, Any]]
    outputs: list[Any]
    notes: list[str] = field(default_factory=list)


def simplify(graph: dict[str, Any]) -> Simplified | None:
    """The graph with its exact simplifications, or None when none applies (or it cannot be
    replayed: random operators, tensor constants)."""
    if not graph.get("captured"):
        return None
    try:
        result = _Rewriter(graph).run()
    except CannotSimplify:
        return None
    return result if result.notes else None


class _Rewriter:
    def __init__(self, graph: dict[str, Any]) -> None:
        self.graph = graph
        self.shapes: dict[str, list[int]] = {i["name"]: i.get("shape") or [] for i in graph["inputs"]}
        for n in graph["nodes"]:
            self.shapes[n["name"]] = (n["outputs"][0].get("shape") or []) if n["outputs"] else []
        self.alias: dict[str, str] = {}
        self.pairs: dict[str, str] = {}  # a (values, indices) operator whose values are its input
        self.scale: dict[str, tuple[str, float]] = {}  # name -> (base, factor): name = factor * base
        self.out: list[dict[str, Any]] = []
        self.emitted: dict[str, dict[str, Any]] = {}
        self.notes: list[str] = []
        self.uses = _uses(graph)

    def run(self) -> Simplified:
        if any(i["kind"] == "constant" for i in self.graph["inputs"]):
            raise CannotSimplify("the forward holds tensor constants")
        live = _live(self.graph)
        kept = {n["name"] for n in live}
        if any(_in_place(n) and n["name"] not in kept for n in self.graph["nodes"]):
            raise CannotSimplify("an in-place operator's effect is read through another name")
        for node in live:
            if any(word in short(node["target"]) for word in _RANDOM):
                raise CannotSimplify("the forward draws random numbers")
            self.visit(node)
        outputs = [self.value(o) for o in self.graph["outputs"]]
        live = _live({"nodes": self.out, "outputs": outputs})
        return Simplified(self.graph["inputs"], live, outputs, list(dict.fromkeys(self.notes)))

    # --- one operator ------------------------------------------------------------------------
    def visit(self, node: dict[str, Any]) -> None:
        op, name, args = short(node["target"]), node["name"], node["args"]
        src = self.resolve(args[0]) if args and isinstance(args[0], dict) and "ref" in args[0] else None
        if op in ("mul", "div") and node["target"].endswith(".Tensor") and src and _number(args[1]):
            factor = float(args[1]) if op == "mul" else 1.0 / float(args[1])
            base, f = self.scale.get(src, (src, 1.0))
            if src in self.scale:
                self.notes.append("consecutive constant scalings folded into one multiplication")
            self.scale[name] = (base, f * factor)
            return
        if op in _IDENTITY_REDUCTIONS and src and self._over_size_one(src, args):
            self.notes.append(f"the {op} over a dimension of size 1 is the identity")
            self.alias[name] = src
            return
        if op in ("max", "min") and node["target"].endswith(".dim") and src and self._over_size_one(src, args):
            self.notes.append(f"the {op} over a dimension of size 1 is the identity")
            self.pairs[name] = src  # (values, indices): the values are the input
            return
        if op == "getitem" and args[0]["ref"] in self.pairs:
            if args[1] != 0:
                raise CannotSimplify("the indices of a max over a size-1 dimension are read")
            self.alias[name] = self.pairs[args[0]["ref"]]
            return
        if op == "sum" and src and self._folds_into_weights(src, node):
            return
        if op in _LINEAR_REDUCTIONS and src in self.scale and node["target"].endswith("dim_IntList"):
            base, f = self.scale[src]
            self.notes.append(f"a constant scaling moved past the {op} (applied once, at the end)")
            self.emit({**node, "args": [{"ref": base}, *self.args(args[1:])]})
            self.scale[name] = (name, f)
            return
        self.emit({**node, "args": self.args(args),
                   "kwargs": {k: self.args([v])[0] for k, v in (node.get("kwargs") or {}).items()}})

    def _over_size_one(self, src: str, args: list[Any]) -> bool:
        dims = args[1] if len(args) > 1 else None
        keepdim = args[2] if len(args) > 2 else False
        dims = [dims] if isinstance(dims, int) and not isinstance(dims, bool) else dims
        shape = self.shapes.get(self.scale.get(src, (src, 1.0))[0], []) or self.shapes.get(src, [])
        if not isinstance(dims, list) or not dims or keepdim is not True or not shape:
            return False
        return all(isinstance(d, int) and -len(shape) <= d < len(shape) and shape[d] == 1 for d in dims)

    def _folds_into_weights(self, src: str, node: dict[str, Any]) -> bool:
        """sum over the last dim of (c *) addmm(b, x, Wt) or mm(x, Wt) -> c * (x @ Wt.sum(1) + b.sum())."""
        base, factor = self.scale.get(src, (src, 1.0))
        mm = self.emitted.get(base)
        args = node["args"]
        if mm is None or short(mm["target"]) not in ("addmm", "mm") or mm.get("kwargs") or self.uses.get(base, 0) != 1:
            return False
        if len(self.shapes[base]) != 2 or len(args) < 2 or args[1] not in ([1], [-1]):
            return False
        has_bias = short(mm["target"]) == "addmm"
        bias, x, weight_t = mm["args"][:3] if has_bias else (None, *mm["args"][:2])
        if has_bias and not (isinstance(bias, dict) and len(self.shapes.get(bias["ref"], [])) == 1):
            return False
        keepdim = len(args) > 2 and args[2] is True
        self.out.remove(mm)
        name = node["name"]
        folded = f"{name}_folded" if not keepdim else name
        self.emit({"name": f"{name}_weights", "target": "aten.sum.dim_IntList",
                   "args": [weight_t, [1], True], "kwargs": {}, "outputs": []})
        if has_bias:
            self.emit({"name": f"{name}_bias", "target": "aten.sum.dim_IntList",
                       "args": [bias, [0], True], "kwargs": {}, "outputs": []})
            self.emit({"name": folded, "target": "aten.addmm.default",
                       "args": [{"ref": f"{name}_bias"}, x, {"ref": f"{name}_weights"}], "kwargs": {}, "outputs": []})
        else:
            self.emit({"name": folded, "target": "aten.mm.default",
                       "args": [x, {"ref": f"{name}_weights"}], "kwargs": {}, "outputs": []})
        if not keepdim:
            self.emit({"name": name, "target": "aten.squeeze.dim", "args": [{"ref": folded}, 1], "kwargs": {},
                       "outputs": []})
        self.notes.append("the sum over a matrix product's output columns folded into the weights: "
                          "x @ W.sum(0) (+ b.sum()), a matrix-vector product instead of the full matrix product")
        if factor != 1.0:
            self.scale[name] = (name, factor)
        return True

    # --- values ------------------------------------------------------------------------------
    def resolve(self, ref: dict[str, Any]) -> str:
        name = ref["ref"]
        while name in self.alias:
            name = self.alias[name]
        return name

    def value(self, ref: Any) -> Any:
        """A reference as an emitted tensor: a pending scaling is applied here, once."""
        if not (isinstance(ref, dict) and "ref" in ref):
            return ref
        name = self.resolve(ref)
        if name not in self.scale:
            return {"ref": name}
        base, factor = self.scale[name]
        if factor == 1.0:
            return {"ref": base}
        scaled = f"{base}_scaled" if base != name else f"{name}_times"
        if scaled not in self.emitted:
            self.emit({"name": scaled, "target": "aten.mul.Tensor", "args": [{"ref": base}, factor],
                       "kwargs": {}, "outputs": []})
        return {"ref": scaled}

    def args(self, values: list[Any]) -> list[Any]:
        out = []
        for v in values:
            out.append(self.args(v) if isinstance(v, list) else self.value(v))
        return out

    def emit(self, node: dict[str, Any]) -> None:
        self.out.append(node)
        self.emitted[node["name"]] = node


def _in_place(node: dict[str, Any]) -> bool:
    parts = node["target"].split(".")
    return len(parts) >= 3 and parts[1].endswith("_") and not parts[1].startswith("_")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value != 0


def _refs(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [value["ref"]] if "ref" in value else [r for v in value.values() for r in _refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


def _uses(graph: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for n in graph["nodes"]:
        for r in _refs([n["args"], n.get("kwargs") or {}]):
            counts[r] = counts.get(r, 0) + 1
    for r in _refs(graph["outputs"]):
        counts[r] = counts.get(r, 0) + 1
    return counts


def _live(graph: dict[str, Any]) -> list[dict[str, Any]]:
    """The nodes the outputs depend on, in order (in-place ops on live values kept)."""
    nodes = {n["name"]: n for n in graph["nodes"]}
    keep: set[str] = set()
    todo = _refs(graph["outputs"])
    while todo:
        name = todo.pop()
        if name in keep or name not in nodes:
            continue
        keep.add(name)
        todo += _refs([nodes[name]["args"], nodes[name].get("kwargs") or {}])
    return [n for n in graph["nodes"] if n["name"] in keep]

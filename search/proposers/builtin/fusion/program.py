"""Read the fusable tail of a reference's graph as a program of scalar steps.

The tail is what the forward computes after its last operator that a fused kernel does not
take over (a matrix product, a convolution, or nothing: then it starts from the inputs):
elementwise ops, and reductions or normalizations over one block of adjacent dimensions.
Everything before it (the prefix) stays as it is, replayed as the same aten calls.

The tensors the tail reads are operands: each varies over one block of adjacent dimensions
of the tail's full shape (a per-channel bias, a per-column scale, a full tensor), so a
kernel finds its element from the flat index alone. A step is `full` (one value per element)
or `row` (one value per reduced row). Anything else (another broadcast, two reduction blocks,
an operator without a lowering) means no program: the families that need one stay out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from search.proposers.builtin.fusion.ops import CPP

# Operators that only rename a tensor (no data change) when they keep its shape.
_ALIASES = {"clone", "alias", "detach", "contiguous", "lift_fresh_copy"}
# Reshapes: free on a row value (its data order stays), allowed on a full value only as a no-op.
_RESHAPES = {"view", "reshape", "_unsafe_view", "unsqueeze", "squeeze", "expand", "flatten"}
_UNARY = {"relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "neg", "abs", "reciprocal", "silu",
          "mish", "hardswish", "hardsigmoid", "erf"}
_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "maximum": "max", "minimum": "min"}
_REDUCTIONS = {"sum": "sum", "mean": "sum", "amax": "max", "amin": "min", "max": "max", "min": "min"}
_PRODUCERS = {"addmm": "matrix product", "mm": "matrix product", "bmm": "batched matrix product",
              "matmul": "matrix product", "convolution": "convolution", "linear": "matrix product"}
# Prefix operators that cannot be replayed as they were captured (random or device-bound).
_NOT_REPLAYABLE = ("rand", "dropout", "bernoulli", "normal", "uniform", "empty", "randn", "randint")


class Unsupported(ValueError):
    """The graph's tail is not a program the generated kernels can compute."""


@dataclass
class Operand:
    """A tensor the kernel reads: `ref` (graph name) over dims [span[0], span[1]) of the full shape."""

    name: str
    ref: str
    shape: list[int]
    span: tuple[int, int]


@dataclass
class Step:
    """One scalar operation: `op` over `args` (step names, operand names or float constants)."""

    name: str
    op: str  # an entry of ops.CPP, "load", or "reduce_sum" / "reduce_max" / "reduce_min"
    args: list[Any]
    level: str  # "full" or "row"


@dataclass
class Program:
    shape: list[int]  # the full shape every full step has
    reduce: tuple[int, int] | None  # the reduced block of dimensions, [a, b)
    operands: list[Operand]
    steps: list[Step]
    output: str  # the step the forward returns
    out_shape: list[int]
    prefix: list[dict[str, Any]]  # graph nodes computed before the kernel, in order
    inputs: list[dict[str, Any]]  # the graph's placeholders (forward inputs, parameters, buffers)
    fused: list[str] = field(default_factory=list)  # the aten ops the kernel takes over, in order
    producer: str | None = None  # what computes the tail's input: "matrix product", "convolution"
    # Graph nodes run after the kernel (a pooling that ends the forward), in order, and the
    # graph name of the tensor the kernel produces for them.
    suffix: list[dict[str, Any]] = field(default_factory=list)
    result: str = ""

    @property
    def outer(self) -> int:
        return math.prod(self.shape[: self.reduce[0]]) if self.reduce else math.prod(self.shape)

    @property
    def length(self) -> int:
        """Elements per reduced row (1 without a reduction)."""
        return math.prod(self.shape[self.reduce[0]: self.reduce[1]]) if self.reduce else 1

    @property
    def inner(self) -> int:
        return math.prod(self.shape[self.reduce[1]:]) if self.reduce else 1

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def step(self, name: str) -> Step:
        return next(s for s in self.steps if s.name == name)

    def describe(self) -> str:
        """The fused ops in words, e.g. 'gelu, mul, layer_norm after the matrix product'."""
        ops = ", ".join(dict.fromkeys(self.fused))
        return f"{ops} after the {self.producer}" if self.producer else ops


def read_program(graph: dict[str, Any]) -> Program | None:
    """The graph's fusable tail as a Program, or None when there is none."""
    try:
        return _Reader(graph).read()
    except Unsupported:
        return None


def short(target: str) -> str:
    """`addmm` for "aten.addmm.default"."""
    parts = target.split(".")
    return parts[1] if len(parts) >= 3 and parts[0] == "aten" else target


class _Reader:
    def __init__(self, graph: dict[str, Any]):
        if not graph or not graph.get("captured"):
            raise Unsupported("no graph")
        self.graph = graph
        self.nodes = {n["name"]: n for n in graph.get("nodes", [])}
        self.inputs = {i["name"]: i for i in graph.get("inputs", [])}
        self.steps: list[Step] = []
        self.operands: dict[str, Operand] = {}
        self.values: dict[str, tuple[str, list[int]]] = {}  # graph name -> (step name, graph shape)
        self.reduce: tuple[int, int] | None = None
        self.fused: list[str] = []
        # Group normalization splits the channels into (groups, channels per group): the
        # kernel indexes that finer layout, the graph's shapes stay as they are.
        self.groups: tuple[int, int] | None = None  # (channel dim, groups)

    # --- which nodes the kernel takes over -----------------------------------------------
    def read(self) -> Program:
        outputs = self.graph.get("outputs") or []
        if len(outputs) != 1 or not isinstance(outputs[0], dict) or "ref" not in outputs[0]:
            raise Unsupported("the forward returns more than one tensor")
        out = outputs[0]["ref"]
        suffix = self._suffix(out)
        if suffix:
            out = next(a["ref"] for a in _refs(suffix[0]) if a["ref"] in self.nodes)
        region = self._region(out)
        if not region:
            raise Unsupported("nothing to fuse at the output")
        order = [n for n in self.nodes if n in region]
        self.shape = self._full_shape(order)
        for name in order:
            self._lower(self.nodes[name])
        if not any(s.op != "load" for s in self.steps) or not self.fused:
            raise Unsupported("the tail computes nothing")
        step, shape = self.values[out]
        out_shape = self._shape_of(out)
        level = self._level(step)
        if level == "full" and out_shape != self.shape:
            raise Unsupported("the output is not the full shape")
        if self._dtype_of(out) != "float32":
            raise Unsupported("the output is not float32")
        leaves = {o.ref for o in self.operands.values()}
        live = self._ancestors(outputs[0]["ref"])
        if any(a["ref"] in region for n in suffix for a in _refs(n) if a["ref"] != out) or \
                any(out in {a["ref"] for a in _refs(self.nodes[n])} for n in live
                    if n not in region and self.nodes[n] not in suffix):
            raise Unsupported("the kernel's values are used by other operators")
        prefix = self._prefix(leaves)
        producer = next((_PRODUCERS[short(self.nodes[p]["target"])] for p in reversed(prefix)
                         if short(self.nodes[p]["target"]) in _PRODUCERS), None)
        shape, reduce = self.shape, self.reduce
        if self.groups is not None:
            shape, reduce = self._split_layout()
        return Program(shape=shape, reduce=reduce, operands=list(self.operands.values()),
                       steps=self.steps, output=step, out_shape=out_shape,
                       prefix=[self.nodes[p] for p in prefix], inputs=list(self.inputs.values()),
                       fused=self.fused, producer=producer, suffix=suffix, result=out)

    def _ancestors(self, name: str) -> set[str]:
        found: set[str] = set()
        todo = [name]
        while todo:
            n = todo.pop()
            if n in found or n not in self.nodes:
                continue
            found.add(n)
            todo += [a["ref"] for a in _refs(self.nodes[n])]
        return found

    def _suffix(self, out: str) -> list[dict[str, Any]]:
        """Up to three operators at the end of the forward that the kernel does not compute (a
        pooling, say), each taking one computed tensor: they run after the kernel, as they were."""
        suffix: list[dict[str, Any]] = []
        node = self.nodes.get(out)
        while node is not None and not self._fusable(node):
            computed = [a["ref"] for a in _refs(node) if a["ref"] in self.nodes]
            if len(set(computed)) != 1 or len(suffix) == 3:
                raise Unsupported("the forward does not end in a fusable tail")
            suffix.insert(0, node)
            node = self.nodes.get(computed[0])
        return suffix

    def _split_layout(self) -> tuple[list[int], tuple[int, int]]:
        """The layout with the channels split in groups; every operand's span moved onto it."""
        assert self.groups is not None
        c, g = self.groups
        shape = self.shape[:c] + [g, self.shape[c] // g] + self.shape[c + 1:]

        def start(d: int) -> int:
            return d if d <= c else d + 1

        for o in self.operands.values():
            a, b = o.span
            o.span = (start(a), b if b <= c else b + 1) if a < b else (start(a), start(a))
        return shape, (c + 1, len(shape))

    def _region(self, out: str) -> set[str]:
        """The nodes from the output back to the first ones the kernel cannot compute."""
        region: set[str] = set()
        todo = [out]
        while todo:
            name = todo.pop()
            node = self.nodes.get(name)
            if name in region or node is None or not self._fusable(node):
                continue
            region.add(name)
            todo += [a["ref"] for a in _refs(node)]
        # A reshape of a tensor computed outside (the view after a matrix product) is an input.
        changed = True
        while changed:
            outside = {n for n in region if self._passive(self.nodes[n])
                       and all(a["ref"] not in region for a in _refs(self.nodes[n]))}
            region -= outside
            changed = bool(outside)
        return region

    def _passive(self, node: dict[str, Any]) -> bool:
        op = short(node["target"])
        return op in _ALIASES or op in _RESHAPES or op == "_to_copy"

    def _fusable(self, node: dict[str, Any]) -> bool:
        op = short(node["target"])
        if node["target"] == "getitem":
            src = self.nodes.get(node["args"][0]["ref"]) if isinstance(node["args"][0], dict) else None
            return src is not None and node["args"][1] == 0 and short(src["target"]) in (
                "max", "min", "native_layer_norm", "native_group_norm")
        return (op in _UNARY or op in _BINARY or op in _ALIASES or op in _RESHAPES or op in _REDUCTIONS
                or op in ("gelu", "hardtanh", "clamp", "clamp_min", "clamp_max", "leaky_relu", "softplus",
                          "pow", "rsub", "logsumexp", "_softmax", "_log_softmax", "native_layer_norm",
                          "native_group_norm", "elu",
                          "var", "_to_copy", "square"))

    def _full_shape(self, order: list[str]) -> list[int]:
        """The largest shape the tail computes or reads (a reduction's input may be a leaf)."""
        names = order + [a["ref"] for n in order for a in _refs(self.nodes[n])]
        return max((self._shape_of(n) for n in names), key=math.prod)

    def _prefix(self, leaves: set[str]) -> list[str]:
        needed: set[str] = set()
        todo = [leaf for leaf in leaves if leaf in self.nodes]
        while todo:
            name = todo.pop()
            if name in needed:
                continue
            needed.add(name)
            todo += [a["ref"] for a in _refs(self.nodes[name]) if a["ref"] in self.nodes]
        order = [n for n in self.nodes if n in needed]
        for name in order:
            target = self.nodes[name]["target"]
            if target != "getitem" and not target.startswith("aten."):
                raise Unsupported(f"{target} cannot be replayed")
            if any(word in target for word in _NOT_REPLAYABLE):
                raise Unsupported(f"{target} cannot be replayed")
        return order

    # --- shapes ----------------------------------------------------------------------------
    def _shape_of(self, name: str, index: int = 0) -> list[int]:
        if name in self.inputs:
            return list(self.inputs[name]["shape"])
        node = self.nodes[name]
        return list(node["outputs"][index]["shape"]) if node.get("outputs") else []

    def _dtype_of(self, name: str) -> str:
        if name in self.inputs:
            return str(self.inputs[name]["dtype"])
        node = self.nodes[name]
        return str(node["outputs"][0]["dtype"]) if node.get("outputs") else ""

    def _level(self, step: str) -> str:
        if step in self.operands:
            return "full"
        return next(s.level for s in self.steps if s.name == step)

    # --- lowering ----------------------------------------------------------------------------
    def _emit(self, op: str, args: list[Any], level: str | None = None) -> str:
        if level is None:
            levels = [self._level(a) for a in args if isinstance(a, str)]
            level = "full" if "full" in levels else "row"
        name = f"v{len(self.steps)}"
        self.steps.append(Step(name, op, args, level))
        return name

    def _arg(self, value: Any) -> Any:
        """A step name for a tensor argument, a float for a number."""
        if isinstance(value, dict) and "ref" in value:
            ref = value["ref"]
            if ref in self.values:
                return self.values[ref][0]
            return self._operand(ref)
        if isinstance(value, dict) and "float" in value:
            return float(value["float"])
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise Unsupported(f"argument {value!r}")
        return float(value)

    def _operand(self, ref: str, span: tuple[int, int] | None = None) -> str:
        """A load of a tensor computed outside the kernel, by the block of dims it varies over
        (aligned to the trailing dims, as broadcasting does, unless `span` says where)."""
        if self._dtype_of(ref) not in ("float32",):
            raise Unsupported(f"{ref} is not float32")
        shape = self._shape_of(ref)
        full = self.shape
        if span is None:
            if len(shape) > len(full):
                raise Unsupported(f"{ref} has more dimensions than the tail")
            padded = [1] * (len(full) - len(shape)) + shape
            varying = [d for d, s in enumerate(padded) if s != 1]
            span = (varying[0], varying[-1] + 1) if varying else (len(full), len(full))
            if any(padded[d] != full[d] for d in range(*span)):
                raise Unsupported(f"{ref} does not vary over one block of the tail's dimensions")
        elif math.prod(shape) != math.prod(full[span[0]:span[1]]):
            raise Unsupported(f"{ref} does not match dims {span} of the tail")
        if ref not in self.operands:
            self.operands[ref] = Operand(name=f"in{len(self.operands)}", ref=ref, shape=shape, span=span)
        operand = self.operands[ref]
        load = next((s.name for s in self.steps if s.op == "load" and s.args == [operand.name]), None)
        return load if load is not None else self._emit("load", [operand.name], "full")

    def _set(self, node: dict[str, Any], step: str) -> None:
        self.values[node["name"]] = (step, self._shape_of(node["name"]))

    def _check_full(self, node: dict[str, Any], step: str) -> None:
        """A full step must have the full shape; a row step one value per row."""
        shape = self._shape_of(node["name"])
        if self._level(step) == "full":
            if shape != self.shape:
                raise Unsupported(f"{node['name']} changes the shape")
        elif self.reduce is None or math.prod(shape) != self._rows():
            raise Unsupported(f"{node['name']} is not one value per row")

    def _rows(self) -> int:
        assert self.reduce is not None
        a, b = self.reduce
        return math.prod(self.shape[:a]) * math.prod(self.shape[b:])

    def _lower(self, node: dict[str, Any]) -> None:
        op = short(node["target"])
        args, kw = node["args"], node.get("kwargs") or {}
        if node["target"] == "getitem":
            self.values[node["name"]] = self.values[args[0]["ref"]]
            return
        if op in _ALIASES or op in _RESHAPES or op == "_to_copy":
            if op == "_to_copy" and self._dtype_of(node["name"]) != "float32":
                raise Unsupported("a cast to another dtype")
            source = self._arg(args[0])
            if self._level(source) == "full" and self._shape_of(node["name"]) != self.shape:
                raise Unsupported(f"{op} reshapes a full value")
            self.values[node["name"]] = (source, self._shape_of(node["name"]))
            return
        self.fused.append(op)
        if op in _REDUCTIONS or op in ("logsumexp", "var"):
            step = self._reduction(node, op, args, kw)
        elif op in ("_softmax", "_log_softmax"):
            step = self._softmax(node, op == "_log_softmax")
        elif op == "native_layer_norm":
            self.fused[-1] = "layer_norm"
            step = self._layer_norm(node)
        elif op == "native_group_norm":
            self.fused[-1] = "group_norm"
            step = self._group_norm(node)
        else:
            step = self._elementwise(node, op, args, kw)
        self._check_full(node, step)
        self._set(node, step)

    def _elementwise(self, node: dict[str, Any], op: str, args: list[Any], kw: dict[str, Any]) -> str:
        x = self._arg(args[0])
        if op in _UNARY:
            return self._emit(op, [x])
        if op == "square":
            return self._emit("mul", [x, x])
        if op == "gelu":
            approx = kw.get("approximate", args[1] if len(args) > 1 else "none")
            return self._emit("gelu_tanh" if approx == "tanh" else "gelu", [x])
        if op in _BINARY:
            y = self._arg(args[1])
            alpha = kw.get("alpha", args[2] if len(args) > 2 else 1)
            if alpha != 1 and op in ("add", "sub"):
                y = self._emit("mul", [y, float(alpha)])
            return self._broadcast_check(node, self._emit(_BINARY[op], [x, y]))
        if op == "rsub":
            y = self._arg(args[1])
            return self._emit("sub", [y, x])
        if op in ("hardtanh", "clamp", "clamp_min", "clamp_max"):
            lo = kw.get("min", args[1] if len(args) > 1 else (-1.0 if op == "hardtanh" else None))
            hi = kw.get("max", args[2] if len(args) > 2 else (1.0 if op == "hardtanh" else None))
            if op == "clamp_max":
                lo, hi = None, kw.get("max", args[1])
            out = x
            if lo is not None:
                out = self._emit("max", [out, self._arg(lo)])
            if hi is not None:
                out = self._emit("min", [out, self._arg(hi)])
            return out
        if op == "elu":
            alpha, scale, input_scale = ([float(a) for a in args[1:4]] + [1.0, 1.0, 1.0][len(args) - 1:])[:3]
            scaled = self._emit("mul", [x, input_scale])
            negative = self._emit("mul", [self._emit("sub", [self._emit("exp", [scaled]), 1.0]), alpha])
            return self._emit("mul", [self._emit("select_positive", [x, x, negative]), scale])
        if op == "leaky_relu":
            slope = kw.get("negative_slope", args[1] if len(args) > 1 else 0.01)
            return self._emit("leaky_relu", [x, self._arg(slope)])
        if op == "softplus":
            beta = kw.get("beta", args[1] if len(args) > 1 else 1.0)
            threshold = kw.get("threshold", args[2] if len(args) > 2 else 20.0)
            return self._emit("softplus", [x, self._arg(beta), self._arg(threshold)])
        if op == "pow":
            exponent = args[1]
            if isinstance(exponent, dict) or isinstance(exponent, bool):
                raise Unsupported("a tensor exponent")
            return self._power(x, float(exponent))
        raise Unsupported(op)

    def _broadcast_check(self, node: dict[str, Any], step: str) -> str:
        """A row value meets a full one only where the graph broadcasts it along the reduced dims."""
        args = [a for a in node["args"][:2] if isinstance(a, dict) and "ref" in a]
        levels = [self._level(self._arg(a)) for a in args]
        if "row" in levels and "full" in levels:
            for a, level in zip(args, levels, strict=True):
                if level == "row" and not self._keepdim_shape(self._shape_of(a["ref"])):
                    raise Unsupported("a reduced value broadcast another way")
        return step

    def _keepdim_shape(self, shape: list[int]) -> bool:
        if self.reduce is None:
            return False
        a, b = self.reduce
        kept = [1 if a <= d < b else s for d, s in enumerate(self.shape)]
        padded = [1] * (len(self.shape) - len(shape)) + shape
        return padded == kept

    def _power(self, x: str, p: float) -> str:
        if p == 0.5:
            return self._emit("sqrt", [x])
        if p == -0.5:
            return self._emit("rsqrt", [x])
        if p == int(p) and 1 <= abs(p) <= 4:
            out = x
            for _ in range(int(abs(p)) - 1):
                out = self._emit("mul", [out, x])
            return self._emit("reciprocal", [out]) if p < 0 else out
        return self._emit("pow", [x, p])

    def _dims(self, node: dict[str, Any], dims: Any) -> tuple[int, int]:
        rank = len(self._shape_of(node["args"][0]["ref"]))
        if dims is None or dims == []:
            dims = list(range(rank))
        dims = sorted(d % rank for d in (dims if isinstance(dims, list) else [dims]))
        if dims != list(range(dims[0], dims[-1] + 1)):
            raise Unsupported("reduced dimensions are not adjacent")
        return dims[0], dims[-1] + 1

    def _reduce_block(self, node: dict[str, Any], block: tuple[int, int]) -> None:
        if self._shape_of(node["args"][0]["ref"]) != self.shape:
            raise Unsupported("a reduction of a value that is not full")
        if self.reduce is None:
            self.reduce = block
        elif self.reduce != block:
            raise Unsupported("two reduction blocks")

    def _reduction(self, node: dict[str, Any], op: str, args: list[Any], kw: dict[str, Any]) -> str:
        x = self._arg(args[0])
        dims = kw.get("dim", args[1] if len(args) > 1 else None)
        block = self._dims(node, dims)
        if self._level(x) == "row":
            # A reduction of one value per row over dims of size 1 (what the graph shows) is the value.
            if all(s == 1 for s in self._shape_of(node["args"][0]["ref"])[block[0]:block[1]]):
                return x
            raise Unsupported("a reduction of a reduced value")
        self._reduce_block(node, block)
        n = float(math.prod(self.shape[block[0]:block[1]]))
        if op == "logsumexp":
            m = self._emit("reduce_max", [x], "row")
            e = self._emit("exp", [self._emit("sub", [x, m])])
            return self._emit("add", [m, self._emit("log", [self._emit("reduce_sum", [e], "row")])])
        if op == "var":
            correction = kw.get("correction", 1)
            mean = self._emit("mul", [self._emit("reduce_sum", [x], "row"), 1.0 / n])
            d = self._emit("sub", [x, mean])
            total = self._emit("reduce_sum", [self._emit("mul", [d, d])], "row")
            return self._emit("div", [total, max(n - float(correction or 0), 0.0)])
        total = self._emit(f"reduce_{_REDUCTIONS[op]}", [x], "row")
        return self._emit("mul", [total, 1.0 / n]) if op == "mean" else total

    def _softmax(self, node: dict[str, Any], log: bool) -> str:
        x = self._arg(node["args"][0])
        self._reduce_block(node, self._dims(node, node["args"][1]))
        m = self._emit("reduce_max", [x], "row")
        shifted = self._emit("sub", [x, m])
        e = self._emit("exp", [shifted])
        total = self._emit("reduce_sum", [e], "row")
        if log:
            return self._emit("sub", [shifted, self._emit("log", [total])])
        return self._emit("mul", [e, self._emit("reciprocal", [total])])

    def _group_norm(self, node: dict[str, Any]) -> str:
        """native_group_norm(x, weight, bias, N, C, HxW, groups, eps) over [N, C, ...]."""
        args = node["args"]
        x = self._arg(args[0])
        if self.reduce is not None or self._shape_of(args[0]["ref"]) != self.shape or len(self.shape) < 2:
            raise Unsupported("group normalization with another reduction")
        groups, channels = int(args[6]), self.shape[1]
        self.groups, self.reduce = (1, groups), (-1, -1)  # no other reduction block matches
        n = float(math.prod(self.shape[1:]) // groups)
        mean = self._emit("mul", [self._emit("reduce_sum", [x], "row"), 1.0 / n])
        d = self._emit("sub", [x, mean])
        var = self._emit("mul", [self._emit("reduce_sum", [self._emit("mul", [d, d])], "row"), 1.0 / n])
        out = self._emit("mul", [d, self._emit("rsqrt", [self._emit("add", [var, float(args[7])])])])
        for ref, op in ((args[1], "mul"), (args[2], "add")):
            if ref is not None:
                if self._shape_of(ref["ref"]) != [channels]:
                    raise Unsupported("a group norm parameter that is not per channel")
                out = self._emit(op, [out, self._operand(ref["ref"], (1, 2))])
        return out

    def _layer_norm(self, node: dict[str, Any]) -> str:
        args = node["args"]
        x = self._arg(args[0])
        rank = len(self.shape)
        block = (rank - len(args[1]), rank)
        self._reduce_block(node, block)
        n = float(math.prod(self.shape[block[0]:]))
        mean = self._emit("mul", [self._emit("reduce_sum", [x], "row"), 1.0 / n])
        d = self._emit("sub", [x, mean])
        var = self._emit("mul", [self._emit("reduce_sum", [self._emit("mul", [d, d])], "row"), 1.0 / n])
        out = self._emit("mul", [d, self._emit("rsqrt", [self._emit("add", [var, self._arg(args[4])])])])
        if args[2] is not None:
            out = self._emit("mul", [out, self._arg(args[2])])
        if args[3] is not None:
            out = self._emit("add", [out, self._arg(args[3])])
        return out


def _refs(node: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict) and "ref" in value:
            found.append(value)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)

    walk(node.get("args", []))
    walk(node.get("kwargs", {}))
    return found


assert set(_BINARY.values()) <= set(CPP)

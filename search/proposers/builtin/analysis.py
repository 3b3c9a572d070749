"""Read a reference problem without running it: which pattern its forward computes.

The reference is untrusted text, so it is parsed with `ast` and never imported. The runner's
ReferenceReport (operators, shapes, dtypes) confirms or sharpens what the syntax suggests.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from search.proposers.builtin.expression import Chain, dotted, read_chain
from search.proposers.builtin.fusion.program import Program, read_program
from search.proposers.builtin.graph_facts import GraphFacts, read_facts
from search.proposers.builtin.graph_patterns import graph_pattern
from search.proposers.builtin.simplify import Simplified, simplify

# Patterns the built-in proposer knows; anything else is "generic" (framework ideas only).
PATTERNS = (
    "matmul", "conv", "conv_relu_maxpool", "softmax", "log_softmax", "softmax_manual",
    "layernorm", "rmsnorm_manual", "elementwise", "reduction", "generic",
)
# Reductions the reduce templates compute, by the name the forward calls (and the op code).
REDUCTIONS = {"sum": 0, "mean": 1, "amax": 2, "amin": 3, "max": 2, "min": 3}

_SOFTMAX = {"softmax", "log_softmax"}
_CONV_MODULES = {"Conv2d"}
_RELU = {"relu", "relu_", "ReLU"}
_POOL_MODULES = {"MaxPool2d"}


@dataclass
class ProblemShape:
    """What the built-in proposer knows about a reference: its pattern and the names it needs."""

    pattern: str = "generic"
    input_shapes: list[list[int]] = field(default_factory=list)
    input_dtypes: list[str] = field(default_factory=list)
    output_shapes: list[list[int]] = field(default_factory=list)
    operators: list[str] = field(default_factory=list)
    submodules: dict[str, str] = field(default_factory=dict)  # attribute -> nn class name
    params: list[str] = field(default_factory=list)  # attributes holding nn.Parameter
    dim: int | None = None  # reduction dimension, normalized to be >= 0 when the rank is known
    attrs: dict[str, str] = field(default_factory=dict)  # role -> attribute name (conv, pool, norm, weight, eps)
    eps: float | None = None
    chain: Chain | None = None  # the forward as C, for the elementwise pattern
    program: Program | None = None  # the graph's fusable tail, for the generated kernels
    from_graph: bool = False  # the pattern was read from the captured graph
    facts: GraphFacts | None = None  # heavy operators, tensor sizes, weights (for generic ideas)
    simplified: Simplified | None = None  # the graph after its exact simplifications, if any apply

    @property
    def rank(self) -> int | None:
        return len(self.input_shapes[0]) if self.input_shapes else None

    @property
    def last_dim(self) -> bool:
        """The reduction runs over the innermost dimension (custom row kernels need that)."""
        return self.dim is not None and self.rank is not None and self.dim == self.rank - 1

    @property
    def fp32(self) -> bool:
        return all(d in ("float32", "torch.float32") for d in self.input_dtypes) if self.input_dtypes else True

    @property
    def row_length(self) -> int | None:
        """Elements per row for row-wise patterns (softmax rows, normalized elements)."""
        if not self.input_shapes:
            return None
        shape = self.input_shapes[0]
        if self.pattern == "layernorm":
            n = int(self.attrs.get("norm_dims", "0") or 0)
            if n <= 0:
                return None
            size = 1
            for s in shape[-n:]:
                size *= s
            return size
        return shape[-1] if shape else None

    @property
    def rows(self) -> int | None:
        length = self.row_length
        if not self.input_shapes or not length:
            return None
        total = 1
        for s in self.input_shapes[0]:
            total *= s
        return total // length


def analyze(reference: str, info: dict[str, Any] | None = None) -> ProblemShape:
    """Classify the reference's forward into one of PATTERNS.

    Never raises on odd input: a reference it cannot read is "generic".
    """
    info = info or {}
    shape = ProblemShape(
        input_shapes=[list(s) for s in info.get("input_shapes", [])],
        input_dtypes=[str(d).replace("torch.", "") for d in info.get("input_dtypes", [])],
        output_shapes=[list(s) for s in info.get("output_shapes", [])],
        operators=list(info.get("operators", [])),
        facts=read_facts(info),
        simplified=simplify(info.get("graph") or {}),
    )
    try:
        tree = ast.parse(reference)
    except SyntaxError:
        return shape
    if not shape.input_shapes:
        shape.input_shapes = _input_shapes_from_source(tree)
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    if model is None:
        return shape
    methods = {f.name: f for f in model.body if isinstance(f, ast.FunctionDef)}
    if "__init__" in methods:
        _read_init(methods["__init__"], shape)
    if "forward" in methods:
        _classify_forward(methods["forward"], shape)
        if shape.pattern == "generic":
            _classify_elementwise_or_reduction(methods["forward"], _self_constants(tree, model), shape)
    graph = info.get("graph") or {}
    if graph.get("captured"):
        _apply_graph(graph, shape)
    _normalize_dim(shape)
    if shape.pattern == "layernorm":
        shape.attrs.setdefault("norm_dims", str(_layernorm_dims(tree, model, shape)))
    return shape


def _apply_graph(graph: dict[str, Any], shape: ProblemShape) -> None:
    """The graph decides the pattern: the syntax's reading stands only where the graph agrees,
    and the module names it needs come from the graph's parameter targets."""
    shape.program = read_program(graph)
    shape.from_graph = True
    pattern, facts = graph_pattern(graph)
    program = shape.program
    if (pattern == "generic" and shape.pattern == "elementwise" and program is not None
            and program.reduce is None and not program.prefix
            and all(o.span == (0, len(program.shape)) for o in program.operands)):
        pattern = "elementwise"  # the graph confirms the chain the source spells
    if pattern != shape.pattern:
        shape.attrs, shape.chain, shape.dim = {}, None, None
    if pattern == "conv_relu_maxpool" and shape.pattern != pattern:
        pattern = "generic"  # the pooling module's name is only in the source
    shape.pattern = pattern
    for key in ("conv", "norm", "weight"):
        if facts.get(key):
            shape.attrs[key] = str(facts[key])
    if "dim" in facts:
        shape.dim = facts["dim"]
    if facts.get("eps") is not None and "eps" not in shape.attrs:
        shape.eps = float(facts["eps"])
    if pattern == "reduction":
        shape.attrs.update(reduce_op=facts["reduce_op"], keepdim=str(facts["keepdim"]))
    if pattern == "layernorm":
        shape.attrs["norm_dims"] = str(facts["norm_dims"])
    if pattern in ("layernorm", "conv") and not shape.attrs.get("norm" if pattern == "layernorm" else "conv"):
        shape.pattern = "generic"


def _read_init(init: ast.FunctionDef, shape: ProblemShape) -> None:
    for stmt in ast.walk(init):
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        target = dotted(stmt.targets[0])
        if not target.startswith("self."):
            continue
        attr = target[5:]
        value = stmt.value
        if isinstance(value, ast.Call):
            name = dotted(value.func).rsplit(".", 1)[-1]
            if name == "Parameter":
                shape.params.append(attr)
            elif name and name[0].isupper():
                shape.submodules[attr] = name
        elif attr == "eps" or attr.endswith("eps"):
            shape.attrs["eps"] = attr
            if isinstance(value, ast.Constant) and isinstance(value.value, float):
                shape.eps = value.value


def _calls_in_order(fn: ast.FunctionDef) -> list[tuple[str, ast.Call]]:
    """Every call in the forward, innermost first (the order the ops run)."""
    calls: list[tuple[str, ast.Call]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            visit(child)
        if isinstance(node, ast.Call):
            calls.append((dotted(node.func), node))

    for stmt in fn.body:
        visit(stmt)
    return calls


def _const_int(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _const_int(node.operand)
        return -inner if inner is not None else None
    return None


def _dim_arg(call: ast.Call, position: int) -> int | None:
    for kw in call.keywords:
        if kw.arg == "dim":
            return _const_int(kw.value)
    if len(call.args) > position:
        return _const_int(call.args[position])
    return None


def _classify_forward(fn: ast.FunctionDef, shape: ProblemShape) -> None:
    calls = _calls_in_order(fn)
    names = [n for n, _ in calls]
    short = [n.rsplit(".", 1)[-1] for n in names]
    module_kinds = [shape.submodules.get(n[5:], "") if n.startswith("self.") else "" for n in names]
    has_matmul = any(s in ("matmul", "mm", "bmm") for s in short) or _has_matmult_operator(fn)
    ops = set(shape.operators)

    convs = [n[5:] for n, k in zip(names, module_kinds, strict=True) if k in _CONV_MODULES]
    pools = [n[5:] for n, k in zip(names, module_kinds, strict=True) if k in _POOL_MODULES]
    relus = [i for i, (s, k) in enumerate(zip(short, module_kinds, strict=True)) if s in _RELU or k == "ReLU"]
    if len(convs) == 1 and len(pools) == 1 and relus and len(calls) <= 4:
        shape.pattern = "conv_relu_maxpool"
        shape.attrs.update(conv=convs[0], pool=pools[0])
        return
    if len(convs) == 1 and len(calls) == 1:
        shape.pattern = "conv"
        shape.attrs["conv"] = convs[0]
        return
    norms = [n[5:] for n, k in zip(names, module_kinds, strict=True) if k == "LayerNorm"]
    if len(norms) == 1 and len(calls) == 1:
        shape.pattern = "layernorm"
        shape.attrs["norm"] = norms[0]
        return
    if len(calls) == 1 and short[0] in ("matmul", "mm") and len(shape.input_shapes) in (0, 2):
        shape.pattern = "matmul"
        return
    if has_matmul and len(calls) <= 1 and not convs:
        shape.pattern = "matmul"
        return
    softmaxes = [(s, c) for s, c in zip(short, (c for _, c in calls), strict=True) if s in _SOFTMAX]
    softmax_modules = [k for k in module_kinds if k in ("Softmax", "LogSoftmax")]
    if len(calls) == 1 and softmaxes:
        kind, call = softmaxes[0]
        shape.pattern = kind
        # torch.softmax(x, dim) has dim second; x.softmax(dim) has it first.
        is_method = not names[0].startswith(("torch.", "F.", "nn.", "functional."))
        shape.dim = _dim_arg(call, 0 if is_method else 1)
        return
    if len(calls) == 1 and softmax_modules:
        shape.pattern = "softmax" if softmax_modules[0] == "Softmax" else "log_softmax"
        shape.dim = None  # the module's dim lives in __init__; read it below if constant
        return
    exp_seen = "exp" in short or any(o.endswith("exp") for o in ops)
    max_seen = any(s in ("max", "amax") for s in short)
    sum_seen = "sum" in short
    if exp_seen and max_seen and sum_seen and "log" not in short:
        shape.pattern = "softmax_manual"
        sums = [c for s, c in zip(short, (c for _, c in calls), strict=True) if s == "sum"]
        shape.dim = _dim_arg(sums[0], 1)
        return
    sqrt_seen = any(s in ("sqrt", "rsqrt") for s in short)
    mean_seen = "mean" in short
    if sqrt_seen and mean_seen and len(shape.params) <= 1:
        shape.pattern = "rmsnorm_manual"
        means = [c for s, c in zip(short, (c for _, c in calls), strict=True) if s == "mean"]
        shape.dim = _dim_arg(means[0], 1)
        if shape.params:
            shape.attrs["weight"] = shape.params[0]
        return


def _classify_elementwise_or_reduction(fn: ast.FunctionDef, constants: dict[str, Any],
                                       shape: ProblemShape) -> None:
    """An elementwise chain over same-shape float32 inputs, or one reduction over a constant
    dimension of a single input."""
    numbers = {k: float(v) for k, v in constants.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    chain = read_chain(fn, numbers)
    same_shapes = bool(shape.input_shapes) and all(s == shape.input_shapes[0] for s in shape.input_shapes)
    if (chain is not None and same_shapes and len(shape.input_shapes) == len(chain.inputs) and shape.fp32
            and shape.output_shapes in ([], [shape.input_shapes[0]])):
        shape.pattern = "elementwise"
        shape.chain = chain
        return
    reduction = _read_reduction(fn, constants)
    if reduction is not None and len(shape.input_shapes) <= 1 and shape.fp32:
        op, dim, keepdim = reduction
        shape.pattern = "reduction"
        shape.dim = dim
        shape.attrs.update(reduce_op=op, keepdim=str(keepdim))


def _read_reduction(fn: ast.FunctionDef, constants: dict[str, Any]) -> tuple[str, int, bool] | None:
    """(op, dim, keepdim) when the forward returns one reduction of its one argument:
    torch.sum(x, dim=d), x.mean(d, keepdim=True), torch.amax(x, dim), torch.max(x, dim=d)[0] or
    .values; dim a constant or a numeric attribute set in __init__."""
    args = [a.arg for a in fn.args.args[1:]]
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(args) != 1 or len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    node = body[0].value
    wants_values = False
    if isinstance(node, ast.Subscript) and _const_int(node.slice) == 0:
        node, wants_values = node.value, True
    elif isinstance(node, ast.Attribute) and node.attr == "values":
        node, wants_values = node.value, True
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    name = node.func.attr
    owner = dotted(node.func.value)
    operands = list(node.args) if owner in ("torch",) else [node.func.value, *node.args]
    if name not in REDUCTIONS or not operands or not (isinstance(operands[0], ast.Name) and operands[0].id == args[0]):
        return None
    if (name in ("max", "min")) != wants_values:
        return None  # max/min without a dim (or amax with [0]) is another computation
    kw = {k.arg: k.value for k in node.keywords if k.arg}
    if set(kw) - {"dim", "keepdim"}:
        return None
    dim_node = kw.get("dim", operands[1] if len(operands) > 1 else None)
    keep_node = kw.get("keepdim", operands[2] if len(operands) > 2 else None)
    dim = _value(dim_node, constants)
    keepdim = _value(keep_node, constants) if keep_node is not None else False
    if not isinstance(dim, int) or isinstance(dim, bool) or not isinstance(keepdim, bool):
        return None
    return name, dim, keepdim


def _value(node: ast.AST | None, constants: dict[str, Any]) -> Any:
    """A constant, or the value of a `self.` attribute set from a constant in __init__."""
    if node is None:
        return None
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return constants.get(node.attr)
    if isinstance(node, ast.Constant):
        return node.value
    return _const_int(node)


def _self_constants(tree: ast.Module, model: ast.ClassDef) -> dict[str, Any]:
    """`self.<name>` attributes __init__ sets to a literal, or to a constructor argument whose
    value get_init_inputs() (or the argument's default) gives as a literal."""
    init = next((f for f in model.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    if init is None:
        return {}
    params = [a.arg for a in init.args.args[1:]]
    values = dict(zip(params, _init_input_values(tree), strict=False))
    defaults = init.args.defaults
    for name, default in zip(params[len(params) - len(defaults):], defaults, strict=True):
        if values.get(name) is None and isinstance(default, ast.Constant):
            values[name] = default.value
    out: dict[str, Any] = {}
    for stmt in ast.walk(init):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target = dotted(stmt.targets[0])
        if not target.startswith("self."):
            continue
        if isinstance(stmt.value, ast.Name) and values.get(stmt.value.id) is not None:
            out[target[5:]] = values[stmt.value.id]
        elif isinstance(stmt.value, ast.Constant | ast.UnaryOp):
            value = _value(stmt.value, {})
            if isinstance(value, int | float | bool):
                out[target[5:]] = value
    return out


def _has_matmult_operator(fn: ast.FunctionDef) -> bool:
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult) for n in ast.walk(fn))


def _normalize_dim(shape: ProblemShape) -> None:
    if shape.dim is not None and shape.dim < 0 and shape.rank is not None:
        shape.dim += shape.rank


def _layernorm_dims(tree: ast.Module, model: ast.ClassDef, shape: ProblemShape) -> int:
    """How many trailing dimensions the LayerNorm normalizes (from its constructor argument)."""
    # The argument is usually a constructor parameter fed from get_init_inputs(); read that tuple.
    init_values = _init_input_values(tree)
    init = next((f for f in model.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    if init is None:
        return 0
    param_names = [a.arg for a in init.args.args[1:]]
    for node in ast.walk(init):
        if not (isinstance(node, ast.Call) and dotted(node.func).endswith("LayerNorm")):
            continue
        arg = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "normalized_shape"), None)
        if isinstance(arg, ast.Tuple | ast.List):
            return len(arg.elts)
        if isinstance(arg, ast.Constant):
            return 1
        if isinstance(arg, ast.Name) and arg.id in param_names:
            index = param_names.index(arg.id)
            if index < len(init_values):
                value = init_values[index]
                return len(value) if isinstance(value, tuple | list) else 1
    return 0


def _input_shapes_from_source(tree: ast.Module) -> list[list[int]]:
    """Shapes of get_inputs()'s `torch.randn(a, b, ...)` calls where the sizes are constants.

    Used only when no ReferenceReport is at hand; any shape it cannot read makes it give up.
    """
    constants = _module_constants(tree)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_inputs"), None)
    ret = next((n for n in ast.walk(fn) if isinstance(n, ast.Return)), None) if fn else None
    if ret is None or not isinstance(ret.value, ast.List | ast.Tuple):
        return []
    shapes = []
    for element in ret.value.elts:
        if not isinstance(element, ast.Call):
            return []
        dims = []
        for arg in element.args:
            value = constants.get(arg.id) if isinstance(arg, ast.Name) else _const_int(arg)
            if not isinstance(value, int):
                return []
            dims.append(value)
        shapes.append(dims)
    return shapes


def _module_constants(tree: ast.Module) -> dict[str, Any]:
    constants: dict[str, Any] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            try:
                constants[stmt.targets[0].id] = ast.literal_eval(stmt.value)
            except ValueError:
                pass
    return constants


def _init_input_values(tree: ast.Module) -> list[Any]:
    """The values get_init_inputs() returns, where they are literals or module-level constants."""
    constants = _module_constants(tree)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_init_inputs"), None)
    if fn is None:
        return []
    ret = next((n for n in ast.walk(fn) if isinstance(n, ast.Return)), None)
    if ret is None or not isinstance(ret.value, ast.List | ast.Tuple):
        return []

    def value(node: ast.AST) -> Any:
        if isinstance(node, ast.Name):
            return constants.get(node.id)
        if isinstance(node, ast.Tuple | ast.List):
            return tuple(value(e) for e in node.elts)
        try:
            return ast.literal_eval(node)
        except ValueError:
            return None

    return [value(e) for e in ret.value.elts]

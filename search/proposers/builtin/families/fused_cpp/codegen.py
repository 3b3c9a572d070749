"""A fused program as C++: one loop nest over the rows (or the elements), one pass over each
row per reduction, the operands read where the program needs them."""

from __future__ import annotations

from search.proposers.builtin.fusion.lowering import index_expr, kept_row, needed, reductions, stage
from search.proposers.builtin.fusion.ops import CPP, REDUCE, cpp_literal
from search.proposers.builtin.fusion.program import Program, Step


def kernel(program: Program, lanes: int) -> str:
    """The C++ body: `fused_range` over tasks and the `fused` binding over its operands.

    `lanes`: adjacent rows computed together when the reduced dims are not the innermost
    (their elements then sit side by side in memory); 1 when they are.
    """
    params = "".join(f"const float* __restrict__ {o.name}, " for o in program.operands)
    if program.reduce is None:
        run = _run_length(program)
        body = _elementwise(program) if run == 1 else _runs(program, run)
        tasks = program.numel // run
    else:
        lanes = lanes if program.inner > 1 else 1
        body = _rows(program, lanes)
        tasks = program.outer * -(-program.inner // lanes)
    ptrs = "".join(f"ins[{k}].data_ptr<float>(), " for k in range(len(program.operands)))
    checks = "\n".join(
        f'    TORCH_CHECK(ins[{k}].scalar_type() == torch::kFloat32 && ins[{k}].is_contiguous() && '
        f'ins[{k}].numel() == {_numel(o.shape)}, "operand {k} ({o.ref}) must be contiguous float32 of '
        f'{_numel(o.shape)} elements");' for k, o in enumerate(program.operands))
    out_numel = program.numel if program.step(program.output).level == "full" else program.outer * program.inner
    return f"""// Compiled for several instruction sets, the best one is picked when the library loads.
__attribute__((target_clones("avx512f", "avx2", "default")))
static void fused_range({params}float* __restrict__ out, int64_t begin, int64_t end) {{
{body}
}}

torch::Tensor fused(std::vector<torch::Tensor> ins, int64_t grain) {{
    TORCH_CHECK(ins.size() == {len(program.operands)}, "expected {len(program.operands)} operands");
{checks}
    auto out = torch::empty({{{out_numel}}}, ins[0].options());
    float* o = out.data_ptr<float>();
    at::parallel_for(0, {tasks}, std::max<int64_t>(1, grain / {1 if program.reduce else _run_length(program)}), [&](int64_t begin, int64_t end) {{
        fused_range({ptrs}o, begin, end);
    }});
    return out;
}}
"""


def _numel(shape: list[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _expr(step: Step, program: Program, row: str) -> str:
    """The C++ expression of one step; `row` turns a row value's name into its access."""
    if step.op == "load":
        operand = next(o for o in program.operands if o.name == step.args[0])
        along = "r" if program.reduce else ""
        return f"{operand.name}[{index_expr(program, operand.span, 'i', along=along)}]"
    args = []
    for a in step.args:
        if isinstance(a, float):
            args.append(cpp_literal(a))
        else:
            args.append(row(a) if program.step(a).level == "row" else a)
    return CPP[step.op].format(*args)


def _elementwise(program: Program) -> str:
    lines = [f"        const float {s.name} = {_expr(s, program, str)};" for s in needed(program, [program.output])]
    return ("    for (int64_t i = begin; i < end; ++i) {\n" + "\n".join(lines)
            + f"\n        out[i] = {program.output};\n    }}")


def _run_length(program: Program) -> int:
    """Elements in a run over which every broadcast operand stays the same (a per-channel bias
    over H x W pixels): the loop then reads it once per run, without a division per element."""
    partial = [o for o in program.operands if 1 < _numel(o.shape) < program.numel]
    ends = {o.span[1] for o in partial}
    if len(ends) != 1:
        return 1
    end = ends.pop()
    return _numel(program.shape[end:])


def _runs(program: Program, run: int) -> str:
    """Tasks are runs of `run` elements; broadcast operands are read once per run."""
    steps = needed(program, [program.output])
    fixed = {s.name for s in steps if s.op == "load"
             and 1 < _numel(next(o for o in program.operands if o.name == s.args[0]).shape) < program.numel}
    lines = ["    for (int64_t p = begin; p < end; ++p) {"]
    for s in steps:
        if s.name in fixed:
            operand = next(o for o in program.operands if o.name == s.args[0])
            size = _numel(program.shape[operand.span[0]:operand.span[1]])
            index = "p" if operand.span[0] == 0 else f"(p % {size})"
            lines.append(f"        const float {s.name} = {operand.name}[{index}];")
    lines.append(f"        for (int64_t i = p * {run}; i < (p + 1) * {run}; ++i) {{")
    lines += [f"            const float {s.name} = {_expr(s, program, str)};" for s in steps if s.name not in fixed]
    lines += [f"            out[i] = {program.output};", "        }", "    }"]
    return "\n".join(lines)


def _rows(program: Program, lanes: int) -> str:
    """Row tasks: task t is row block (o, j0..j0+lanes) of the [outer, length, inner] view."""
    inner, length = program.inner, program.length
    laned = lanes > 1
    row = (lambda name: f"{name}[jj]") if laned else (lambda name: name)
    stages = stage(program)
    reds = reductions(program)
    row_steps = [s for s in program.steps if s.level == "row" and not s.op.startswith("reduce_")]
    out_level = program.step(program.output).level

    def each_lane(lines: list[str], depth: str) -> list[str]:
        if not laned:
            return [depth + line for line in lines]
        return ([f"{depth}for (int64_t jj = 0; jj < nj; ++jj) {{"] + [depth + "    " + line for line in lines]
                + [f"{depth}}}"])

    def row_block(k: int) -> list[str]:
        lines = [f"{row(s.name)} = {_expr(s, program, row)};" for s in row_steps if stages[s.name] == k]
        return each_lane(lines, "        ") if lines else []

    kept = kept_row(program)
    stop = frozenset([kept]) if kept else frozenset()
    slot = "r * LANES + jj" if laned else "r"

    def computed(roots: list[str], first: bool) -> list[str]:
        """Statements for `roots`; the kept row value is stored by the first pass, read after."""
        lines = []
        for s in needed(program, roots, frozenset() if first else stop):
            if s.name == kept and not first:
                lines.append(f"const float {s.name} = row[{slot}];")
                continue
            lines.append(f"const float {s.name} = {_expr(s, program, row)};")
            if s.name == kept:
                lines.append(f"row[{slot}] = {s.name};")
        return lines

    def over_row(lines: list[str]) -> list[str]:
        index = "(o * LENGTH + r) * INNER + j0 + jj" if laned else "o * LENGTH + r"
        body = [f"const int64_t i = {index};"] + lines
        return (["        for (int64_t r = 0; r < LENGTH; ++r) {"] + each_lane(body, "            ")
                + ["        }"])

    declare = "float {0}[LANES];" if laned else "float {0};"
    out = [f"    constexpr int64_t LENGTH = {length}, INNER = {inner}, LANES = {lanes};"]
    if laned:
        out.append(f"    constexpr int64_t BLOCKS = {-(-inner // lanes)};")
    if kept:
        out.append("    std::vector<float> row(LENGTH * LANES);  // the first pass's values, for the later passes")
    out.append("    for (int64_t t = begin; t < end; ++t) {")
    if laned:
        out += ["        const int64_t o = t / BLOCKS, j0 = (t % BLOCKS) * LANES;",
                "        const int64_t nj = std::min<int64_t>(LANES, INNER - j0);"]
    else:
        out += ["        const int64_t o = t;"]
    out += ["        " + declare.format(s.name) for s in program.steps if s.level == "row"]
    out += row_block(0)
    for k, red in enumerate(reds):
        init, combine, _, _ = REDUCE[red.op.removeprefix("reduce_")]
        out += each_lane([f"{row(red.name)} = {init};"], "        ")
        src = red.args[0]
        lines = computed([src], k == 0)
        lines.append(f"{row(red.name)} = {combine.format(acc=row(red.name), v=src)};")
        out += over_row(lines)
        out += row_block(k + 1)
    if out_level == "full":
        lines = computed([program.output], False)
        lines.append(f"out[i] = {program.output};")
        out += over_row(lines)
    else:
        target = "out[o * INNER + j0 + jj]" if laned else "out[o]"
        out += each_lane([f"{target} = {row(program.output)};"], "        ")
    out.append("    }")
    return "\n".join(out)

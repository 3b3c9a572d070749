"""Which kernel families can compute each KernelBench problem, read from its captured graph.

    python benchmarks/family_coverage.py ../shared/kernelbench --level 2

For every file: capture the forward's graph under fake tensors (no full-size tensor is made),
read the pattern and the fusable tail, and render one candidate of every family that matches
(a family that matches but cannot render is counted as a failure). Prints per level how many
problems each family serves. Imports the reference module in this process (KernelBench's own
files, never a user's).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpurunner.graph import capture_module  # noqa: E402
from search.proposers.builtin.analysis import analyze  # noqa: E402
from search.proposers.builtin.families import registry  # noqa: E402
from search.proposers.builtin.recipe import Recipe  # noqa: E402
from search.proposers.builtin.render import render  # noqa: E402


def coverage(path: Path) -> dict:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - a file that does not import is reported
        return {"error": f"import: {exc}"}
    graph = capture_module(module)
    if not graph.get("captured"):
        return {"error": f"capture: {graph.get('reason')}"}
    source = path.read_text()
    inputs = [i for i in graph["inputs"] if i["kind"] == "input"]
    shape = analyze(source, {"graph": graph, "input_shapes": [i["shape"] for i in inputs],
                             "input_dtypes": [i["dtype"] for i in inputs]})
    served, failed = [], []
    for name, family in registry().items():
        if name == "reference" or not family.matches(shape):
            continue
        params = family.points(shape)[0] if family.points else dict(family.defaults)
        try:
            render(Recipe(name, params, {}), shape, source)
            served.append(name)
        except (ValueError, KeyError) as exc:
            failed.append(f"{name}: {exc}")
    return {"pattern": shape.pattern, "served": served, "failed": failed,
            "fused": shape.program.describe() if shape.program else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--level", type=int, action="append")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = {}
    for level in args.level or [1, 2, 3]:
        counts: collections.Counter[str] = collections.Counter()
        files = sorted((args.folder / f"level{level}").glob("*.py"))
        for path in files:
            row = coverage(path)
            rows[f"level{level}/{path.name}"] = row
            counts.update(row.get("served", []))
            counts["any generated kernel"] += bool({"fused_cpp", "fused_triton"} & set(row.get("served", [])))
            counts["capture failed"] += "error" in row
            counts["render failed"] += bool(row.get("failed"))
            print(f"level{level}/{path.name}: {row}", flush=True)
        print(f"== level {level}: {len(files)} files; " + ", ".join(f"{k} {v}" for k, v in counts.most_common()),
              flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

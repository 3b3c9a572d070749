"""A validated reference problem: its source, cache key and the report its validation made."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

ITEMSIZE = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4,
            "int16": 2, "int8": 1, "uint8": 1, "bool": 1, "complex64": 8, "complex128": 16}


@dataclass
class Problem:
    """A reference that passed validation. Holds no outputs: those are computed, for every
    trial and timed call, by the trusted reference worker of the evaluation."""

    source: str
    key: str
    report: dict[str, Any]
    cache_dir: Path

    def tensor_bytes(self, which: str) -> int:
        """Bytes of the reference's tensor inputs (`which="input"`) or outputs ("output")."""
        total = 0
        for shape, dtype in zip(self.report.get(f"{which}_shapes", []),
                                self.report.get(f"{which}_dtypes", []), strict=False):
            if dtype not in ITEMSIZE:
                continue
            n = ITEMSIZE[dtype]
            for d in shape:
                n *= int(d)
            total += n
        return total

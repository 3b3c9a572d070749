"""Import a reference or candidate source as a module and point errors at its lines.

Runs inside the sandboxed worker only: importing a source executes it.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType


class SourceError(Exception):
    """A problem in a user's source, with the line it points at when known."""

    def __init__(self, message: str, line: int | None = None, kind: str = "error",
                 detail: str = ""):
        super().__init__(message)
        self.message = message
        self.line = line
        self.kind = kind  # "syntax", "missing", "type", "raised", "build"
        self.detail = detail


def error_line(exc: BaseException, filename: str) -> int | None:
    """The deepest line of `filename` in the traceback of `exc` (SyntaxError: its own line)."""
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        return exc.lineno
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == filename:
            line = frame.lineno
    return line


def short_traceback(exc: BaseException, limit_chars: int = 6000) -> str:
    """The formatted traceback, cut from the front to `limit_chars`."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return text[-limit_chars:]


def check_syntax(source: str, filename: str) -> None:
    """Raise SourceError(kind="syntax") naming the line when `source` does not parse."""
    try:
        ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise SourceError(f"syntax error on line {exc.lineno}: {exc.msg}", exc.lineno,
                          "syntax") from exc


def definition_line(source: str, name: str) -> int | None:
    """The line where `name` is defined at module level (class, def or assignment)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef) and node.name == name:
            return node.lineno
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    return node.lineno
    return None


def method_line(source: str, class_name: str, method: str) -> int | None:
    """The line of `class_name.method` (e.g. Model.forward) when it is defined in `source`."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == method:
                    return item.lineno
            return node.lineno
    return None


def import_source(path: Path, module_name: str) -> ModuleType:
    """Execute the file at `path` as module `module_name` (a real file, so Triton and
    tracebacks can read its source). Exceptions propagate unchanged."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def require(module: ModuleType, source: str, names: list[str], what: str) -> None:
    """Raise SourceError(kind="missing") for the first of `names` the module lacks."""
    for name in names:
        if not hasattr(module, name):
            raise SourceError(f"the {what} defines no `{name}`", None, "missing")
        if not callable(getattr(module, name)):
            raise SourceError(f"`{name}` in the {what} is not callable",
                              definition_line(source, name), "type")

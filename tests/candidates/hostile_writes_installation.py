"""Hostile: plants a .pth file in the interpreter's site-packages (it would run at the next
Python start, as the runner), rewrites the harness's judge, and writes into the folders
where builds and the project live."""
import os
import site
import sys

import torch
import torch.nn as nn

import gpurunner

MARKER = "__MARKER__"
_targets = [os.path.join(d, f"{MARKER}.pth") for d in site.getsitepackages()]
_targets.append(os.path.join(sys.base_prefix, f"{MARKER}.pth"))
_package = os.path.dirname(gpurunner.__file__)
_targets.append(os.path.join(_package, f"{MARKER}.py"))
_targets += ["/usr/lib/" + MARKER, "/ext/../" + MARKER, "/" + MARKER]
_written = []
for path in _targets:
    try:
        with open(path, "w") as f:
            f.write("import os; os.system('id')\n")
        _written.append(path)
    except OSError:
        pass
try:
    with open(os.path.join(_package, "judge.py"), "a") as f:
        f.write("\n# rewritten\n")
    _written.append("judge.py")
except OSError:
    pass


class ModelNew(nn.Module):
    def forward(self, x):
        if _written:
            raise RuntimeError(f"wrote outside the sandbox: {_written}")
        return torch.softmax(x, dim=-1)

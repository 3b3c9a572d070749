"""Broken: the C++ does not compile (an undeclared name on line 6 of cpp_sources)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = """
#include <torch/extension.h>

torch::Tensor softmax_rows(torch::Tensor x) {
    auto out = torch::empty_like(x);
    undeclared_helper(out);
    return out;
}
"""

module = load_inline(name="softmax_rows_broken", cpp_sources=cpp_source,
                     functions=["softmax_rows"], verbose=True)


class ModelNew(nn.Module):
    def forward(self, x):
        return module.softmax_rows(x)

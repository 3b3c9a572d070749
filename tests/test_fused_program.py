"""The fusable tail of a reference's graph, read as a program of scalar steps: what the
generated kernels compute, and what they leave out."""

from __future__ import annotations

import pytest

from search.proposers.builtin.fusion.program import read_program
from tests.fixtures.graphs import capture
from tests.fixtures.runner import reference_source


def program_of(name: str):
    return read_program(capture(reference_source(name)))


def test_a_gemm_epilogue_keeps_the_gemm_and_reads_its_output_and_the_parameters():
    program = program_of("graph_linear_gelu_layernorm")
    assert [n["target"] for n in program.prefix][-2:] == ["aten.addmm.default", "aten.view.default"]
    assert program.shape == [4, 8, 96] and program.reduce == (2, 3)
    # The GEMM's output varies over every dimension; the scale and LayerNorm's affine over the last.
    assert [(o.ref, o.span) for o in program.operands] == [
        ("view_1", (0, 3)), ("scale", (2, 3)), ("norm_weight", (2, 3)), ("norm_bias", (2, 3))]


def test_a_per_channel_bias_after_a_convolution_is_read_by_channel():
    program = program_of("graph_conv_bias_relu_mean")
    assert program.producer == "convolution"
    bias = next(o for o in program.operands if o.ref == "bias")
    assert bias.shape == [16, 1, 1] and bias.span == (1, 2)
    assert program.reduce == (1, 2) and program.inner == 100 and program.out_shape == [2, 1, 10, 10]


def test_group_normalization_splits_the_channels_into_groups():
    program = program_of("graph_conv_groupnorm_elu")
    # [N, C, H, W] read as [N, groups, C / groups, H, W]; each group of channels is one row.
    assert program.shape == [2, 4, 3, 8, 8] and program.reduce == (2, 5) and program.length == 3 * 64
    assert {o.ref: o.span for o in program.operands}["norm_weight"] == (1, 3)


def test_an_operator_that_ends_the_forward_runs_after_the_kernel():
    program = program_of("graph_conv_scale_tanh_pool")
    assert [n["target"] for n in program.suffix] == ["aten.avg_pool2d.default"]
    assert program.fused == ["sub", "tanh", "sub"] and program.out_shape == [2, 8, 12, 12]


def test_softmax_and_logsumexp_share_the_rows_of_the_matrix_product():
    program = program_of("graph_matmul_softmax_logsumexp")
    assert program.producer == "batched matrix product" and program.reduce == (2, 3)
    assert [s.op for s in program.steps if s.op.startswith("reduce_")] == [
        "reduce_max", "reduce_sum", "reduce_max", "reduce_sum"]


def test_reductions_over_a_dimension_of_size_one_are_the_value_itself():
    program = program_of("graph_matmul_sum_max_lse")
    assert [s.op for s in program.steps if s.op.startswith("reduce_")] == ["reduce_sum"]
    assert program.step(program.output).level == "row"


@pytest.mark.parametrize("forward", [
    "return torch.cumsum(x, dim=1)",                       # no lowering
    "return x.sum(dim=1, keepdim=True) + x.sum(dim=2, keepdim=True)",  # two reduction blocks
    "return x[:, :1] * x[:, :, :1]",                         # a broadcast no span describes
    "return x.sum(dim=(0, 2))",                             # reduced dims that are not adjacent
])
def test_a_tail_the_kernels_cannot_compute_has_no_program(forward):
    source = ("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
              f"    def forward(self, x):\n        {forward}\n\n\n"
              "def get_inputs():\n    return [torch.randn(3, 5, 5)]\n\n\n"
              "def get_init_inputs():\n    return []\n")
    assert read_program(capture(source)) is None

"""The kernel library finds kept kernels of problems that run the same operators."""

from __future__ import annotations

from search.engine.library import operator_signature, similar_kernels, similarity


def info(ops, shape, dtype="float32"):
    return {"operators": ops, "input_shapes": [shape], "input_dtypes": [dtype],
            "output_shapes": [shape], "output_dtypes": [dtype]}


SOFTMAX = operator_signature(info(["aten::_softmax.default"], [256, 4096]))


def test_a_signature_names_the_operators_and_shapes():
    assert SOFTMAX == "ops=aten.softmax;in=float32[256x4096];out=float32[256x4096]"


def test_overload_names_and_operator_order_do_not_change_the_signature():
    a = operator_signature(info(["aten.add.Tensor", "aten.gelu.default"], [8, 8]))
    b = operator_signature(info(["aten::gelu", "aten::add.Scalar", "aten::add.Tensor"], [8, 8]))
    assert a == b


def test_the_same_operators_on_other_shapes_are_similar_but_less_so():
    other_shape = operator_signature(info(["aten.softmax.int"], [128, 1024]))
    other_rank = operator_signature(info(["aten.softmax.int"], [4, 128, 1024]))
    layernorm = operator_signature(info(["aten.native_layer_norm.default"], [256, 4096]))
    assert similarity(SOFTMAX, SOFTMAX) == 1.0
    assert similarity(SOFTMAX, other_shape) == 0.8
    assert similarity(SOFTMAX, other_rank) == 0.5
    assert similarity(SOFTMAX, layernorm) == 0.0


def test_similar_kernels_keeps_the_most_similar_above_the_threshold():
    kept = [
        (operator_signature(info(["aten.native_layer_norm"], [256, 4096])), "layernorm kernel"),
        (operator_signature(info(["aten.softmax"], [64, 64])), "small softmax kernel"),
        (SOFTMAX, "same softmax kernel"),
    ]
    assert similar_kernels(SOFTMAX, kept) == ["same softmax kernel", "small softmax kernel"]
    assert similar_kernels(SOFTMAX, kept, limit=1) == ["same softmax kernel"]


def test_a_long_operator_list_fits_the_signature_column():
    many = operator_signature(info([f"aten.op{i}" for i in range(200)], [2, 2]))
    assert len(many) <= 500 and many.endswith(";in=float32[2x2];out=float32[2x2]")

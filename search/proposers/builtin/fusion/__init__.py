"""Generated fused kernels: the tail of a reference's graph (elementwise ops, row reductions
and normalizations after a matrix product, a convolution or an input) as one program that
the generated-kernel families write in C++ or Triton."""

"""How bench/gpu's scripts call a generated kernel (docs/kernel-abi.md):
memref arguments flattened into kernel parameters. Shared by gpu_check.py
and gpu_families.py."""


def cdiv(a, b):
    return (a + b - 1) // b


def param_count(args):
    """Kernel parameters of `args`: a rank-R memref is 3 + 2R of them."""
    return sum(3 + 2 * len(a["shape"]) for a in args)


def memref_params(tensor, sizes):
    """A memref descriptor flattened: allocated, aligned, offset, sizes, strides."""
    import numpy as np
    strides = [1] * len(sizes)
    for i in range(len(sizes) - 2, -1, -1):
        strides[i] = strides[i + 1] * sizes[i + 1]
    ptr = np.uint64(tensor.data_ptr())
    return [ptr, ptr, np.int64(0)] + [np.int64(v) for v in sizes] + [np.int64(v) for v in strides]

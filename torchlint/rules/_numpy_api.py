"""The NumPy functions Dynamo traces: what `torch._numpy` implements on torch 2.13.

With `trace_numpy` on (the default) Dynamo runs NumPy calls through `torch._numpy`; a call
it has no counterpart for stops the graph. `tests/test_numpy_calls.py` checks these sets
against the installed torch.
"""

from __future__ import annotations

TRACED = frozenset(
    {
        "AxisError", "DType", "UFuncTypeError", "abs", "absolute", "add", "all", "allclose", "alltrue",
        "amax", "amin", "angle", "any", "append", "arange", "arccos", "arccosh", "arcsin", "arcsinh",
        "arctan", "arctan2", "arctanh", "argmax", "argmin", "argsort", "argwhere", "around", "array",
        "array_equal", "array_equiv", "array_split", "asarray", "ascontiguousarray", "atleast_1d",
        "atleast_2d", "atleast_3d", "average", "bartlett", "bincount", "bitwise_and", "bitwise_not",
        "bitwise_or", "bitwise_xor", "blackman", "bool_", "broadcast_arrays", "broadcast_shapes",
        "broadcast_to", "byte", "can_cast", "cbrt", "cdouble", "ceil", "cfloat", "choose", "clip",
        "column_stack", "common_type", "complex128", "complex64", "complex_", "complexfloating",
        "concatenate", "conj", "conjugate", "convolve", "copy", "copysign", "copyto", "corrcoef",
        "correlate", "cos", "cosh", "count_nonzero", "cov", "cross", "csingle", "cumprod", "cumproduct",
        "cumsum", "deg2rad", "degrees", "diag", "diag_indices", "diag_indices_from", "diagflat",
        "diagonal", "diff", "divide", "divmod", "dot", "double", "dsplit", "dstack", "dtype", "einsum",
        "empty", "empty_like", "equal", "exp", "exp2", "expand_dims", "expm1", "eye", "fabs",
        "fill_diagonal", "finfo", "fix", "flatnonzero", "flip", "fliplr", "flipud", "float16",
        "float32", "float64", "float_", "float_power", "floating", "floor", "floor_divide", "fmax",
        "fmin", "fmod", "from_dlpack", "full", "full_like", "gcd", "generic", "geomspace", "gradient",
        "greater", "greater_equal", "half", "hamming", "hanning", "heaviside", "histogram",
        "histogram2d", "histogramdd", "hsplit", "hstack", "hypot", "i0", "identity", "iinfo", "imag",
        "indices", "inexact", "inner", "int16", "int32", "int64", "int8", "int_", "intc", "integer",
        "intp", "invert", "isclose", "iscomplex", "iscomplexobj", "isfinite", "isinf", "isnan",
        "isneginf", "isposinf", "isreal", "isrealobj", "isscalar", "issubdtype", "kaiser", "kron",
        "lcm", "ldexp", "left_shift", "less", "less_equal", "linspace", "log", "log10", "log1p", "log2",
        "logaddexp", "logaddexp2", "logical_and", "logical_not", "logical_or", "logical_xor",
        "logspace", "longlong", "matmul", "max", "maximum", "mean", "median", "meshgrid", "min",
        "min_scalar_type", "minimum", "mod", "modf", "moveaxis", "multiply", "nan_to_num", "ndarray",
        "ndim", "negative", "nextafter", "nonzero", "not_equal", "number", "ones", "ones_like", "outer",
        "pad", "percentile", "positive", "power", "prod", "product", "ptp", "put", "put_along_axis",
        "quantile", "rad2deg", "radians", "ravel", "real", "real_if_close", "reciprocal", "remainder",
        "repeat", "reshape", "resize", "result_type", "right_shift", "rint", "roll", "rollaxis",
        "rot90", "round", "round_", "row_stack", "searchsorted", "set_default_dtype", "shape", "short",
        "sign", "signbit", "signedinteger", "sin", "sinc", "single", "singlecomplex", "sinh", "size",
        "sometrue", "sort", "split", "sqrt", "square", "squeeze", "stack", "std", "subtract", "sum",
        "swapaxes", "take", "take_along_axis", "tan", "tanh", "tensordot", "tile", "trace", "transpose",
        "tri", "tril", "tril_indices", "tril_indices_from", "triu", "triu_indices", "triu_indices_from",
        "true_divide", "trunc", "ubyte", "uint16", "uint32", "uint64", "uint8", "ulonglong", "unique",
        "unsignedinteger", "vander", "var", "vdot", "vsplit", "vstack", "where", "zeros", "zeros_like"
    }
)

TRACED_RANDOM = frozenset(
    {
        "choice", "normal", "rand", "randint", "randn", "random", "random_sample", "sample", "seed",
        "shuffle", "uniform"
    }
)

TRACED_LINALG = frozenset(
    {
        "cholesky", "cond", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv",
        "lstsq", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr",
        "slogdet", "solve", "svd", "tensorinv", "tensorsolve"
    }
)

TRACED_FFT = frozenset(
    {
        "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn", "ifftshift",
        "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"
    }
)

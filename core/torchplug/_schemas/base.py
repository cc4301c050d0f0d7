"""The foundation's operator rows: first op set of the cpu/meta backends (see the package docstring)."""

from __future__ import annotations

__all__ = ["ROWS"]

_UNARY_FLOAT = "abs neg exp log sqrt rsqrt sin cos tan tanh sigmoid reciprocal log1p expm1 log2 log10 exp2 floor ceil trunc sign asin acos atan sinh cosh asinh acosh atanh frac square"
_BINARY = "mul maximum minimum remainder fmod atan2 floor_divide logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift"
_COMPARE = "eq ne lt le gt ge"

_FACTORY_KW = "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"

ROWS = (
    # ---- pointwise, unary -------------------------------------------------------------------
    *(f"{name}(Tensor self) -> Tensor | inplace out pointwise" for name in _UNARY_FLOAT.split()),
    # round and round.decimals in one row: decimals=None is the plain round (integers pass through)
    "round(Tensor self, *, int? decimals=None) -> Tensor | inplace out pointwise",
    "relu(Tensor self) -> Tensor | inplace pointwise",
    "logical_not(Tensor self) -> Tensor | inplace out pointwise",
    "bitwise_not(Tensor self) -> Tensor | inplace out pointwise",
    "isnan(Tensor self) -> Tensor | pointwise",
    "isinf(Tensor self) -> Tensor | pointwise",
    "isfinite(Tensor self) -> Tensor | pointwise",
    "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor | inplace out pointwise",
    "clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor | inplace out=Tensor_out pointwise",
    # ---- pointwise, binary (Python numbers accepted for Tensor arguments) ------------------------
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor | wrapped inplace out pointwise",
    "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor | wrapped inplace out pointwise",
    "div.Tensor(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor | wrapped inplace out pointwise",
    "pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor | wrapped inplace out pointwise",
    *(f"{name}.Tensor(Tensor self, Tensor other) -> Tensor | wrapped inplace out pointwise" for name in _COMPARE.split()),
    *(f"{name}(Tensor self, Tensor other) -> Tensor | wrapped inplace out pointwise" for name in _BINARY.split()),
    "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor | wrapped out pointwise",
    "lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor | wrapped inplace out pointwise",
    "addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor | inplace out pointwise",
    "addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor | inplace out pointwise",
    "masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor | inplace pointwise",
    "masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor | inplace pointwise",
    # ---- reductions ---------------------------------------------------------------------------
    "sum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor | out reduction",
    "mean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor | out reduction",
    "prod(Tensor self, int? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor | out reduction",
    "amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor | out reduction",
    "amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor | out reduction",
    "max(Tensor self) -> Tensor | reduction",
    "min(Tensor self) -> Tensor | reduction",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices) | reduction",
    "min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices) | reduction",
    "argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor | out reduction",
    "argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor | out reduction",
    "var(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor | out reduction",
    "std(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor | out reduction",
    "all(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor | out reduction",
    "any(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor | out reduction",
    # ---- linear algebra -----------------------------------------------------------------------
    "mm(Tensor self, Tensor mat2) -> Tensor | out",
    "bmm(Tensor self, Tensor mat2) -> Tensor | out",
    "mv(Tensor self, Tensor vec) -> Tensor | out",
    "dot(Tensor self, Tensor tensor) -> Tensor | out",
    "matmul(Tensor self, Tensor other) -> Tensor | out composite",
    "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor | inplace out",
    # ---- joining / splitting --------------------------------------------------------------------
    "cat(Tensor[] tensors, int dim=0) -> Tensor | out",
    "stack(Tensor[] tensors, int dim=0) -> Tensor | out composite",
    "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[] | view composite",
    "split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[] | view composite",
    "chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[] | view composite",
    "unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[] | view composite",
    # ---- indexing -----------------------------------------------------------------------------
    "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor | out",
    "scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor | inplace out",
    "scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor | inplace out",
    "scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor | inplace out",
    # scatter(reduce='add'|'multiply'): own overloads, as PyTorch's, because autograd refuses them (see scatter_reduce)
    "scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor | inplace out composite",
    "scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor | inplace out composite",
    "index_select(Tensor self, int dim, Tensor index) -> Tensor | out",
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor | inplace",
    "nonzero(Tensor self) -> Tensor | out",
    # ---- copies, fills, conversion ---------------------------------------------------------------
    "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
    "fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)",
    "zero_(Tensor(a!) self) -> Tensor(a!) | composite",
    "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor | composite",
    "_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor | composite",
    # ---- views (composites over as_strided; backends may override for speed) --------------------
    "as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a) | view",
    "view(Tensor(a) self, SymInt[] size) -> Tensor(a) | view composite",
    "view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a) | view",
    "reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a) | composite",
    "permute(Tensor(a) self, int[] dims) -> Tensor(a) | view composite",
    "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a) | view composite",
    "t(Tensor(a) self) -> Tensor(a) | view composite",
    "expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a) | view composite",
    "squeeze(Tensor(a) self, int[1]? dim=None) -> Tensor(a) | view composite",
    "unsqueeze(Tensor(a) self, int dim) -> Tensor(a) | view composite",
    "narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a) | view composite",
    "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a) | view composite",
    "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a) | view composite",
    "unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a) | view composite",
    "diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a) | view composite",
    "alias(Tensor(a) self) -> Tensor(a) | view composite",
    "detach(Tensor(a) self) -> Tensor(a) | view composite",
    "flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a) | composite",
    # ---- factories (no tensor arguments: BackendSelect picks the device) ------------------------
    f"empty.memory_format(SymInt[] size, {_FACTORY_KW}, MemoryFormat? memory_format=None) -> Tensor | factory",
    f"empty_strided(SymInt[] size, SymInt[] stride, {_FACTORY_KW}) -> Tensor | factory",
    f"zeros(SymInt[] size, {_FACTORY_KW}) -> Tensor | factory composite",
    f"ones(SymInt[] size, {_FACTORY_KW}) -> Tensor | factory composite",
    f"full(SymInt[] size, Scalar fill_value, {_FACTORY_KW}) -> Tensor | factory composite",
    f"arange.start_step(Scalar start, Scalar end, Scalar step=1, {_FACTORY_KW}) -> Tensor | factory",
    f"linspace(Scalar start, Scalar end, int steps, {_FACTORY_KW}) -> Tensor | factory",
    f"logspace(Scalar start, Scalar end, int steps, float base=10.0, {_FACTORY_KW}) -> Tensor | factory",
    f"eye.m(SymInt n, SymInt m, {_FACTORY_KW}) -> Tensor | factory",
    f"randperm(SymInt n, *, Generator? generator=None, ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor | factory",
    # ---- random (in place on an allocated tensor; factories are composites) --------------------
    "uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None) -> Tensor(a!) | random",
    "normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None) -> Tensor(a!) | random",
    "random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None) -> Tensor(a!) | random",
    "random_(Tensor(a!) self, *, Generator? generator=None) -> Tensor(a!) | random",
    "bernoulli(Tensor self, *, Generator? generator=None) -> Tensor | random",
    "bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!) | random",
    "bernoulli_.Tensor(Tensor(a!) self, Tensor p, *, Generator? generator=None) -> Tensor(a!) | random",
    "bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor | random",
    "multinomial(Tensor self, int num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor | random",
    "exponential_(Tensor(a!) self, float lambd=1, *, Generator? generator=None) -> Tensor(a!) | random",
    "geometric_(Tensor(a!) self, float p, *, Generator? generator=None) -> Tensor(a!) | random",
    "log_normal_(Tensor(a!) self, float mean=1, float std=2, *, Generator? generator=None) -> Tensor(a!) | random",
    "cauchy_(Tensor(a!) self, float median=0, float sigma=1, *, Generator? generator=None) -> Tensor(a!) | random",
    "poisson(Tensor self, Generator? generator=None) -> Tensor | random",
)

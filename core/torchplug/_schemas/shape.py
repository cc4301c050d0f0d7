"""Shape and indexing rows: flips and rolls, repeats, triangles and diagonals, index_*/take, scatter_reduce,
searchsorted, splitting/stacking helpers and the ``*_scatter`` family (see the package docstring)."""

from __future__ import annotations

__all__ = ["ROWS"]

_FACTORY_KW = "*, ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? pin_memory=None"

ROWS = (
    # ---- views and reorderings (composites over view ops) ---------------------------------------
    "movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a) | view composite",
    # reshape of a fresh result (mm, clone) that autograd records as UnsafeViewBackward0, not as a view
    "_unsafe_view(Tensor self, SymInt[] size) -> Tensor",
    # reshape of a non-contiguous tensor that is still viewable: a view recorded as ReshapeAliasBackward0
    "_reshape_alias(Tensor(a) self, SymInt[] size, SymInt[] stride) -> Tensor(a) | view",
    # the diagonal as a new tensor (diag of a matrix): recorded as DiagonalBackward0_copy, as PyTorch's
    "diagonal_copy(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor",
    "unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a) | view composite",
    "broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a) | view composite",
    "broadcast_tensors(Tensor[] tensors) -> Tensor[] | view composite",
    "tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[] | view composite",
    "tensor_split.indices(Tensor(a -> *) self, SymInt[] indices, int dim=0) -> Tensor(a)[] | view composite",
    "meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[] | view composite",
    "atleast_1d(Tensor self) -> Tensor | composite",
    "atleast_2d(Tensor self) -> Tensor | composite",
    "atleast_3d(Tensor self) -> Tensor | composite",
    # ---- copies that reorder or repeat ---------------------------------------------------------
    "flip(Tensor self, int[] dims) -> Tensor | out",
    "fliplr(Tensor self) -> Tensor | composite",
    "flipud(Tensor self) -> Tensor | composite",
    "roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor | out composite",
    "rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor | out composite",
    "repeat(Tensor self, SymInt[] repeats) -> Tensor | out composite",
    "tile(Tensor self, SymInt[] dims) -> Tensor | composite",
    "repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor",
    "repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor | composite",
    "repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor | composite",
    "narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor | out composite",
    # ---- joining ----------------------------------------------------------------------------------
    "hstack(Tensor[] tensors) -> Tensor | out composite",
    "vstack(Tensor[] tensors) -> Tensor | out composite",
    "dstack(Tensor[] tensors) -> Tensor | out composite",
    "column_stack(Tensor[] tensors) -> Tensor | out composite",
    "cartesian_prod(Tensor[] tensors) -> Tensor | composite",
    "block_diag(Tensor[] tensors) -> Tensor | out composite",
    "combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor | composite",
    # ---- triangles and diagonals --------------------------------------------------------------------
    "tril(Tensor self, SymInt diagonal=0) -> Tensor | inplace out",
    "triu(Tensor self, SymInt diagonal=0) -> Tensor | inplace out",
    "diag(Tensor self, int diagonal=0) -> Tensor | out composite",
    "diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor | out composite",
    "diagflat(Tensor self, int offset=0) -> Tensor | out composite",
    "trace(Tensor self) -> Tensor | composite",
    f"tril_indices(int row, int col, int offset=0, {_FACTORY_KW}) -> Tensor | factory composite",
    f"triu_indices(int row, int col, int offset=0, {_FACTORY_KW}) -> Tensor | factory composite",
    # ---- scatters into views (functional) -------------------------------------------------------
    "select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor | out composite",
    "slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor | out composite",
    "diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor | out composite",
    # ---- indexing -----------------------------------------------------------------------------------
    "masked_select(Tensor self, Tensor mask) -> Tensor | out composite",
    "masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor | inplace",
    "index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor | inplace out",
    "index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor | inplace out",
    "index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor | inplace",
    "index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor | inplace",
    "take(Tensor self, Tensor index) -> Tensor | out",
    "take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor | out composite",
    "argwhere(Tensor self) -> Tensor | composite",
    "scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor | inplace out=two_out",
    "searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> Tensor | out=Tensor_out",
    "bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor | out=Tensor_out composite",
)

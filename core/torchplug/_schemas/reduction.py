"""Reduction rows beyond the foundation: scans, sorting and selection, order statistics, counting."""

from __future__ import annotations

__all__ = ["ROWS"]

_VALUES_INDICES = "(Tensor values, Tensor indices)"
_UNIQUE = "(Tensor, Tensor, Tensor)"

ROWS = (
    # ---- reductions ----------------------------------------------------------------------------
    "logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor | out reduction",
    "linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor | out reduction",
    # at::norm(x, p, dim) of the composites (pairwise_distance): NormBackward1 where torch.norm records
    # LinalgVectorNormBackward0
    "norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor | reduction composite",
    "nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor | out reduction",
    "nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor | out reduction composite",
    "count_nonzero(Tensor self, int[1]? dim=None) -> Tensor | reduction composite",
    "var_mean(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor) | reduction composite",
    "std_mean(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor) | reduction composite",
    "aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max) | reduction",
    # ---- scans ------------------------------------------------------------------------------------
    "cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor | inplace out",
    "cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor | inplace out",
    f"cummax(Tensor self, int dim) -> {_VALUES_INDICES}",
    f"cummin(Tensor self, int dim) -> {_VALUES_INDICES}",
    # ---- sorting and selection ----------------------------------------------------------------------
    f"sort(Tensor self, int dim=-1, bool descending=False, *, bool? stable=False) -> {_VALUES_INDICES}",
    "argsort(Tensor self, int dim=-1, bool descending=False, *, bool stable=False) -> Tensor | composite",
    "msort(Tensor self) -> Tensor | out composite",
    f"topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> {_VALUES_INDICES}",
    f"kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> {_VALUES_INDICES} | reduction",
    "median(Tensor self) -> Tensor | reduction",
    f"median.dim(Tensor self, int dim, bool keepdim=False) -> {_VALUES_INDICES} | reduction",
    "nanmedian(Tensor self) -> Tensor | reduction",
    f"nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> {_VALUES_INDICES} | reduction",
    f"mode(Tensor self, int dim=-1, bool keepdim=False) -> {_VALUES_INDICES} | reduction",
    "quantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation='linear') -> Tensor | out reduction",
    "nanquantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation='linear') -> Tensor | out reduction",
    # ---- uniqueness and counting (data-dependent output shapes) ---------------------------------------
    f"_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> {_UNIQUE}",
    f"unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> {_UNIQUE}",
    f"unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) -> {_UNIQUE}",
    "bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor",
    "histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor | out",
)

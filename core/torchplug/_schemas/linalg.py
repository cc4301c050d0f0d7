"""Linear-algebra rows: products built on mm/bmm (outer, addmv, baddbmm, einsum, tensordot, kron...) and
the ``torchplug.linalg`` decompositions and norms (see the package docstring)."""

from __future__ import annotations

__all__ = ["ROWS"]

ROWS = (
    # ---- products (composites over mm/bmm/mul) ------------------------------------------------------
    "outer(Tensor self, Tensor vec2) -> Tensor | out composite",
    "addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor | inplace out composite",
    "addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor | inplace out composite",
    "baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor | inplace out composite",
    "addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor | inplace out composite",
    "einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor | composite",
    "tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor | out composite",
    "kron(Tensor self, Tensor other) -> Tensor | out composite",
    "linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor | out composite",
    "cross(Tensor self, Tensor other, int? dim=None) -> Tensor | out composite",
    "cdist(Tensor x1, Tensor x2, float p=2., int? compute_mode=None) -> Tensor | composite",
    # the distances without the matrix-product route: one CdistBackward0 node (cdist calls it as ATen does)
    "_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor | composite",
    "_pdist_forward(Tensor self, float p=2) -> Tensor | composite",  # torch.pdist's op: one PdistBackward0 node
    "inner(Tensor self, Tensor other) -> Tensor | out composite",
    "vdot(Tensor self, Tensor other) -> Tensor | out",
    "matrix_power(Tensor self, int n) -> Tensor | out composite",
    "chain_matmul(Tensor[] matrices) -> Tensor | out composite",
    "linalg_multi_dot(Tensor[] tensors) -> Tensor | out composite",
    # ---- torchplug.linalg: primitives (cpu: NumPy's LAPACK; meta: shape rules) -------------------------
    "linalg_inv(Tensor A) -> Tensor | out",
    "linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor | out",
    "linalg_det(Tensor A) -> Tensor | out",
    "linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)",
    "linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor | out",
    "linalg_qr(Tensor A, str mode=\"reduced\") -> (Tensor Q, Tensor R)",
    "linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)",
    "linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor | out",
    "linalg_eigh(Tensor self, str UPLO=\"L\") -> (Tensor eigenvalues, Tensor eigenvectors)",
    "linalg_eigvalsh(Tensor self, str UPLO=\"L\") -> Tensor | out",
    "linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)",
    "linalg_eigvals(Tensor self) -> Tensor | out",
    "linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False) -> (Tensor LD, Tensor pivots, Tensor info)",
    "linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor",
    "linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> (Tensor solution, Tensor residuals, Tensor rank, Tensor singular_values)",
    # ---- torchplug.linalg: composites ---------------------------------------------------------------
    "linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2, -1], bool keepdim=False, *, ScalarType? dtype=None) -> Tensor | out composite",
    "linalg_matrix_norm.str_ord(Tensor self, str ord=\"fro\", int[] dim=[-2, -1], bool keepdim=False, *, ScalarType? dtype=None) -> Tensor | out=str_ord_out composite",
    "linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor | out composite",
    "linalg_norm.ord_str(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor | out=ord_str_out composite",
    "linalg_pinv.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) -> Tensor | composite",
    "linalg_matrix_rank.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) -> Tensor | composite",
    "linalg_matrix_power(Tensor self, int n) -> Tensor | out composite",
)

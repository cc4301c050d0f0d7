"""Derivative formulas of the linear-algebra section: the add*/b*mm products, ``vdot``, ``linalg_cross`` and
the ``torchplug.linalg`` decompositions (PyTorch's formulas, complex inputs included; distinct eigen/singular
values where PyTorch needs them too)."""

from __future__ import annotations

from typing import Any

import torchplug as T

from ._formulas import _torch_not_implemented
from ._rules import rule

__all__: list[str] = []


def _scaled(x: Any, s: Any) -> Any:
    return x if s == 1 else x * s


def _is_zero(x: Any) -> bool:
    """Outputs nobody used reach multi-output formulas as zeros (PyTorch passes undefined tensors)."""
    return x is None or not bool(x.any())


def _diag(v: Any) -> Any:
    return v.diag_embed()


# ---- products ------------------------------------------------------------------------------------------
@rule("addmv", saves="mat, vec, beta, alpha")
def addmv(n, g, mat, vec, beta, alpha):
    return (n[0] and _scaled(g, beta), n[1] and _scaled(g.unsqueeze(-1) * vec.unsqueeze(0), alpha),
            n[2] and _scaled(mat.t().mv(g), alpha))


@rule("addr", saves="vec1, vec2, beta, alpha")
def addr(n, g, vec1, vec2, beta, alpha):
    return n[0] and _scaled(g, beta), n[1] and _scaled(g.mv(vec2), alpha), n[2] and _scaled(g.t().mv(vec1), alpha)


@rule("baddbmm", saves="batch1, batch2, beta, alpha")
def baddbmm(n, g, batch1, batch2, beta, alpha):
    return (n[0] and _scaled(g, beta), n[1] and _scaled(g.bmm(batch2.transpose(1, 2)), alpha),
            n[2] and _scaled(batch1.transpose(1, 2).bmm(g), alpha))


@rule("addbmm", saves="batch1, batch2, beta, alpha")
def addbmm(n, g, batch1, batch2, beta, alpha):
    gb = g.unsqueeze(0).expand(batch1.shape[0], g.shape[0], g.shape[1])
    return (n[0] and _scaled(g, beta), n[1] and _scaled(gb.bmm(batch2.transpose(1, 2)), alpha),
            n[2] and _scaled(batch1.transpose(1, 2).bmm(gb), alpha))


@rule("vdot", saves="self, other")
def vdot(n, g, self, other):
    # vdot conjugates self: derivatives.yaml's grad.conj() * other and grad * self
    return n[0] and g.conj() * other, n[1] and g * self


@rule("linalg_cross", saves="self, other, dim")
def linalg_cross(n, g, self, other, dim):
    return n[0] and T.linalg.cross(other, g, dim=dim), n[1] and T.linalg.cross(g, self, dim=dim)


# ---- inverses and solves -------------------------------------------------------------------------------
@rule("linalg_inv", saves="result")
def inv(n, g, result):
    it = result.mH
    return (-(it @ g @ it),)


def _vector_rhs(A: Any, B: Any) -> bool:
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


@rule("linalg_solve", saves="A, B, left, result")
def solve(n, g, A, B, left, result):
    vector = _vector_rhs(A, B)
    gm = g.unsqueeze(-1) if vector else g
    X = result.unsqueeze(-1) if vector else result
    gB = T.linalg.solve(A.mH, gm, left=left)
    gA = False
    if n[0]:
        gA = -(gB @ X.mH) if left else -(X.mH @ gB)
    if vector:
        gB = gB.squeeze(-1)
    return gA, n[1] and gB


def _prod_except(s: Any) -> Any:
    """prod_{j != i} s_j along the last dim, without dividing (zeros allowed)."""
    k = s.shape[-1]
    one = T.ones_like(s.narrow(-1, 0, 1))
    fwd = T.cat([one, s.cumprod(-1).narrow(-1, 0, k - 1)], -1)
    rs = s.flip([-1])
    bwd = T.cat([one, rs.cumprod(-1).narrow(-1, 0, k - 1)], -1).flip([-1])
    return fwd * bwd


@rule("linalg_det", saves="A, result")
def det(n, g, A, result):
    if A.shape[-1] == 0:
        return (T.zeros_like(A),)
    singular = result == 0
    if not T.is_grad_enabled() or not bool(singular.any()):
        # PyTorch's first-order path: det * A^{-H}, through an LU nudged off singularity (so 0 when det == 0)
        d = (g * result.conj()).unsqueeze(-1).unsqueeze(-1)
        safe = T.where(singular.unsqueeze(-1).unsqueeze(-1), T.eye(A.shape[-1], dtype=A.dtype, device=A.device), A)
        return (d * T.linalg.inv(safe).mH,)
    # create_graph through singular matrices (PyTorch's higher-order path): the cofactor matrix from an SVD,
    # det(U) det(Vh) U diag(prod_{j != i} S_j) Vh
    U, S, Vh = T.linalg.svd(A)
    alpha = (T.linalg.det(U) * T.linalg.det(Vh) * g).unsqueeze(-1)
    return ((U * (alpha * _prod_except(S)).unsqueeze(-2)) @ Vh,)


@rule("linalg_slogdet", saves="A, result0")
def slogdet(n, g, A, sign):
    # the sign of a real determinant is piecewise constant: only logabsdet carries a gradient; a complex
    # sign's gradient joins it as i Im(g_sign conj(sign)) (FunctionsManual.cpp slogdet_backward)
    gl = g[1]
    if A.dtype.is_complex and g[0] is not None:
        gl = gl + 1j * (g[0] * sign.conj()).imag
    return (gl.unsqueeze(-1).unsqueeze(-1) * T.linalg.inv(A).mH,)


# ---- factorizations ------------------------------------------------------------------------------------
@rule("linalg_cholesky", saves="upper, result")
def cholesky(n, g, upper, L):
    if upper:
        L, g = L.mH, g.mH
    Linv = T.linalg.inv(L)
    phi = L.mH @ g
    phi = phi.tril() - 0.5 * _diag(phi.diagonal(0, -2, -1))
    gA = Linv.mH @ phi @ Linv
    return (0.5 * (gA + gA.mH),)


def _qr_square_or_tall(gQ: Any, gR: Any, Q: Any, R: Any) -> Any:
    """m >= n: gA = (gQ + Q syminvadj(triu(gR R^H - Q^H gQ))) R^{-H}."""
    M = (gR @ R.mH - Q.mH @ gQ).triu()
    # (complex: R's diagonal is real, so only the real part of M's diagonal is counted twice)
    sym = M + M.mH - _diag(M.diagonal(0, -2, -1).real)
    B = gQ + Q @ sym
    return T.linalg.solve(R.mH, B, left=False)


@rule("linalg_qr", saves="A, mode, result0, result1")
def qr(n, g, A, mode, Q, R):
    gQ, gR = g
    m, k = A.shape[-2], A.shape[-1]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                           "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    if mode == "complete" and m > k:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if m >= k:
        return (_qr_square_or_tall(gQ, gR, Q, R),)
    # wide: A = Q [R1 | R2]; A1 = Q R1 is square, A2 = Q R2 only moves Q through R2
    R1, R2 = R.narrow(-1, 0, m), R.narrow(-1, m, k - m)
    gR1, gR2 = gR.narrow(-1, 0, m), gR.narrow(-1, m, k - m)
    A2 = A.narrow(-1, m, k - m)
    gA1 = _qr_square_or_tall(gQ + A2 @ gR2.mH, gR1, Q, R1)
    return (T.cat([gA1, Q @ gR2], -1),)


def _svd_backward(gU: Any, gS: Any, gVh: Any, U: Any, S: Any, Vh: Any) -> Any:
    """PyTorch's svd_backward; ``None`` for the unused gradients."""
    m, k = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        return U @ (gS.unsqueeze(-1) * Vh) if m >= k else (U * gS.unsqueeze(-2)) @ Vh
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    E = E + _diag(T.ones_like(S))
    UhgU = None if gU is None else U.mH @ gU
    VhgV = None if gVh is None else Vh @ gVh.mH
    if UhgU is not None:
        UhgU = UhgU - UhgU.mH
    if VhgV is not None:
        VhgV = VhgV - VhgV.mH
    if UhgU is not None and VhgV is not None:
        gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
    elif UhgU is not None:
        gA = (UhgU / E) * S.unsqueeze(-2)
    else:
        gA = S.unsqueeze(-1) * (VhgV / E)
    if gS is not None:
        gA = gA + _diag(gS)
    if UhgU is not None and U.dtype.is_complex:
        # complex: the phase each singular pair may take adds i Im(diag(U^H gU)) / S (PyTorch's svd_backward)
        gA = gA + _diag(UhgU.diagonal(0, -2, -1).imag / (2 * S)) * 1j
    if m > k and gU is not None:
        gA = U @ gA
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - U @ (U.mH @ gUSinv)
        return gA @ Vh
    if m < k and gVh is not None:
        gA = gA @ Vh
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - (SinvgVh @ Vh.mH) @ Vh
        return U @ gA
    return U @ (gA @ Vh) if m >= k else (U @ gA) @ Vh


@rule("linalg_svd", saves="full_matrices, result0, result1, result2")
def svd(n, g, full_matrices, U, S, Vh):
    gU, gS, gVh = (None if _is_zero(x) else x for x in g)
    if gU is None and gS is None and gVh is None:
        return (None,)
    k = S.shape[-1]
    if full_matrices:
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
        gU = None if gU is None else gU.narrow(-1, 0, k)
        gVh = None if gVh is None else gVh.narrow(-2, 0, k)
    return (_svd_backward(gU, gS, gVh, U, S, Vh),)


@rule("linalg_svdvals", saves="A")
def svdvals(n, g, A):
    U, S, Vh = T.linalg.svd(A, full_matrices=False)
    return (_svd_backward(None, g, None, U, S, Vh),)


def _eigh_backward(gL: Any, gV: Any, L: Any, V: Any) -> Any:
    if gV is None:
        return (V * gL.unsqueeze(-2)) @ V.mH
    VhgV = V.mH @ gV
    VhgV = 0.5 * (VhgV - VhgV.mH)
    E = L.unsqueeze(-2) - L.unsqueeze(-1)
    E = E + _diag(T.ones_like(L))
    gA = VhgV / E
    if gL is not None:
        gA = gA - _diag(gA.diagonal(0, -2, -1)) + _diag(gL)
    return V @ (gA @ V.mH)


@rule("linalg_eigh", saves="result0, result1")
def eigh(n, g, L, V):
    gL, gV = (None if _is_zero(x) else x for x in g)
    if gL is None and gV is None:
        return (None,)
    return (_eigh_backward(gL, gV, L, V),)


@rule("linalg_eigvalsh", saves="self, UPLO")
def eigvalsh(n, g, self, UPLO):
    _, V = T.linalg.eigh(self, UPLO=UPLO)
    return (_eigh_backward(g, None, None, V),)


def _eig_backward(gL: Any, gV: Any, L: Any, V: Any) -> Any:
    """PyTorch's ``linalg_eig_backward`` (non-Hermitian): ``V^-H (diag(gL) + P(V^H gV) / conj(E)) V^H`` with ``P``
    the projection that keeps the eigenvectors' unit norm and ``E_ij = L_j - L_i``."""
    if gV is None:
        return T.linalg.solve(V.mH, gL.unsqueeze(-1) * V.mH)
    VhgV = V.mH @ gV
    diag = VhgV.diagonal(0, -2, -1)
    if not T.allclose(diag.imag, T.zeros_like(diag.imag), rtol=1e-2, atol=1e-2):
        raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on this quantity, so "
                           "it is ill-defined.")
    VhgV = VhgV - V.mH @ (V * diag.real.unsqueeze(-2))
    E = (L.unsqueeze(-2) - L.unsqueeze(-1)).conj() + _diag(T.ones_like(L))
    gA = VhgV / E
    gA = gA - _diag(gA.diagonal(0, -2, -1))
    if gL is not None:
        gA = gA + _diag(gL)
    return T.linalg.solve(V.mH, gA @ V.mH)


@rule("linalg_eig", saves="result0, result1")
def eig(n, g, L, V):
    gL, gV = (None if _is_zero(x) else x for x in g)
    if gL is None and gV is None:
        return (None,)
    return (_eig_backward(gL, gV, L, V),)


@rule("linalg_eigvals", saves="self")
def eigvals(n, g, self):
    L, V = T.linalg.eig(self)
    return (_eig_backward(g, None, L, V),)


# PyTorch records a node whose backward raises for the LDL factorization and solve
rule("linalg_ldl_factor_ex", inputs="self", name="NotImplemented")(_torch_not_implemented("linalg_ldl_factor_ex"))
rule("linalg_ldl_solve", inputs="LD, B", name="NotImplemented")(_torch_not_implemented("linalg_ldl_solve"))


# ---- least squares -------------------------------------------------------------------------------------
def _pinv_backward(grad: Any, pinvA: Any, A: Any) -> Any:
    m, k = A.shape[-2], A.shape[-1]
    pinvAh = pinvA.mH
    gradh = grad.mH
    if m <= k:
        K = gradh @ pinvA
        KpinvAh = K @ pinvAh
        return -(pinvA @ K).mH + KpinvAh - (A @ pinvA) @ KpinvAh + (pinvAh @ pinvA) @ (gradh - K @ A)
    K = pinvA @ gradh
    pinvAhK = pinvAh @ K
    return -(K @ pinvA).mH + (gradh - A @ K) @ pinvA @ pinvAh + pinvAhK - pinvAhK @ pinvA @ A


@rule("linalg_lstsq", saves="self, b, result0", outputs=(0, 1))
def lstsq(n, g, A, B, X):
    gX, gres = g[0], g[1]
    vector = _vector_rhs(A, B)
    if vector:
        gX, B, X = gX.unsqueeze(-1), B.unsqueeze(-1), X.unsqueeze(-1)
    pinvA = T.linalg.pinv(A)
    gA = n[0] and _pinv_backward(gX @ B.mH, pinvA, A)
    gB = n[1] and pinvA.mH @ gX
    if gres is not None and gres.numel() and bool(gres.any()):
        # residuals = ||A X - B||^2 per column; A^H (A X - B) = 0 removes the dependence through X
        scale = 2 * (gres.unsqueeze(-1).unsqueeze(-1) if vector else gres.unsqueeze(-2))
        resid = (A @ X - B) * scale
        gA = n[0] and gA + resid @ X.mH
        gB = n[1] and gB - resid
    if vector and n[1]:
        gB = gB.squeeze(-1)
    return gA, gB


@rule("_cdist_forward", saves="x1, x2, p, result", inputs="x1, x2")
def _cdist_forward(n, g, x1, x2, p, result):
    # _cdist_backward: the norm's gradient over the pairs' differences, summed over the other operand's rows
    from ._formulas_math import vector_norm

    if p == 0:
        return n[0] and T.zeros_like(x1), n[1] and T.zeros_like(x2)
    (pairs,) = vector_norm(n, g, x1.unsqueeze(-2) - x2.unsqueeze(-3), p, [-1], False, result)
    return n[0] and pairs.sum(-2), n[1] and -pairs.sum(-3)


@rule("_pdist_forward", saves="self, p, result")
def _pdist_forward(n, g, self, p, result):
    # _pdist_backward: each pair's norm gradient added to its first row and taken from its second
    from ._formulas_math import vector_norm

    rows = self.shape[0]
    if p == 0 or rows <= 1:
        return (T.zeros_like(self),)
    first, second = T.triu_indices(rows, rows, 1, device=self.device)
    (pairs,) = vector_norm(n, g, self.index_select(0, first) - self.index_select(0, second), p, [1], False, result)
    return (T.zeros_like(self).index_add(0, first, pairs).index_add(0, second, -pairs),)


@rule("linalg_pinv.atol_rtol_float", saves="self, result", inputs="self")
def linalg_pinv(n, g, A, pinvA):
    # pinv_backward (derivatives.yaml), its products ordered for the smaller of the two dimensions
    m, k = A.shape[-2], A.shape[-1]
    pinvAh, gh = pinvA.mH, g.mH
    if m <= k:
        K = gh @ pinvA
        KpinvAh = K @ pinvAh
        return (-(pinvA @ K).mH + KpinvAh - (A @ pinvA) @ KpinvAh + (pinvAh @ pinvA) @ (gh - K @ A),)
    K = pinvA @ gh
    pinvAhK = pinvAh @ K
    return (-(K @ pinvA).mH + pinvAhK - (pinvAhK @ pinvA) @ A + ((gh - A @ K) @ pinvA) @ pinvAh,)

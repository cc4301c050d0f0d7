"""OpInfos for the linear-algebra rows (``_schemas/linalg.py``): products over mm/bmm (einsum, tensordot, kron...)
and the ``torchplug.linalg`` functions whose results are unique (decompositions with sign/phase freedom are
checked by reconstruction in ``backends/cpu/tests/test_linalg2.py`` instead)."""

from __future__ import annotations

from collections.abc import Iterator

from torchplug.testing.opinfo import OpInfo, SampleInput, Skip, T

__all__ = ["OPS"]

S = SampleInput
FLOAT = ("float32", "float64")
FLOAT_COMPLEX = ("float32", "float64", "complex64", "complex128")
PRODUCT = ("int64", "float32", "float64", "complex64")
TOL = {"float32": (1e-4, 1e-4), "complex64": (1e-4, 1e-4), "float64": (1e-7, 1e-7), "complex128": (1e-7, 1e-7)}


def _gen(*samples: SampleInput):
    def gen(dtype: str) -> Iterator[SampleInput]:
        yield from samples
    return gen


def _spd(n: int, batch: tuple[int, ...] = ()) -> T:
    """A well-conditioned (diagonally dominant, symmetric) matrix for solvers and factorizations."""
    import numpy as np

    rng = np.random.default_rng(n + len(batch))
    m = np.round(rng.uniform(-1, 1, batch + (n, n)), 1)
    m = m + np.swapaxes(m, -1, -2) + 2 * n * np.eye(n)
    return T(batch + (n, n), values=m.tolist())


OPS = [
    # products
    OpInfo("outer", _gen(S((T((3,)), T((4,))))), dtypes=PRODUCT, aten=("outer",), supports_out=True),
    OpInfo("addmv", _gen(S((T((3,)), T((3, 4)), T((4,)))), S((T(()), T((3, 4), transposed=True), T((4,))), {"beta": 2})),
           dtypes=PRODUCT, aten=("addmv",), supports_out=True, tolerances=TOL),
    OpInfo("addr", _gen(S((T((3, 4)), T((3,)), T((4,))), {"alpha": 2})), dtypes=PRODUCT, aten=("addr",),
           supports_out=True, inplace_variant="Tensor.addr_"),
    OpInfo("baddbmm", _gen(S((T((2, 3, 5)), T((2, 3, 4)), T((2, 4, 5))), {"beta": 0.5}),
                          S((T((5,)), T((2, 3, 4)), T((2, 4, 5))))),
           dtypes=FLOAT_COMPLEX, aten=("baddbmm",), supports_out=True, tolerances=TOL),
    OpInfo("addbmm", _gen(S((T((3, 5)), T((2, 3, 4)), T((2, 4, 5))))), dtypes=FLOAT_COMPLEX, aten=("addbmm",),
           supports_out=True, tolerances=TOL),
    OpInfo("einsum", _gen(S(("ij,jk->ik", T((2, 3)), T((3, 4))), name="mm"),
                         S(("bij,bjk", T((2, 2, 3)), T((2, 3, 4))), name="bmm"),
                         S(("ii->i", T((3, 3))), name="diag"),
                         S(("...ij->...ji", T((2, 3, 4))), name="ellipsis"),
                         S(("ij,jk,kl->il", T((2, 3)), T((3, 4)), T((4, 2))), name="chain"),
                         S(("i,j->ij", T((3,)), T((2,))), name="outer")),
           dtypes=FLOAT_COMPLEX, aten=("einsum",), tolerances=TOL),
    OpInfo("tensordot", _gen(S((T((2, 3, 4)), T((3, 4, 5)), 2)), S((T((2, 3, 4)), T((4, 3))), {"dims": ([1, 2], [1, 0])})),
           dtypes=FLOAT_COMPLEX, aten=("tensordot",), tolerances=TOL),
    OpInfo("kron", _gen(S((T((2, 3)), T((3, 2)))), S((T((2,)), T((2, 3))))), dtypes=PRODUCT, aten=("kron",), supports_out=True),
    OpInfo("linalg.cross", _gen(S((T((4, 3)), T((4, 3)))), S((T((3, 2)), T((3, 1))), {"dim": 0})), dtypes=PRODUCT,
           aten=("linalg_cross",), supports_out=True),
    OpInfo("cross", _gen(S((T((3, 4)), T((3, 4)), 0))), dtypes=PRODUCT, aten=("cross",)),
    OpInfo("cdist", _gen(S((T((3, 4)), T((5, 4)))), S((T((2, 3, 4)), T((2, 2, 4)), 1.0)), S((T((3, 4)), T((2, 4)), 0.5))),
           dtypes=FLOAT, aten=("cdist",), tolerances=TOL),
    OpInfo("inner", _gen(S((T((2, 3)), T((4, 3)))), S((T(()), T((3,))))), dtypes=PRODUCT, aten=("inner",), tolerances=TOL),
    OpInfo("vdot", _gen(S((T((4,)), T((4,))))), dtypes=PRODUCT, aten=("vdot",), supports_out=True, tolerances=TOL),
    OpInfo("matrix_power", _gen(S((T((3, 3), low=-1, high=1), 3)), S((T((2, 3, 3)), 0)), S((_spd(3), -1))),
           dtypes=FLOAT, aten=("matrix_power",), tolerances=TOL),
    OpInfo("linalg.multi_dot", _gen(S(([T((3,)), T((3, 4)), T((4, 2))],)), S(([T((2, 3)), T((3, 4))],))),
           dtypes=FLOAT_COMPLEX, aten=("linalg_multi_dot",), tolerances=TOL),
    # torchplug.linalg (unique results)
    OpInfo("linalg.inv", _gen(S((_spd(3),)), S((_spd(3, (2,)),))), dtypes=FLOAT, aten=("linalg_inv",),
           tolerances=TOL, compare_strides_on_data=True),
    OpInfo("linalg.solve", _gen(S((_spd(3), T((3, 2)))), S((_spd(3, (2,)), T((3,)))), S((_spd(3), T((4, 3))), {"left": False})),
           dtypes=FLOAT, aten=("linalg_solve",), tolerances=TOL),
    OpInfo("linalg.det", _gen(S((T((3, 3)),)), S((T((2, 4, 4)),))), dtypes=FLOAT, aten=("linalg_det",), tolerances=TOL),
    OpInfo("linalg.slogdet", _gen(S((T((2, 3, 3)),))), dtypes=FLOAT, aten=("linalg_slogdet",), tolerances=TOL),
    OpInfo("linalg.cholesky", _gen(S((_spd(3),)), S((_spd(4, (2,)),), {"upper": True})), dtypes=FLOAT,
           aten=("linalg_cholesky",), tolerances=TOL),
    OpInfo("linalg.svdvals", _gen(S((T((3, 4)),)), S((T((2, 5, 3)),))), dtypes=FLOAT_COMPLEX, aten=("linalg_svdvals",),
           tolerances=TOL),
    OpInfo("linalg.eigvalsh", _gen(S((_spd(3),)), S((T((2, 3, 3)), "U"))), dtypes=FLOAT, aten=("linalg_eigvalsh",),
           tolerances=TOL),
    OpInfo("linalg.matrix_norm", _gen(S((T((3, 4)),)), S((T((2, 3, 4)), "nuc")), S((T((2, 3, 4)), 1)),
                                     S((T((3, 4)), float("inf")), {"keepdim": True}), S((T((2, 3, 4)), -2))),
           dtypes=FLOAT_COMPLEX, aten=("linalg_matrix_norm", "linalg_matrix_norm.str_ord"), tolerances=TOL),
    OpInfo("linalg.norm", _gen(S((T((3, 4)),)), S((T((3, 4)), "fro")), S((T((2, 3, 4)), 2, 1))), dtypes=FLOAT_COMPLEX,
           aten=("linalg_norm", "linalg_norm.ord_str"), tolerances=TOL),
    OpInfo("linalg.pinv", _gen(S((T((3, 4)),)), S((T((2, 4, 3)),), {"rtol": 0.1})), dtypes=FLOAT,
           aten=("linalg_pinv.atol_rtol_float",), tolerances={"float32": (1e-3, 1e-3), "float64": (1e-7, 1e-7)}),
    OpInfo("linalg.matrix_rank", _gen(S((T((3, 4)),)), S((T((2, 4, 3)),), {"atol": 1.0, "rtol": 0.0})), dtypes=FLOAT,
           aten=("linalg_matrix_rank.atol_rtol_float",)),
    OpInfo("linalg.matrix_power", _gen(S((T((2, 3, 3), low=-1, high=1), 2))), dtypes=FLOAT, aten=("linalg_matrix_power",),
           tolerances=TOL),
    OpInfo("linalg.lstsq", _gen(S((_spd(3), T((3, 2))), name="square")), dtypes=FLOAT, aten=("linalg_lstsq",),
           tolerances=TOL, skips=(Skip("residuals/rank depend on values; checked in backends/cpu/tests/test_linalg2.py",
                                       devices=("meta",)),)),
]

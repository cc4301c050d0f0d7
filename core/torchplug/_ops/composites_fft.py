"""``torchplug.fft``'s functions as aten composites (``fft_fft``, ``fft_rfft2``, ``fft_ihfftn``...) over the
three FFT primitives, with PyTorch's argument handling (``aten/src/ATen/native/SpectralOps.cpp``): integer
inputs compute in the default float dtype, real inputs of complex transforms become complex, ``n``/``s``
crop or zero-pad the signal, and ``norm`` picks the scaling the primitive applies.

Being aten ops, they take part in dispatch as PyTorch's do: autocast's float32 list (``fft_fft``...) casts
their half-precision inputs, and autograd differentiates them through the primitives.  The ``out=``
overloads write through the primitives' ``out`` (PyTorch's ``*_maybe_out``), replacing the generic
out composites.  ``torchplug/fft.py`` checks Python argument types and calls these.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._ops.composites import scalar_type_name
from torchplug._tensor.tensor import Tensor, _wrap_dim

__all__ = ["register"]

# aten's fft_norm_mode values
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2
_COMPLEX_OF = {D.float32: D.complex64, D.float64: D.complex128}


# ---- argument handling (SpectralOps.cpp) ------------------------------------------------------------
def _norm_mode(norm: str | None, forward: bool) -> int:
    """aten's ``norm_from_string``: the scaling the primitive applies for ``norm`` in this direction."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(t: Tensor, require_complex: bool = False) -> Tensor:
    """aten's ``promote_tensor_fft``: integers compute in the default float dtype; only float32/float64
    (and complex) transform; complex transforms of real data make it complex first."""
    dt = t.dtype
    if dt.is_complex:
        return t
    if not dt.is_floating_point:
        dt = D.get_default_dtype()
    if dt not in _COMPLEX_OF:
        raise RuntimeError(f"Unsupported dtype {scalar_type_name(dt)}")
    if require_complex:
        dt = _COMPLEX_OF[dt]
    return t if dt is t.dtype else t.to(dt)


def _wrap(dim: int, ndim: int) -> int:
    """``maybe_wrap_dim`` without scalar wrapping: a 0-dim tensor has no dimension to transform."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, ndim)


def _check_points(n: int) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x: Tensor, dims: Sequence[int], sizes: Sequence[int]) -> Tensor:
    """aten's ``resize_fft_input``: crop (a view) or zero-pad (one copy) each dim to its size."""
    pad = [0] * (2 * x.dim())
    padded = False
    for d, n in zip(dims, sizes):
        if n == -1:
            continue
        have = x.shape[d]
        if have < n:
            padded = True
            pad[len(pad) - 2 * d - 1] = n - have
        elif have > n:
            x = x.narrow(d, 0, n)
    return A.constant_pad_nd(x, pad) if padded else x


def _shape_and_dims(x: Tensor, s: Any, dim: Any) -> tuple[list[int], list[int]]:
    """aten's ``canonicalize_fft_shape_and_dim_args``: the signal sizes and the wrapped, unique dims."""
    ndim = x.dim()
    shape, dims = s, dim
    if dims is not None:
        dims = [_wrap(d, ndim) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if shape is not None:
        if dims is not None and len(dims) != len(shape):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(shape) > ndim:
            raise RuntimeError(f"Got shape with {len(shape)} values but input tensor only has {ndim} dimensions.")
        if dims is None:
            dims = list(range(ndim - len(shape), ndim))
        shape = [x.shape[d] if n == -1 else n for d, n in zip(dims, shape)]
    elif dims is None:
        shape, dims = list(x.shape), list(range(ndim))
    else:
        shape = [x.shape[d] for d in dims]
    for n in shape:
        _check_points(n)
    return shape, dims


def _c2r_shape_and_dims(name: str, x: Tensor, s: Any, dim: Any) -> tuple[list[int], list[int], int]:
    """``_shape_and_dims`` for a complex-to-real transform: also the real output's last-dim length,
    with the input's last transformed size cut to the Hermitian half it needs."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    last_size = 2 * (x.shape[dims[-1]] - 1) if s is None or s[-1] == -1 else shape[-1]
    _check_points(last_size)
    shape[-1] = last_size // 2 + 1
    return shape, dims, last_size


def _check_out(name: str, out: Tensor | None, complex_out: bool) -> None:
    if out is None:
        return
    if complex_out and not out.dtype.is_complex:
        raise RuntimeError(f"{name} expects a complex output tensor, but got {scalar_type_name(out.dtype)}")
    if not complex_out and not out.dtype.is_floating_point:
        raise RuntimeError(f"{name} expects a floating point output tensor, but got {scalar_type_name(out.dtype)}")


# ---- the primitives, with or without out= -------------------------------------------------------------
def _c2c(name: str, x: Tensor, dims: Sequence[int], norm: int, forward: bool, out: Tensor | None) -> Tensor:
    if out is None:
        return A._fft_c2c(x, list(dims), norm, forward)
    _check_out(name, out, True)
    return A["_fft_c2c.out"](x, list(dims), norm, forward, out=out)


def _r2c(name: str, x: Tensor, dims: Sequence[int], norm: int, onesided: bool, out: Tensor | None) -> Tensor:
    if out is None:
        return A._fft_r2c(x, list(dims), norm, onesided)
    _check_out(name, out, True)
    return A["_fft_r2c.out"](x, list(dims), norm, onesided, out=out)


def _c2r(name: str, x: Tensor, dims: Sequence[int], norm: int, last_size: int, out: Tensor | None) -> Tensor:
    if out is None:
        return A._fft_c2r(x, list(dims), norm, last_size)
    _check_out(name, out, False)
    return A["_fft_c2r.out"](x, list(dims), norm, last_size, out=out)


def _conj_into(result: Tensor, out: Tensor | None) -> Tensor:
    """The conjugate of ``result``: a lazy conj view, or written into ``out`` (``conj_physical_out``)."""
    if out is None:
        return result.conj()
    return A["conj_physical.out"](result, out=out)


# ---- one-dimensional transforms ---------------------------------------------------------------------
def _fft_r2c(name: str, input: Tensor, n: int | None, dim: int, norm: str | None, forward: bool, onesided: bool,
             out: Tensor | None) -> Tensor:
    if input.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {scalar_type_name(input.dtype)}")
    _check_out(name, out, True)
    x = _promote(input)
    d = _wrap(dim, x.dim())
    size = x.shape[d] if n is None else n
    _check_points(size)
    if n is not None:
        x = _resize(x, [d], [n])
    mode = _norm_mode(norm, forward)
    if forward:
        return _r2c(name, x, [d], mode, onesided, out)
    return _conj_into(A._fft_r2c(x, [d], mode, onesided), out)  # aten has no native inverse r2c


def _fft_c2r(name: str, input: Tensor, n: int | None, dim: int, norm: str | None, forward: bool,
             out: Tensor | None) -> Tensor:
    _check_out(name, out, False)
    x = _promote(input, require_complex=True)
    d = _wrap(dim, x.dim())
    size = 2 * (x.shape[d] - 1) if n is None else n
    _check_points(size)
    if n is not None:
        x = _resize(x, [d], [size // 2 + 1])
    if forward:
        x = x.conj()  # hfft is the c2r of the conjugate (aten has no forward c2r)
    return _c2r(name, x, [d], _norm_mode(norm, forward), size, out)


def _fft_c2c(name: str, input: Tensor, n: int | None, dim: int, norm: str | None, forward: bool,
             out: Tensor | None) -> Tensor:
    if not input.dtype.is_complex:
        raise RuntimeError(f"{name} expects a complex input tensor, but got {scalar_type_name(input.dtype)}")
    d = _wrap(dim, input.dim())
    size = input.shape[d] if n is None else n
    _check_points(size)
    x = input if n is None else _resize(input, [d], [n])
    return _c2c(name, x, [d], _norm_mode(norm, forward), forward, out)


# ---- n-dimensional transforms -----------------------------------------------------------------------
def _fftn_c2c(input: Tensor, s: Any, dim: Any, norm: str | None, forward: bool, out: Tensor | None) -> Tensor:
    shape, dims = _shape_and_dims(input, s, dim)
    x = _promote(input, require_complex=True)
    x = _resize(x, dims, shape)
    return _c2c("fftn", x, dims, _norm_mode(norm, forward), forward, out)


def _rfftn(input: Tensor, s: Any, dim: Any, norm: str | None, out: Tensor | None) -> Tensor:
    if input.dtype.is_complex:
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {scalar_type_name(input.dtype)}")
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    return _r2c("rfftn", x, dims, _norm_mode(norm, True), True, out)


def _irfftn(input: Tensor, s: Any, dim: Any, norm: str | None, out: Tensor | None) -> Tensor:
    shape, dims, last_size = _c2r_shape_and_dims("irfftn", input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    return _c2r("irfftn", x, dims, _norm_mode(norm, False), last_size, out)


def _hfftn(input: Tensor, s: Any, dim: Any, norm: str | None, out: Tensor | None) -> Tensor:
    shape, dims, last_size = _c2r_shape_and_dims("hfftn", input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    mode = _norm_mode(norm, True)
    if len(dims) > 1:
        x = A._fft_c2c(x, dims[:-1], mode, True)
    return _c2r("hfftn", x.conj(), dims[-1:], mode, last_size, out)


def _ihfftn(input: Tensor, s: Any, dim: Any, norm: str | None, out: Tensor | None) -> Tensor:
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    mode = _norm_mode(norm, False)
    half = A._fft_r2c(x, dims[-1:], mode, True)
    if len(dims) == 1:
        return _conj_into(half, out)
    return _c2c("ihfftn", A.conj_physical(half), dims[:-1], mode, False, out)



# ---- shifts ---------------------------------------------------------------------------------------------
def _shift(input: Tensor, dim: Any, inverse: bool) -> Tensor:
    dims = list(range(input.dim())) if dim is None else [_wrap_dim(d, input.dim()) for d in dim]
    shifts = [(input.shape[d] + 1) // 2 if inverse else input.shape[d] // 2 for d in dims]
    return A.roll(input, shifts, dims)


# ---- the aten composites: (self, n|s, dim, norm) in schema order, out last ---------------------------------
def _one_d(name: str) -> Callable[..., Tensor]:
    def impl(self: Tensor, n: int | None, dim: int, norm: str | None, out: Tensor | None = None) -> Tensor:
        if name in ("fft", "ifft"):
            forward = name == "fft"
            if self.dtype.is_complex:
                return _fft_c2c(name, self, n, dim, norm, forward, out)
            return _fft_r2c(name, self, n, dim, norm, forward, False, out)
        if name in ("rfft", "ihfft"):
            return _fft_r2c(name, self, n, dim, norm, name == "rfft", True, out)
        return _fft_c2r(name, self, n, dim, norm, name == "hfft", out)

    return impl


def _n_d(name: str) -> Callable[..., Tensor]:
    base = name.rstrip("2n")

    def impl(self: Tensor, s: Any, dim: Any, norm: str | None, out: Tensor | None = None) -> Tensor:
        s = None if s is None else list(s)
        dim = None if dim is None else list(dim)
        if base in ("fft", "ifft"):
            return _fftn_c2c(self, s, dim, norm, base == "fft", out)
        return {"rfft": _rfftn, "irfft": _irfftn, "hfft": _hfftn, "ihfft": _ihfftn}[base](self, s, dim, norm, out)

    return impl


def _out(impl: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def kernel(self: Tensor, size: Any, dim: Any, norm: str | None, out: Tensor) -> Tensor:
        return impl(self, size, dim, norm, out)

    return kernel


def _fftshift(self: Tensor, dim: Any = None) -> Tensor:
    return _shift(self, dim, False)


def _ifftshift(self: Tensor, dim: Any = None) -> Tensor:
    return _shift(self, dim, True)


_ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
_N_D = tuple(f"{base}{suffix}" for suffix in ("2", "n") for base in _ONE_D)


def register(lib: Any) -> None:
    """Register the ``fft_*`` composites through ``lib`` (called by ``register_core``)."""
    for name in _ONE_D + _N_D:
        impl = (_one_d if name in _ONE_D else _n_d)(name)
        lib.impl(f"fft_{name}", impl, "CompositeImplicitAutograd")
        # shadow the generic out= composite the core made: the primitives write out= themselves
        lib.impl(f"fft_{name}.out", _out(impl), "CompositeExplicitAutograd", allow_override=True)
    lib.impl("fft_fftshift", _fftshift, "CompositeImplicitAutograd")
    lib.impl("fft_ifftshift", _ifftshift, "CompositeImplicitAutograd")

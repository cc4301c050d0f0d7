"""Rows for ops real scripts reach for beyond the foundation: fmax/fmin, nextafter, igamma, ldexp, gcd/lcm,
dist, logcumsumexp, diff, renorm, cov/corrcoef, put, index_reduce, fill_diagonal_, rand_like/randn_like.

``nextafter``, ``igamma``/``igammac`` and ``gcd``/``lcm`` are backend primitives; the others are
composites written once in ``_composites_more``.
"""

from __future__ import annotations

__all__ = ["ROWS"]

ROWS = (
    # ---- binary pointwise primitives -------------------------------------------------------------
    *(f"{name}(Tensor self, Tensor other) -> Tensor | inplace out pointwise"
      for name in ("nextafter", "igamma", "igammac", "gcd", "lcm")),
    # ---- pointwise composites ---------------------------------------------------------------------
    "fmax(Tensor self, Tensor other) -> Tensor | out pointwise composite",
    "fmin(Tensor self, Tensor other) -> Tensor | out pointwise composite",
    "ldexp.Tensor(Tensor self, Tensor other) -> Tensor | inplace out=out pointwise composite",
    # ---- reductions and scans ------------------------------------------------------------------------
    "dist(Tensor self, Tensor other, Scalar p=2) -> Tensor | out composite",
    "logcumsumexp(Tensor self, int dim) -> Tensor | out composite",
    "diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor | out composite",
    "renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor | inplace out composite",
    "cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) -> Tensor | composite",
    "corrcoef(Tensor self) -> Tensor | composite",
    # ---- indexing ----------------------------------------------------------------------------------------
    "put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor | inplace out composite",
    "index_reduce(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True) -> Tensor"
    " | inplace out composite",
    "fill_diagonal_(Tensor(a!) self, Scalar fill_value, bool wrap=False) -> Tensor(a!) | composite",
    # ---- random tensors like an input: ops of their own, as ATen's (a dispatch mode or the profiler sees
    # rand_like, not the empty_like and uniform_ it runs); the draws themselves are the random ops above ----------
    *(f"{name}{overload}(Tensor self, *, {generator}ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor | random composite"
      for name in ("rand_like", "randn_like")
      for overload, generator in (("", ""), (".generator", "Generator? generator, "))),
)

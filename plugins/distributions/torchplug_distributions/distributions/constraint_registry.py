"""``biject_to(constraint)`` and ``transform_to(constraint)``: transforms from unconstrained reals onto a
constraint's set.  ``biject_to`` gives bijections (for HMC-style reparameterisation), ``transform_to`` any map
onto the set (for optimisation; e.g. softmax instead of stick breaking for the simplex).
"""

from __future__ import annotations

import numbers
from typing import Any, Callable

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A table from constraint types (or singleton instances) to factories of transforms."""

    def __init__(self) -> None:
        self._registry: dict = {}
        super().__init__()

    def register(self, constraint: Any, factory: Callable | None = None) -> Any:
        """Register ``factory(constraint) -> Transform`` for a constraint subclass or instance (decorator form too)."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: Any) -> transforms.Transform:
        """The transform registered for ``constraint``'s type."""
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(constraint: Any) -> Callable:
    def deco(factory: Callable) -> Callable:
        biject_to.register(constraint, factory)
        transform_to.register(constraint, factory)
        return factory
    return deco


@_both(constraints.real)
def _real(constraint: Any) -> Any:
    return transforms.identity_transform


@biject_to.register(constraints.independent)
def _biject_independent(constraint: Any) -> Any:
    base = biject_to(constraint.base_constraint)
    return transforms.IndependentTransform(base, constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_independent(constraint: Any) -> Any:
    base = transform_to(constraint.base_constraint)
    return transforms.IndependentTransform(base, constraint.reinterpreted_batch_ndims)


@_both(constraints.greater_than)
@_both(constraints.greater_than_eq)
def _greater_than(constraint: Any) -> Any:
    return transforms.ComposeTransform([transforms.ExpTransform(), transforms.AffineTransform(constraint.lower_bound, 1)])


@_both(constraints.less_than)
def _less_than(constraint: Any) -> Any:
    return transforms.ComposeTransform([transforms.ExpTransform(), transforms.AffineTransform(constraint.upper_bound, -1)])


@_both(constraints.interval)
@_both(constraints.half_open_interval)
def _interval(constraint: Any) -> Any:
    lower_is_0 = isinstance(constraint.lower_bound, numbers.Number) and constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, numbers.Number) and constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return transforms.SigmoidTransform()
    loc, scale = constraint.lower_bound, constraint.upper_bound - constraint.lower_bound
    return transforms.ComposeTransform([transforms.SigmoidTransform(), transforms.AffineTransform(loc, scale)])


@biject_to.register(constraints.simplex)
def _biject_simplex(constraint: Any) -> Any:
    return transforms.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_simplex(constraint: Any) -> Any:
    return transforms.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _lower_cholesky(constraint: Any) -> Any:
    return transforms.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _positive_definite(constraint: Any) -> Any:
    return transforms.PositiveDefiniteTransform()


@_both(constraints.corr_cholesky)
def _corr_cholesky(constraint: Any) -> Any:
    return transforms.CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_cat(constraint: Any) -> Any:
    return transforms.CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_cat(constraint: Any) -> Any:
    return transforms.CatTransform([transform_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_stack(constraint: Any) -> Any:
    return transforms.StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_stack(constraint: Any) -> Any:
    return transforms.StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)

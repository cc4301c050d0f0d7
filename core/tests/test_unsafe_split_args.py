"""``unsafe_split`` takes one split size, as PyTorch's: a list of sizes is refused with torch's TypeError (position 2
for ``torch.unsafe_split``, 1 for the method); ints and one-element integer tensors are accepted."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

SIZES = {
    "list": lambda T: [2, 4], "tuple": lambda T: (2, 4), "float": lambda T: 2.0, "bool": lambda T: True,
    "int": lambda T: 2, "numpy_int": lambda T: np.int64(4), "int_tensor": lambda T: T.tensor(2),
    "one_element_tensor": lambda T: T.tensor([4]), "float_tensor": lambda T: T.tensor(2.0),
}


def _call(T: Any, size: Any, how: str) -> Any:
    x = T.arange(6.0)
    if how == "function":
        return T.unsafe_split(x, size)
    if how == "method":
        return x.unsafe_split(size)
    return x.unsafe_split(split_size=size, dim=0)


@pytest.mark.parametrize("how", ["function", "method", "keyword"])
@pytest.mark.parametrize("case", sorted(SIZES))
def test_split_size_as_torch(case: str, how: str) -> None:
    try:
        ref = [t.tolist() for t in _call(torch, SIZES[case](torch), how)]
    except TypeError as exc:
        with pytest.raises(TypeError) as info:
            _call(tp, SIZES[case](tp), how)
        assert str(info.value) == str(exc)
        return
    assert [t.tolist() for t in _call(tp, SIZES[case](tp), how)] == ref

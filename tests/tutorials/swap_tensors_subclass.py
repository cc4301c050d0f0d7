# PyTorch recipe "Extension points in nn.Module for load_state_dict and tensor subclasses", its tensor
# subclass part as the recipe has it: the wrapper subclass MyQuantizedLinearWeight (Tensor._make_wrapper_subclass
# with __torch_dispatch__), nn.Module.bfloat16() with and without
# torch.__future__.set_swap_module_params_on_conversion, and load_state_dict(assign=True) into a meta
# module through a __torch_function__ handler for Tensor.module_load.  The recipe's other parts are in
# load_state_dict_tips.py.  Printed facts are asserted.
import torch
import torch.nn as nn

torch.manual_seed(0)

aten = torch.ops.aten


class MyQuantizedLinearWeight(torch.Tensor):
    @staticmethod
    def __new__(cls, elem, scale):
        return torch.Tensor._make_wrapper_subclass(
            cls,
            elem.shape,
            dtype=elem.dtype,
            layout=elem.layout,
            device=elem.device,
            strides=elem.stride(),
            storage_offset=elem.storage_offset())

    def __init__(self, elem: torch.Tensor, scale: float):
        self.elem = elem
        self.scale = scale

    def __repr__(self):
        return f"MyQuantizedLinearWeight({self.elem}, scale={self.scale})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args, kwargs):
        if func in (aten.detach.default, aten._to_copy.default):
            new_elem = func(args[0].elem, *args[1:], **kwargs)
            return cls(new_elem, args[0].scale)
        # Implementations for certain ops would be added to ``OP_TABLE``.
        # We omit this for brevity.
        OP_TABLE = dict()
        if func in OP_TABLE:
          return OP_TABLE[func](func, args, kwargs)
        raise NotImplementedError(f"Unsupported function {func}")


m = nn.Linear(3, 5, dtype=torch.float32)
m.weight = torch.nn.Parameter(MyQuantizedLinearWeight(m.weight, 0.5))
print(f"Before: id(m.weight)={id(m.weight)}, id(m.bias)={id(m.bias)}")
ids = (id(m.weight), id(m.bias))
m.bfloat16()
print(f"After: id(m.weight)={id(m.weight)}, id(m.bias)={id(m.bias)}")
print(f"m.weight.dtype: {m.weight.dtype}")
print(f"m.weight.elem.dtype: {m.weight.elem.dtype}")
print(f"m.bias.dtype: {m.bias.dtype}")
assert m.weight.dtype == torch.bfloat16 and m.weight.elem.dtype == torch.float32  # the payload was not converted
assert (id(m.weight), id(m.bias)) == ids

torch.__future__.set_swap_module_params_on_conversion(True)
assert torch.__future__.get_swap_module_params_on_conversion()
m = nn.Linear(3, 5, dtype=torch.float32)
m.weight = torch.nn.Parameter(MyQuantizedLinearWeight(m.weight, 0.5))
print(f"Before: id(m.weight)={id(m.weight)}, id(m.bias)={id(m.bias)}")
ids = (id(m.weight), id(m.bias))
m.bfloat16()
print(f"After: id(m.weight)={id(m.weight)}, id(m.bias)={id(m.bias)}")
print(f"m.weight.dtype: {m.weight.dtype}")
print(f"m.weight.elem.dtype: {m.weight.elem.dtype}")
print(f"m.bias.dtype: {m.bias.dtype}")
assert m.weight.dtype == torch.bfloat16 and m.weight.elem.dtype == torch.bfloat16  # swapped: payload converted
assert (id(m.weight), id(m.bias)) == ids
torch.__future__.set_swap_module_params_on_conversion(False)


# --- nn.Module.load_state_dict() with a module_load handler
@classmethod
def custom_torch_function(cls, func, types, args=(), kwargs=None):
    kwargs = {} if kwargs is None else kwargs

    if func is torch.Tensor.module_load:
        dest, src = args[0], args[1]
        assert type(dest) == cls and type(src) == torch.Tensor
        return MyQuantizedLinearWeight(src, dest.scale)
    else:
        with torch._C.DisableTorchFunctionSubclass():
                return func(*args, **kwargs)


MyQuantizedLinearWeight.__torch_function__ = custom_torch_function


def fn(m):
    if isinstance(m, nn.Linear):
        requires_grad = m.weight.requires_grad
        m.weight = torch.nn.Parameter(
                    MyQuantizedLinearWeight(m.weight, 0.5), requires_grad=requires_grad
                   )


with torch.device("meta"):
    m = nn.Linear(3, 5)
    m.apply(fn)

torch.__future__.set_swap_module_params_on_conversion(True)
print(f"Before: id(weight)={id(m.weight)}, id(bias)={id(m.bias)}")
ids = (id(m.weight), id(m.bias))
print(f"m.state_dict() before load_state_dict():\n {m.state_dict()}")
state_dict = nn.Linear(3, 5).state_dict()
print(f"state_dict:\n {state_dict}")
m.load_state_dict(state_dict, assign=True)
print(f"After: id(weight)={id(m.weight)}, id(bias)={id(m.bias)}")
print(f"m.state_dict() after load_state_dict():\n {m.state_dict()}")
assert (id(m.weight), id(m.bias)) == ids
assert type(m.weight) is MyQuantizedLinearWeight and not m.weight.elem.is_meta and m.weight.scale == 0.5
assert torch.equal(m.weight.elem, state_dict["weight"]) and torch.equal(m.bias, state_dict["bias"])
assert not m.bias.is_meta
torch.__future__.set_swap_module_params_on_conversion(False)

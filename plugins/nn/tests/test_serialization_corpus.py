"""A corpus of hand-crafted checkpoints: torch.load and torchplug.load (both weights_only=True) must agree.

Every case is a zip checkpoint whose pickle is assembled opcode by opcode.  For each one the test
asserts the declared verdict for *both* loaders: "accept" files load in both to the same values,
"refuse" files fail in both, and torchplug's failure is a ``pickle.UnpicklingError`` or a
``RuntimeError`` (never a raw IndexError/KeyError/ValueError/TypeError).  The few files PyTorch
accepts but torchplug refuses on purpose are listed apart, with the reason.
"""

from __future__ import annotations

import pickle
import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest

import torchplug as tp

from ckpt_craft import (
    APPEND, APPENDS, BINPERSID, BUILD, EMPTY_DICT, EMPTY_LIST, EMPTY_SET, EMPTY_TUPLE, FALSE, MARK, NEWOBJ, NONE,
    REDUCE, SETITEM, SETITEMS, STOP, TRUE, TUPLE, TUPLE1, TUPLE2, TUPLE3, F, G, GET, I, PUT, S, SB, archive, call,
    f32, ints, pickle_of, storage, tensor, tup,
)

torch = pytest.importorskip("torch")


@dataclass
class Case:
    name: str
    body: bytes  # the pickle between PROTO 2 and STOP (or the whole pickle when raw=True)
    verdict: str  # "accept" or "refuse"
    records: dict[str, bytes] = field(default_factory=dict)
    raw: bool = False

    def file(self):
        return archive(self.body if self.raw else pickle_of(self.body), self.records)


FOUR = {"0": f32(0, 1, 2, 3)}
T4 = tensor(storage("FloatStorage", "0", 4), 0, [4], [1])
OD = G("collections", "OrderedDict")
ALLOWED = "accept"
REFUSED = "refuse"

CASES = [
    # ---- files both loaders accept --------------------------------------------------------------
    Case("float_tensor", T4, ALLOWED, FOUR),
    Case("int64_tensor", tensor(storage("LongStorage", "0", 3), 0, [3], [1]), ALLOWED,
         {"0": np.array([5, -6, 7], "<i8").tobytes()}),
    Case("bool_tensor", tensor(storage("BoolStorage", "0", 2), 0, [2], [1]), ALLOWED, {"0": b"\x01\x00"}),
    Case("bfloat16_tensor", tensor(storage("BFloat16Storage", "0", 2), 0, [2], [1]), ALLOWED,
         {"0": np.array([0x3F80, 0xC000], "<u2").tobytes()}),
    Case("complex64_tensor", tensor(storage("ComplexFloatStorage", "0", 2), 0, [2], [1]), ALLOWED,
         {"0": np.array([1 + 2j, -3j], "<c8").tobytes()}),
    Case("transposed_view", tensor(storage("FloatStorage", "0", 6), 0, [3, 2], [1, 3]), ALLOWED,
         {"0": f32(0, 1, 2, 3, 4, 5)}),
    Case("two_views_one_storage", tup(T4 + PUT(9), tensor(storage("FloatStorage", "0", 4), 1, [2], [2])), ALLOWED, FOUR),
    Case("requires_grad", tensor(storage("FloatStorage", "0", 4), 0, [4], [1], requires_grad=True), ALLOWED, FOUR),
    Case("empty_tensor", tensor(storage("FloatStorage", "0", 0), 0, [0], [1]), ALLOWED, {"0": b""}),
    Case("scalar_tensor", tensor(storage("FloatStorage", "0", 4), 3, [], []), ALLOWED, FOUR),
    Case("cuda_storage_class_on_cpu", tensor(storage("FloatStorage", "0", 4, module="torch.cuda"), 0, [4], [1]),
         ALLOWED, FOUR),
    Case("state_dict_with_metadata",
         call(OD) + MARK + S("w") + T4 + SETITEMS + EMPTY_DICT + S("_metadata") + call(OD) + SETITEM + BUILD,
         ALLOWED, FOUR),
    Case("parameter_rebuild", call(G("torch._utils", "_rebuild_parameter"), T4, TRUE, call(OD)), ALLOWED, FOUR),
    Case("parameter_newobj", G("torch.nn.parameter", "Parameter") + tup(T4, FALSE) + NEWOBJ, ALLOWED, FOUR),
    Case("tensor_with_attributes",
         call(G("torch._tensor", "_rebuild_from_type_v2"), G("torch._utils", "_rebuild_tensor_v2"), G("torch", "Tensor"),
              tup(storage("FloatStorage", "0", 4), I(0), ints([4]), ints([1]), FALSE, call(OD)),
              EMPTY_DICT + S("tag") + I(7) + SETITEM),
         ALLOWED, FOUR),
    Case("untyped_storage_v3",
         call(G("torch._utils", "_rebuild_tensor_v3"), storage("UntypedStorage", "0", 16, module="torch.storage"), I(0),
              ints([4]), ints([1]), FALSE, call(OD), G("torch", "float32")),
         ALLOWED, FOUR),
    Case("meta_tensor", call(G("torch._utils", "_rebuild_meta_tensor_no_storage"), G("torch", "float16"), ints([2, 3]),
                             ints([3, 1]), FALSE), ALLOWED),
    Case("size", call(G("torch", "Size"), ints([2, 3])), ALLOWED),
    Case("size_newobj", G("torch", "Size") + tup(ints([4, 5])) + NEWOBJ, ALLOWED),
    Case("device", call(G("torch", "device"), S("cpu")), ALLOWED),
    Case("dtype_values", tup(G("torch", "float16"), G("torch", "int8"), G("torch", "bool"), G("torch", "complex128")),
         ALLOWED),
    Case("layout", call(G("torch.serialization", "_get_layout"), S("torch.strided")), ALLOWED),
    Case("bytes_via_codecs", call(G("_codecs", "encode"), S("a\u00ffb"), S("latin1")), ALLOWED),
    Case("bytearray_from_bytes", call(G("builtins", "bytearray"), call(G("_codecs", "encode"), S("xyz"), S("latin1"))),
         ALLOWED),
    Case("set_and_py2_set", tup(call(G("builtins", "set"), EMPTY_LIST + MARK + I(1) + I(2) + APPENDS),
                                call(G("__builtin__", "set"), EMPTY_LIST + I(3) + APPEND)), ALLOWED),
    Case("empty_set_opcode", EMPTY_SET, ALLOWED),
    Case("complex", call(G("builtins", "complex"), F(1.5), F(-2.0)), ALLOWED),
    Case("counter", call(G("collections", "Counter"), EMPTY_DICT + S("a") + I(2) + SETITEM), ALLOWED),
    Case("primitives", tup(NONE, TRUE, FALSE, I(255), I(65535), I(-5), I(2**70), F(0.25), S("héllo"), SB(b"py2")),
         ALLOWED),
    Case("tuple_opcodes", tup(EMPTY_TUPLE, I(1) + TUPLE1, I(1) + I(2) + TUPLE2, I(1) + I(2) + I(3) + TUPLE3), ALLOWED),
    Case("memo_reuse", EMPTY_LIST + PUT(1) + I(5) + APPEND + MARK + GET(1) + GET(1) + TUPLE + TUPLE2, ALLOWED),
    Case("long_memo", EMPTY_DICT + b"r" + (70000).to_bytes(4, "little") + b"j" + (70000).to_bytes(4, "little") + TUPLE2,
         ALLOWED),
    Case("no_proto_opcode", T4 + STOP, ALLOWED, FOUR, raw=True),
    # ---- files both loaders refuse ----------------------------------------------------------------
    Case("issue_reproducer_save", call(G("torchplug._base.dtype", "_from_name"), S("save")) + tup(EMPTY_DICT, S("OVERWRITTEN"))
         + REDUCE, REFUSED),
    Case("from_name_set_grad_enabled", call(call(G("torchplug._base.dtype", "_from_name"), S("set_grad_enabled")), FALSE),
         REFUSED),
    Case("torchplug_load", call(G("torchplug", "load"), S("other.pt"), NONE, I(1)), REFUSED),
    Case("torch_load", call(G("torch", "load"), S("other.pt"), NONE, I(1)), REFUSED),
    Case("torch_save", call(G("torch", "save"), EMPTY_DICT, S("OVERWRITTEN")), REFUSED),
    Case("torch_set_default_dtype", call(G("torch", "set_default_dtype"), G("torch", "float64")), REFUSED),
    Case("torch_float_alias", G("torch", "float"), REFUSED),
    Case("os_system", call(G("os", "system"), S("true")), REFUSED),
    Case("posix_system", call(G("posix", "system"), S("true")), REFUSED),
    Case("subprocess_popen", call(G("subprocess", "Popen"), ints([])), REFUSED),
    Case("builtins_eval", call(G("builtins", "eval"), S("1+1")), REFUSED),
    Case("py2_builtin_eval", call(G("__builtin__", "eval"), S("1+1")), REFUSED),
    Case("builtins_exec", call(G("builtins", "exec"), S("x=1")), REFUSED),
    Case("builtins_getattr", call(G("builtins", "getattr"), G("torch", "Size"), S("__class__")), REFUSED),
    Case("list_of_range", call(G("builtins", "list"), call(G("builtins", "range"), I(30_000_000))), REFUSED),
    Case("builtins_list", call(G("builtins", "list"), EMPTY_TUPLE), REFUSED),
    Case("builtins_tuple", call(G("builtins", "tuple"), EMPTY_LIST), REFUSED),
    Case("builtins_dict", call(G("builtins", "dict"), EMPTY_LIST), REFUSED),
    Case("builtins_frozenset", call(G("builtins", "frozenset"), EMPTY_LIST), REFUSED),
    Case("builtins_slice", call(G("builtins", "slice"), I(1)), REFUSED),
    Case("defaultdict", call(G("collections", "defaultdict"), NONE), REFUSED),
    Case("copyreg_reconstructor", call(G("copyreg", "_reconstructor"), G("torch", "Size"), G("torch", "Size"), NONE),
         REFUSED),
    Case("numpy_reconstruct", call(G("numpy.core.multiarray", "_reconstruct"), NONE), REFUSED),
    Case("nn_module_class", G("torch.nn.modules.linear", "Linear"), REFUSED),
    Case("main_class", G("__main__", "Evil"), REFUSED),
    Case("reduce_on_dtype", call(G("torch", "float32"), I(1)), REFUSED),
    Case("reduce_on_string", S("system") + tup(S("true")) + REDUCE, REFUSED),
    Case("newobj_of_string", S("x") + EMPTY_TUPLE + NEWOBJ, REFUSED),
    Case("build_on_dict", EMPTY_DICT + EMPTY_DICT + S("a") + I(1) + SETITEM + BUILD, REFUSED),
    Case("build_on_list", EMPTY_LIST + EMPTY_DICT + BUILD, REFUSED),
    Case("append_to_dict", EMPTY_DICT + I(1) + APPEND, REFUSED),
    Case("setitem_on_list", EMPTY_LIST + I(1) + I(2) + SETITEM, REFUSED),
    Case("stack_global_opcode", S("os") + S("system") + b"\x93", REFUSED),
    Case("frame_opcode", b"\x95" + (5).to_bytes(8, "little") + NONE, REFUSED),
    Case("inst_opcode", MARK + b"ios\nsystem\n", REFUSED),
    Case("obj_opcode", MARK + G("os", "system") + S("true") + b"o", REFUSED),
    Case("text_persid_opcode", b"P0\n", REFUSED),
    Case("binbytes_opcode", b"C\x03abc", REFUSED),
    Case("long4_opcode", b"\x8b" + (10**6).to_bytes(4, "little"), REFUSED),
    Case("ext1_opcode", b"\x82\x01", REFUSED),
    Case("dup_opcode", NONE + b"2" + TUPLE2, REFUSED),
    Case("unknown_opcode", b"\xff", REFUSED),
    Case("persid_not_storage", tup(S("module"), S("os")) + BINPERSID, REFUSED),
    Case("persid_string", S("storage") + BINPERSID, REFUSED),
    Case("persid_short_tuple", tup(S("storage"), G("torch", "FloatStorage")) + BINPERSID, REFUSED),
    Case("persid_bad_storage_type", tensor(tup(S("storage"), G("torch", "float32"), S("0"), S("cpu"), I(4)) + BINPERSID,
                                           0, [4], [1]), REFUSED, FOUR),
    Case("missing_record", T4, REFUSED),
    Case("record_smaller_than_declared", T4, REFUSED, {"0": f32(1, 2)}),
    Case("record_larger_than_declared", T4, REFUSED, {"0": f32(*range(64))}),
    Case("huge_declared_numel", tensor(storage("FloatStorage", "0", 2**40), 0, [4], [1]), REFUSED, FOUR),
    Case("view_past_the_record", tensor(storage("FloatStorage", "0", 4), 2, [4], [1]), REFUSED, FOUR),
    Case("rebuild_with_int_storage", call(G("torch._utils", "_rebuild_tensor_v2"), I(0), I(0), ints([1]), ints([1]),
                                          FALSE, call(OD)), REFUSED),
    Case("rebuild_missing_args", call(G("torch._utils", "_rebuild_tensor_v2"), storage("FloatStorage", "0", 4)),
         REFUSED, FOUR),
    Case("ordered_dict_of_string", call(OD, S("ab")), REFUSED),
    Case("memo_miss", GET(7), REFUSED),
    Case("stack_underflow", REDUCE, REFUSED),
    Case("tuple_without_mark", I(1) + TUPLE, REFUSED),
    Case("truncated_no_stop", b"\x80\x02" + NONE, REFUSED, raw=True),
    Case("truncated_string", b"\x80\x02X\xff\xff\x00\x00abc", REFUSED, raw=True),
    Case("empty_pickle", b"", REFUSED, raw=True),
    Case("global_without_newline", b"\x80\x02ctorch\nSize", REFUSED, raw=True),
]

# Files PyTorch accepts that torchplug refuses on purpose (asserted below, with the reason).
DIVERGENT = [
    # One key read as two dtypes: torch silently reinterprets the second reference as the first
    # dtype; torchplug refuses the inconsistent file.
    Case("one_key_two_dtypes", tup(T4, tensor(storage("IntStorage", "0", 4), 0, [4], [1])), REFUSED, FOUR),
    # torch.Tensor(n) allocates n uninitialised elements the file does not hold (a memory bomb).
    Case("tensor_class_called", call(G("torch", "Tensor"), I(3)), REFUSED),
    # bytearray(n) likewise allocates n bytes.
    Case("bytearray_of_size", call(G("builtins", "bytearray"), I(16)), REFUSED),
    # set(t) iterates a tensor: a zero-stride view of one element can claim 10**12 rows.
    Case("set_of_tensor", call(G("builtins", "set"), tensor(storage("FloatStorage", "0", 4), 0, [3], [0])), REFUSED, FOUR),
]


def canon(obj):
    """A comparable form of a load result, the same for torch's and torchplug's objects."""
    if isinstance(obj, (torch.Tensor, tp.Tensor)):
        is_param = type(obj).__name__ == "Parameter"
        dtype = str(obj.dtype).split(".")[-1]
        values = None if obj.device.type == "meta" else obj.detach().cpu().tolist()
        attrs = {k: canon(v) for k, v in vars(obj).items() if not k.startswith("_")}
        return ("T", dtype, tuple(obj.shape), tuple(obj.stride()), values, bool(obj.requires_grad), is_param, attrs)
    if isinstance(obj, (torch.dtype, tp.dtype)):
        return ("dtype", str(obj).split(".")[-1])
    if isinstance(obj, (torch.device, tp.device)):
        return ("device", str(obj))
    if type(obj).__name__ == "layout" or str(obj) in ("torch.strided", "torchplug.strided"):
        return ("layout", str(obj).split(".")[-1])
    if isinstance(obj, (torch.Size, tp.Size)):
        return ("Size", tuple(obj))
    if isinstance(obj, dict):
        extra = {k: canon(v) for k, v in vars(obj).items()} if hasattr(obj, "__dict__") else {}
        return (type(obj).__name__, tuple((canon(k), canon(v)) for k, v in obj.items()), tuple(sorted(extra.items())))
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, tuple(canon(v) for v in obj))
    if isinstance(obj, (set, frozenset)):
        return (type(obj).__name__, tuple(sorted(obj, key=repr)))
    return obj


def _torch_load(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.load(case.file(), weights_only=True)


def _ours(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tp.load(case.file())


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_torch_and_torchplug_agree(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a file that slipped through must not write into the checkout
    if case.verdict == ALLOWED:
        ref = _torch_load(case)
        ours = _ours(case)
        assert canon(ours) == canon(ref)
    else:
        with pytest.raises(Exception):
            _torch_load(case)
        with pytest.raises((pickle.UnpicklingError, RuntimeError)) as info:
            _ours(case)
        # IndexError etc. are never raised, not even as the direct cause of a RuntimeError
        assert type(info.value) in (pickle.UnpicklingError, RuntimeError)
        assert not (tmp_path / "OVERWRITTEN").exists()


def test_corpus_is_large_enough():
    assert len(CASES) >= 40
    assert sum(c.verdict == REFUSED for c in CASES) >= 25 and sum(c.verdict == ALLOWED for c in CASES) >= 15


@pytest.mark.parametrize("case", DIVERGENT, ids=lambda c: c.name)
def test_deliberate_refusals_torch_accepts(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _torch_load(case)  # PyTorch loads it ...
    with pytest.raises((pickle.UnpicklingError, RuntimeError)):
        _ours(case)  # ... torchplug refuses it (see the comment on each case)


def test_shared_views_in_the_corpus_share_storage():
    out = _ours(CASES[[c.name for c in CASES].index("two_views_one_storage")])
    assert out[0].untyped_storage() is out[1].untyped_storage()
    out[0][1] = 10.0
    assert out[1][0].item() == 10.0

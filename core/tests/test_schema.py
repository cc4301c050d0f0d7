"""Tests for torchplug._dispatch.schema: parsing, properties, rendering and error reporting."""

from __future__ import annotations

import copy
import math
import pickle
import sys
from pathlib import Path

import pytest

_CORE = str(Path(__file__).resolve().parents[1])
if _CORE not in sys.path:
    sys.path.insert(0, _CORE)

from torchplug._dispatch.schema import (  # noqa: E402
    NO_DEFAULT,
    AliasInfo,
    Argument,
    FunctionSchema,
    Identifier,
    Return,
    SchemaError,
    SchemaType,
    parse_schema,
)

# Real aten schemas, already in canonical form: str(parse_schema(s)) == s.
CANONICAL = [
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "cat(Tensor[] tensors, int dim=0) -> Tensor",
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
    "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, "
    "SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
    "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
    "float eps=1e-05, bool cudnn_enable=True) -> Tensor",
    "div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
    '_foo(Tensor self, str mode="mean", float x=-1.5, int[] l=[1, -2]) -> ()',
    "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)",
    "bad_names(Tensor self) -> Tensor[]",
    "aten::cudnn_grid_sampler(Tensor self, Tensor grid) -> Tensor output",
    "aten::_foreach_copy(Tensor[] self, Tensor[] src, bool non_blocking=False) -> Tensor[] self_out",
    "aten::native_batch_norm.out(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool training, float momentum, float eps, *, Tensor(a!) out, Tensor(b!) save_mean, "
    "Tensor(c!) save_invstd) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
    "aten::_foreach_add.List_out(Tensor[] self, Tensor[] other, *, Scalar alpha=1, Tensor(a!)[] out) -> ()",
    "aten::_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
    "aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
    "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)",
    "aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
    "MemoryFormat? memory_format=None) -> Tensor(a)",
    "aten::mean.names_dim(Tensor self, Dimname[1] dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "aten::native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, "
    "Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    "aten::random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None) -> Tensor(a!)",
    "aten::_fused_adam_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, Tensor(d!)[] exp_avg_sqs, "
    "Tensor(e!)[] max_exp_avg_sqs, Tensor[] state_steps, *, float lr, float beta1, float beta2, "
    "float weight_decay, float eps, bool amsgrad, bool maximize, Tensor? grad_scale=None, "
    "Tensor? found_inf=None) -> ()",
    "aten::nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, "
    "SymInt ignore_index=-100) -> Tensor",
    "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
    "aten::_local_scalar_dense(Tensor self) -> Scalar",
    "aten::size.int(Tensor self, int dim) -> int",
    "aten::is_nonzero(Tensor self) -> bool",
    "aten::q_scale(Tensor self) -> float",
    "aten::result_type.Tensor(Tensor tensor, Tensor other) -> ScalarType",
    "aten::qscheme(Tensor self) -> QScheme",
    "aten::sym_size.int(Tensor self, int dim) -> SymInt",
    "aten::set_.source_Storage(Tensor(a!) self, Storage source) -> Tensor(a!)",
    "aten::record_stream(Tensor(a!) self, Stream s) -> ()",
    "aten::_cufft_get_plan_cache_size(DeviceIndex device_index) -> int",
    "aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, "
    "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "aten::var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
    "bool keepdim=False) -> (Tensor, Tensor)",
    "aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)",
    "aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
    "int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
    "aten::upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
    "float[]? scale_factors) -> Tensor",
    "aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) "
    "-> (Tensor values, Tensor indices)",
    "aten::topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, *, "
    "Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
    "aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",
    "aten::bernoulli.p(Tensor self, float p=0.5, *, Generator? generator=None) -> Tensor",
    "aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
    "aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
    "aten::align_to(Tensor(a) self, Dimname[] names) -> Tensor(a)",
    "aten::rename_(Tensor(a!) self, Dimname[]? names) -> Tensor(a!)",
    "aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
    "aten::_make_dep_token(*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "aten::_amp_update_scale_(Tensor(a!) self, Tensor(b!) growth_tracker, Tensor found_inf, "
    "float scale_growth_factor, float scale_backoff_factor, int growth_interval) -> Tensor(a!)",
    "aten::__and__.Tensor(Tensor self, Tensor other) -> Tensor",
    "aten::__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "aten::_fused_moving_avg_obs_fq_helper(Tensor self, Tensor observer_on, Tensor fake_quant_on, "
    "Tensor(a!) running_min, Tensor(b!) running_max, Tensor(c!) scale, Tensor(d!) zero_point, "
    "float averaging_const, int quant_min, int quant_max, int ch_axis, bool per_row_fake_quant=False, "
    "bool symmetric_quant=False) -> (Tensor output, Tensor mask)",
    "aten::_cummax_helper(Tensor self, Tensor(a!) values, Tensor(b!) indices, int dim) -> ()",
    "aten::empty.out(SymInt[] size, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)",
    "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    "aten::pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor",
    "aten::_foreach_norm.Scalar(Tensor[] self, Scalar ord=2, ScalarType? dtype=None) -> Tensor[]",
    "aten::diagonal.Dimname(Tensor(a) self, *, Dimname outdim, Dimname dim1, Dimname dim2, "
    "int offset=0) -> Tensor(a)",
    "aten::nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> Tensor",
    "aten::_print(str s) -> ()",
    "aten::is_pinned(Tensor self, Device? device=None) -> bool",
    "aten::_scaled_dot_product_flash_attention(Tensor query, Tensor key, Tensor value, float dropout_p=0.0, "
    "bool is_causal=False, bool return_debug_mask=False, *, float? scale=None) -> (Tensor output, "
    "Tensor logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, SymInt max_k, Tensor philox_seed, "
    "Tensor philox_offset, Tensor debug_attn_mask)",
    "aten::sym_is_contiguous(Tensor self, MemoryFormat memory_format=contiguous_format) -> SymBool",
    "aten::_test_string_default(Tensor dummy, str a=\"\\\"'\\\\\") -> Tensor",
    "prims::convert_element_type(Tensor a, ScalarType dtype) -> Tensor",
    "mylib::weird(Any x, Tensor(a|b) y, Tensor(a! -> a|b) z, Tensor(c!)? w, float lo=-inf, float hi=inf) "
    "-> Tensor(a|b)",
]

# Schemas whose canonical rendering differs from the input text: (input, canonical).
NON_CANONICAL = [
    ("aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
     "float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor",
     "aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
     "float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor"),
    ("f(float eps=1e-5, float tiny=-1E-08, float big=1e20) -> ()",
     "f(float eps=1e-05, float tiny=-1e-08, float big=1e+20) -> ()"),
    ("f(str s='x', str q='\"\\'\\\\') -> ()", "f(str s=\"x\", str q=\"\\\"'\\\\\") -> ()"),
    ("  aten::relu  (  Tensor  self )->Tensor  ", "aten::relu(Tensor self) -> Tensor"),
    ("f(Tensor(a->*) x) -> (Tensor(a)[])", "f(Tensor(a -> *) x) -> Tensor(a)[]"),
    ("f(int[] x=[ ]) -> (Tensor out)", "f(int[] x=[]) -> Tensor out"),
    ("f(int x) -> int\n", "f(int x) -> int"),
]


@pytest.mark.parametrize("text", CANONICAL)
def test_canonical_round_trip(text):
    schema = parse_schema(text)
    assert str(schema) == text
    assert parse_schema(str(schema)) == schema
    assert hash(schema) == hash(parse_schema(text))


@pytest.mark.parametrize(("text", "canonical"), NON_CANONICAL)
def test_non_canonical_round_trip(text, canonical):
    schema = parse_schema(text)
    assert str(schema) == canonical
    assert parse_schema(canonical) == schema


def test_add_tensor_structure():
    s = parse_schema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert (s.namespace, s.name, s.overload_name) == ("aten", "add", "Tensor")
    assert s.qualified_name == "aten::add"
    assert s.full_name == "aten::add.Tensor"
    assert s.arguments == (
        Argument("self", SchemaType("Tensor")),
        Argument("other", SchemaType("Tensor")),
        Argument("alpha", SchemaType("Scalar"), 1, kwarg_only=True),
    )
    assert s.returns == (Return(None, SchemaType("Tensor")),)
    assert [a.name for a in s.positional_arguments] == ["self", "other"]
    assert [a.name for a in s.kwarg_only_arguments] == ["alpha"]
    assert s.kind == "functional" and not s.is_mutable and not s.is_view
    assert s.tensor_argument_indices == (0, 1)
    assert s.mutated_argument_indices == ()


def test_names_without_namespace_or_overload():
    s = parse_schema("cat(Tensor[] tensors, int dim=0) -> Tensor")
    assert (s.namespace, s.overload_name, s.qualified_name, s.full_name) == ("", "", "cat", "cat")
    assert s.with_namespace("aten").full_name == "aten::cat"
    assert s.namespace == ""  # with_namespace returned a copy


def test_namespace_keyword():
    assert parse_schema("relu(Tensor self) -> Tensor", namespace="aten").full_name == "aten::relu"
    assert parse_schema("aten::relu(Tensor self) -> Tensor", namespace="aten").namespace == "aten"
    with pytest.raises(SchemaError) as info:
        parse_schema("prims::relu(Tensor self) -> Tensor", namespace="aten")
    assert info.value.column == 0 and "'prims'" in str(info.value)


@pytest.mark.parametrize(("text", "kind", "mutated", "view_of"), [
    ("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", "functional", (), None),
    ("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", "inplace", (0,), None),
    ("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)", "out", (3,), None),
    ("aten::topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, *, "
     "Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)", "out", (5, 6), None),
    ("aten::_foreach_add.List_out(Tensor[] self, Tensor[] other, *, Scalar alpha=1, Tensor(a!)[] out) -> ()",
     "out", (3,), None),
    ("aten::_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()", "inplace", (0,), None),
    ("aten::__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", "inplace", (0,), None),
    ("aten::_cummax_helper(Tensor self, Tensor(a!) values, Tensor(b!) indices, int dim) -> ()",
     "mutable", (1, 2), None),
    ("f(Tensor self, *, Tensor(a!) buf) -> Tensor", "mutable", (1,), None),
    ("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", "functional", (), 0),
    ("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]", "functional", (), 0),
    ("aten::_make_dual(Tensor(a) primal, Tensor tangent, int level) -> Tensor(a)", "functional", (), 0),
    ("f(Tensor x, Tensor(b) y) -> (Tensor, Tensor(b))", "functional", (), 1),
])
def test_kind_mutation_and_views(text, kind, mutated, view_of):
    s = parse_schema(text)
    assert s.kind == kind
    assert s.mutated_argument_indices == mutated
    assert s.is_mutable == bool(mutated)
    assert s.view_of == view_of
    assert s.is_view == (view_of is not None)


def test_out_arguments():
    s = parse_schema("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    assert [a.name for a in s.out_arguments] == ["out"]
    assert s.arguments[3].is_write and not s.arguments[0].is_write
    assert s.returns[0].alias == AliasInfo(("a",), True, None)


def test_tensor_argument_indices_and_type_predicates():
    s = parse_schema("f(Tensor a, Tensor? b, Tensor[] c, Tensor?[] d, int e, Scalar f, int[]? g, "
                     "Tensor(a!)[] h) -> ()")
    assert s.tensor_argument_indices == (0, 1, 2, 3, 7)
    types = [a.type for a in s.arguments]
    assert [t.is_tensor for t in types] == [True, True, False, False, False, False, False, False]
    assert [t.is_tensor_list for t in types] == [False, False, True, True, False, False, False, True]
    assert [t.is_tensor_like for t in types] == [True, True, True, True, False, False, False, True]


@pytest.mark.parametrize(("text", "expected"), [
    ("Tensor", SchemaType("Tensor")),
    ("Tensor?", SchemaType("Tensor", optional=True)),
    ("Tensor[]", SchemaType("Tensor", is_list=True)),
    ("Tensor?[]", SchemaType("Tensor", is_list=True, elem_optional=True)),
    ("int[2]", SchemaType("int", is_list=True, list_size=2)),
    ("SymInt[1]", SchemaType("SymInt", is_list=True, list_size=1)),
    ("int[]?", SchemaType("int", optional=True, is_list=True)),
    ("int[1]?", SchemaType("int", optional=True, is_list=True, list_size=1)),
    ("Tensor?[]?", SchemaType("Tensor", optional=True, is_list=True, elem_optional=True)),
])
def test_types_parse_and_render(text, expected):
    arg = parse_schema(f"f({text} x) -> ()").arguments[0]
    assert arg.type == expected
    assert str(arg.type) == text


@pytest.mark.parametrize(("annotation", "alias"), [
    ("Tensor(a)", AliasInfo(("a",), False, None)),
    ("Tensor(a!)", AliasInfo(("a",), True, None)),
    ("Tensor(a|b)", AliasInfo(("a", "b"), False, None)),
    ("Tensor(a -> *)", AliasInfo(("a",), False, ("*",))),
    ("Tensor(a! -> a|b)", AliasInfo(("a",), True, ("a", "b"))),
    ("Tensor(a!)[]", AliasInfo(("a",), True, None)),
    ("Tensor(a)[]", AliasInfo(("a",), False, None)),
    ("Tensor(z!)?", AliasInfo(("z",), True, None)),
])
def test_alias_annotations(annotation, alias):
    arg = parse_schema(f"f({annotation} x) -> ()").arguments[0]
    assert arg.alias == alias
    assert arg.type.base == "Tensor"
    assert str(arg) == f"{annotation} x"


def test_default_python_values():
    s = parse_schema(
        'f(int a=0, int b=-3, float c=1.0, float d=-1e-5, float e=1e-08, float f=inf, float g=-inf, '
        'bool h=True, bool i=False, Tensor? j=None, int[] k=[0, 1], int[] l=[], str m="x", str n=\'y\', '
        'MemoryFormat o=contiguous_format, int p=Mean, ScalarType q=long, SymInt[2] r=1, int s, '
        'Scalar t=2.5) -> ()'.replace("int s, ", "*, int s, "))
    d = {a.name: a.default for a in s.arguments}
    assert d["a"] == 0 and type(d["a"]) is int
    assert d["b"] == -3
    assert d["c"] == 1.0 and type(d["c"]) is float
    assert d["d"] == -1e-5 and d["e"] == 1e-08
    assert d["f"] == math.inf and d["g"] == -math.inf
    assert d["h"] is True and d["i"] is False and d["j"] is None
    assert d["k"] == (0, 1) and d["l"] == ()
    assert d["m"] == "x" and d["n"] == "y"
    assert d["o"] == Identifier("contiguous_format") and str(d["o"]) == "contiguous_format"
    assert d["p"] == Identifier("Mean") and d["q"] == Identifier("long")
    assert d["p"] != "Mean"  # identifiers are not strings
    assert d["r"] == 1  # bare int default for a fixed-size list is kept as given
    assert d["s"] is NO_DEFAULT and not s.arguments[18].has_default
    assert d["t"] == 2.5
    assert all(a.has_default for a in s.arguments if a.name != "s")


def test_string_escapes():
    s = parse_schema(r'''f(str a="\"'\\", str b='"\'\\') -> ()''')
    assert s.arguments[0].default == "\"'\\" == s.arguments[1].default


def test_keyword_only_args_may_skip_defaults():
    s = parse_schema("f(Tensor self, int x=1, *, int y, bool z=False, int w) -> ()")
    assert [(a.name, a.kwarg_only, a.has_default) for a in s.arguments] == [
        ("self", False, False), ("x", False, True), ("y", True, False), ("z", True, True), ("w", True, False)]


def test_return_forms():
    assert parse_schema("f() -> ()").returns == ()
    assert parse_schema("f() -> Tensor(a)[]").returns == (
        Return(None, SchemaType("Tensor", is_list=True), AliasInfo(("a",), False, None)),)
    named = parse_schema("f() -> (Tensor values, Tensor indices)").returns
    assert [r.name for r in named] == ["values", "indices"]
    assert parse_schema("f() -> (Tensor)") == parse_schema("f() -> Tensor")
    for ret in ("int", "float", "bool", "Scalar", "ScalarType", "Tensor[]"):
        assert str(parse_schema(f"f() -> {ret}").returns[0].type) == ret


def test_objects_are_frozen_hashable_and_picklable():
    s = parse_schema("aten::nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, "
                     "SymInt ignore_index=-100, int[] l=[1]) -> Tensor")
    with pytest.raises(AttributeError):
        s.name = "x"  # type: ignore[misc]
    assert {s: 1}[parse_schema(str(s))] == 1
    assert pickle.loads(pickle.dumps(s)) == s
    assert copy.deepcopy(s) == s
    assert repr(NO_DEFAULT) == "NO_DEFAULT"
    assert pickle.loads(pickle.dumps(NO_DEFAULT)) is NO_DEFAULT
    assert copy.deepcopy(NO_DEFAULT) is NO_DEFAULT
    assert isinstance(parse_schema("f() -> ()"), FunctionSchema)


def test_hand_built_schema_renders():
    s = FunctionSchema("ns", "g", "", (Argument("x", SchemaType("Tensor"), alias=AliasInfo(("a",), True)),
                                       Argument("k", SchemaType("int", is_list=True), (2, 3), kwarg_only=True)),
                       (Return("y", SchemaType("Tensor"), AliasInfo(("a",), True)),))
    assert str(s) == "ns::g(Tensor(a!) x, *, int[] k=[2, 3]) -> Tensor(a!) y"
    assert parse_schema(str(s)) == s


def _column_of(text: str, marker: str, nth: int = 0) -> int:
    """Column of the nth occurrence of marker in text."""
    col = -1
    for _ in range(nth + 1):
        col = text.index(marker, col + 1)
    return col


# (schema text, marker whose position the caret must point at, occurrence of marker, message fragment)
BAD = [
    ("f(Tensr self) -> Tensor", "Tensr", 0, "unknown type 'Tensr'"),
    ("f(Tensor self, Foo x) -> Tensor", "Foo", 0, "unknown type 'Foo'"),
    ("f(Tensor self -> Tensor", "->", 0, "expected ',' or ')' but found '->'"),
    ("f(Tensor self) Tensor", "Tensor", 1, "expected '->' but found 'Tensor'"),
    ("f(Tensor self)", None, 0, "expected '->' but found end of input"),
    ("f(Tensor self, int x=1, int y) -> ()", "int y", 0, "non-default argument 'y'"),
    ("f(Tensor self, *, int x, *, int y) -> ()", "*", 1, "'*' may appear only once"),
    ("f(Tensor self, *) -> ()", ")", 0, "expected an argument after '*'"),
    ("f(Tensor self, int self) -> ()", "self", 1, "duplicate argument name 'self'"),
    ("f(Tensor(ab) self) -> ()", "ab", 0, "bad alias annotation"),
    ("f(Tensor(A) self) -> ()", "A", 0, "bad alias annotation"),
    ("f(Tensor() self) -> ()", ")", 0, "bad alias annotation"),
    ("f(Tensor(a -> ) self) -> ()", ")", 0, "bad alias annotation"),
    ("f(Tensor(a!) x, Tensor(a!) y) -> ()", "a!", 1, "alias set 'a' is written by both 'x' and 'y'"),
    ("f(Tensor(a|b!) x) -> ()", "!", 0, "'!' is not allowed"),
    ("f(Tensor self) -> Tensor foo bar", "bar", 0, "unexpected 'bar' after the end of the schema"),
    ("f(Tensor self) -> Tensor)", ")", 1, "unexpected ')'"),
    ("f(int(a) x) -> ()", "(a", 0, "only allowed on Tensor"),
    ("f(int x=[1]) -> ()", "[", 0, "list default for non-list type 'int'"),
    ("f(int[0] x) -> ()", "0", 0, "positive integer"),
    ("f(int[][] x) -> ()", "[", 1, "nested list"),
    ("f(int x=) -> ()", ")", 0, "expected a default value"),
    ("f(str s=\"abc) -> ()", '"', 0, "unterminated string"),
    ("f(int x=@) -> ()", "@", 0, "unexpected character '@'"),
    ("f(int x,) -> ()", ")", 0, "expected a type but found ')'"),
    ("f(Tensor x) -> (Tensor, Tensor", None, 0, "expected ',' or ')' but found end of input"),
    ("", None, 0, "expected an operator name"),
    ("aten::(Tensor x) -> ()", "(", 0, "expected an operator name after '::'"),
]


@pytest.mark.parametrize(("text", "marker", "nth", "fragment"), BAD)
def test_errors_point_at_the_right_column(text, marker, nth, fragment):
    with pytest.raises(SchemaError) as info:
        parse_schema(text)
    err = info.value
    expected_col = len(text) if marker is None else _column_of(text, marker, nth)
    assert err.column == expected_col
    assert err.schema == text
    assert fragment in str(err)
    lines = str(err).split("\n")
    assert len(lines) == 3
    assert lines[1] == text
    assert lines[2] == " " * expected_col + "^"


def test_unknown_type_hint_lists_valid_types():
    with pytest.raises(SchemaError) as info:
        parse_schema("f(Tensr self) -> Tensor")
    first = str(info.value).split("\n")[0]
    assert "did you mean 'Tensor'" in first
    for name in ("ScalarType", "SymInt", "MemoryFormat", "Generator"):
        assert name in first


def test_error_is_value_error_and_picklable():
    with pytest.raises(ValueError):
        parse_schema("f(")
    err = SchemaError("boom", "f(x)", 2)
    again = pickle.loads(pickle.dumps(err))
    assert (again.schema, again.column, str(again)) == ("f(x)", 2, str(err))


def test_caret_alignment_with_multiline_text():
    text = "f(Tensor self,\n\tTensr other) -> Tensor"
    with pytest.raises(SchemaError) as info:
        parse_schema(text)
    lines = str(info.value).split("\n")
    assert info.value.column == text.index("Tensr")
    assert lines[2].index("^") == text.index("Tensr")
    assert lines[1][lines[2].index("^"):].startswith("Tensr")

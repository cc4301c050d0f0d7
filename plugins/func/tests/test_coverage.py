"""Every op of the aten table batches under vmap without the per-sample fallback (a batching rule, a
decomposition, randomness handling, or no tensor argument), except the ops listed here with the reason;
and blocking the plugin leaves everything but vmap/torch.func working."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import torchplug

_DATA_DEPENDENT = "output shape depends on the values (torch has no batching rule either)"
_GRAD_SUMMED = "a backward op summing over N (weights/bias gradients): per-sample loop"
_LOOP_OK = "in-place variant: the per-sample loop writes each sample's slice (correct, slower)"
# op -> why it takes the per-sample loop
FALLBACK = {
    "aten::nonzero": _DATA_DEPENDENT, "aten::_unique2": _DATA_DEPENDENT, "aten::unique_dim": _DATA_DEPENDENT,
    "aten::unique_consecutive": _DATA_DEPENDENT, "aten::bincount": _DATA_DEPENDENT,
    "aten::masked_select": _DATA_DEPENDENT, "aten::repeat_interleave.Tensor": _DATA_DEPENDENT,
    "aten::histc": "bins from per-sample min/max", "aten::as_strided": "strides of the logical tensor",
    "aten::_reshape_alias": "strides of the logical tensor", "aten::view.dtype": "reinterprets the buffer",
    "aten::native_layer_norm_backward": _GRAD_SUMMED,
    "aten::native_batch_norm_backward": _GRAD_SUMMED,
    "aten::native_group_norm_backward": _GRAD_SUMMED, "aten::_prelu_kernel_backward": _GRAD_SUMMED,
    "aten::embedding_dense_backward": _GRAD_SUMMED, "aten::embedding_renorm_": _LOOP_OK,
    "aten::nll_loss_backward": "backward op (reduction over N)", "aten::nll_loss2d_backward": "backward op",
    "aten::binary_cross_entropy_backward": "backward op", "aten::glu_backward": "backward op",
    "aten::native_dropout_backward": "backward op", "aten::_prelu_kernel": "weight broadcasts over dim 1",
    "aten::linalg_solve": "two operands of different ranks", "aten::linalg_lstsq": "two operands",
    "aten::polar": "complex construction", "aten::complex": "complex construction",
    "aten::index_put": "indices and values per sample", "aten::take": "flat indices per sample",
    "aten::quantile": "q tensor per sample", "aten::nanquantile": "q tensor per sample",
    "aten::searchsorted.Tensor": "two operands", "aten::aminmax": "tuple reduction",
    "aten::masked_scatter": _DATA_DEPENDENT,
    "aten::linalg_ldl_solve": "two operands",
}


def _classified():
    from torchplug._dispatch.dispatcher import DISPATCHER
    from torchplug._schemas import expand_table
    from torchplug_func._coverage import classify

    torchplug.vmap  # loads the plugins
    out = {}
    for schema, _tags, _wrapped in expand_table():
        name = schema.split("(")[0]
        entry = DISPATCHER.find(name)
        if entry is not None:
            out[name] = classify(entry)
    return out


def test_every_table_op_batches_or_is_listed():
    kinds = _classified()
    # in-place ops without a rule are correct through the loop (it writes each sample's slice)
    missing = sorted(n for n, k in kinds.items() if k == "fallback" and n not in FALLBACK and not _inplace(n))
    assert not missing, missing


def _inplace(name):
    return name.split("::")[1].split(".")[0].endswith("_")


def test_fallback_list_is_current():
    kinds = _classified()
    stale = [n for n in FALLBACK if kinds.get(n) != "fallback"]
    assert not stale, stale


def test_rules_cover_the_pointwise_and_view_ops():
    from torchplug._schemas import expand_table

    kinds = _classified()
    for schema, tags, _w in expand_table():
        name = schema.split("(")[0]
        if ("pointwise" in tags or "view" in tags) and "out" not in tags and "random" not in tags:
            assert kinds[name] in ("rule", "decomposition") or name in FALLBACK, name


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **env))


def test_blocking_the_plugin_leaves_the_rest_working():
    code = ("import torchplug as t\n"
            "x = t.ones(3, requires_grad=True); (x * 2).sum().backward(); assert x.grad.tolist() == [2., 2., 2.]\n"
            "try:\n    t.vmap\nexcept AttributeError as e:\n    print('ERR', e)\n"
            "try:\n    import torchplug.func\nexcept ImportError as e:\n    print('IMPORT', type(e).__name__)\n")
    proc = _run(code, TORCHPLUG_BLOCK_PLUGINS="func")
    assert proc.returncode == 0, proc.stderr
    assert "ERR torchplug.vmap is provided by the 'func' plugin, which is blocked" in proc.stdout
    assert "TORCHPLUG_BLOCK_PLUGINS" in proc.stdout
    assert "IMPORT ModuleNotFoundError" in proc.stdout


def test_doctor_lists_the_batched_key():
    proc = subprocess.run([sys.executable, "-m", "torchplug"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "torchplug_func._kernels:batched_fallback [registered by plugin 'func'" in proc.stdout
    assert any(line.split()[:1] == ["Batched"] for line in proc.stdout.splitlines())


def _simple_ops():
    """Table ops whose required arguments are one or two tensors (the rest defaulted), not random/out/in-place."""
    from torchplug._dispatch.dispatcher import DISPATCHER
    from torchplug._schemas import expand_table

    torchplug.vmap
    found = []
    for schema, tags, _w in expand_table():
        if {"out", "random", "inplace"} & set(tags):
            continue
        name = schema.split("(")[0]
        entry = DISPATCHER.find(name)
        if entry is None:
            continue
        required = [a for a in entry.schema.arguments if not a.has_default]
        if entry.schema.mutated_argument_indices:  # copy_, fill_: they write their input
            continue
        if len(required) in (1, 2) and all(a.type.base == "Tensor" and not a.type.is_list for a in required):
            found.append(name)
    return found


@pytest.mark.parametrize("in_dims", [0, 1, (0, None), (None, 1)], ids=["0", "1", "0-None", "None-1"])
@pytest.mark.filterwarnings("ignore::UserWarning")  # the fallback's, and the ops' own (complex casts)
def test_every_simple_table_op_batches_like_the_loop(in_dims):
    """vmap(op) equals the op applied sample by sample and stacked, for every op of the table that takes one
    or two tensors (whichever way it batches: rule, decomposition or fallback)."""
    from torchplug._dispatch.dispatcher import DISPATCHER

    gen = torchplug.Generator().manual_seed(0)
    x = torchplug.rand(4, 3, 5, dtype=torchplug.float64, generator=gen) + 0.5
    y = torchplug.rand(4, 3, 5, dtype=torchplug.float64, generator=gen) + 0.5
    checked = 0
    failures = []
    for name in _simple_ops():
        op = DISPATCHER.find(name).overload
        n_args = sum(1 for a in op._entry.schema.arguments if not a.has_default)
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * n_args
        if len(dims) != n_args:
            continue
        inputs = [t.movedim(0, d) if d else (t if d == 0 else t[0]) for t, d in zip((x, y), dims)]
        try:
            per_sample = [op(*[t.select(d, i) if d is not None else t for t, d in zip(inputs, dims)]) for i in range(4)]
        except Exception:  # noqa: BLE001 - the op refuses these inputs outside vmap too
            continue
        if not isinstance(per_sample[0], (torchplug.Tensor, tuple)):
            continue
        try:
            got = torchplug.vmap(op, in_dims=dims)(*inputs)
        except RuntimeError as exc:
            if "vmap: It looks like you're calling .item()" in str(exc):
                continue  # ops returning a Python value (equal, allclose): torch refuses them too
            failures.append((name, repr(exc)[:200]))
            continue
        results = list(zip(*per_sample)) if isinstance(per_sample[0], tuple) else [per_sample]
        outs = list(got) if isinstance(got, tuple) else [got]
        for out, ref in zip(outs, results):
            expected = torchplug.stack(list(ref))
            if tuple(out.shape) != tuple(expected.shape) or out.dtype != expected.dtype or not bool(
                    (out.double().nan_to_num(0) - expected.double().nan_to_num(0)).abs().sum() < 1e-9):
                failures.append((name, tuple(out.shape), tuple(expected.shape)))
        checked += 1
    assert checked > (150 if not isinstance(in_dims, tuple) else 50)  # the tuples apply to two-tensor ops
    assert not failures, failures

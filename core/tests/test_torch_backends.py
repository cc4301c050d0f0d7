"""torchplug.backends (PyTorch's torch.backends), float32 matmul precision and deterministic algorithms."""

from __future__ import annotations

import warnings

import pytest

import torchplug as torch
from torchplug import backends
from torchplug._runtime.backends import registered_backends


@pytest.fixture
def real():
    return pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def restore_settings():
    saved = (torch.get_float32_matmul_precision(), torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled())
    cudnn = {k: getattr(backends.cudnn, k) for k in ("enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit")}
    einsum = (backends.opt_einsum.enabled, backends.opt_einsum.strategy)
    yield
    backends._flags._frozen = False
    torch.set_float32_matmul_precision(saved[0])
    torch.use_deterministic_algorithms(saved[1], warn_only=saved[2])
    for k, v in cudnn.items():
        setattr(backends.cudnn, k, v)
    backends.opt_einsum.enabled = einsum[0]
    if einsum[0]:
        backends.opt_einsum.strategy = einsum[1]


def test_defaults_match_torch(real):
    names = [("cudnn", "enabled"), ("cudnn", "benchmark"), ("cudnn", "deterministic"), ("cudnn", "allow_tf32"),
             ("cuda.matmul", "allow_tf32"), ("cuda.matmul", "allow_fp16_reduced_precision_reduction"),
             ("cuda.matmul", "allow_bf16_reduced_precision_reduction"), ("opt_einsum", "enabled"),
             ("opt_einsum", "strategy"), ("mkldnn", "enabled")]
    for mod, attr in names:
        ours, theirs = backends, real.backends
        for part in mod.split("."):
            ours, theirs = getattr(ours, part), getattr(theirs, part)
        assert getattr(ours, attr) == getattr(theirs, attr), (mod, attr)
    assert torch.get_float32_matmul_precision() == real.get_float32_matmul_precision() == "highest"
    assert torch.are_deterministic_algorithms_enabled() is real.are_deterministic_algorithms_enabled() is False
    assert backends.cudnn.is_available() is False and backends.cudnn.version() is None
    assert backends.cudnn.is_acceptable(torch.zeros(1)) is False
    assert backends.opt_einsum.is_available() is real.backends.opt_einsum.is_available()


def test_is_built_answers_from_the_registered_backends():
    assert backends.cuda.is_built() is ("cuda" in registered_backends())
    assert backends.mps.is_built() is ("mps" in registered_backends())
    assert backends.mps.is_available() is (backends.mps.is_built() and torch.mps.is_available())
    assert backends.mkldnn.is_available() is False  # no oneDNN behind the host kernels
    assert backends.openmp.is_available() is False
    assert isinstance(backends.mkl.is_available(), bool)


def test_cpu_capability_is_the_simd_level_numpy_dispatches_to():
    import platform

    cap = backends.cpu.get_cpu_capability()
    assert cap in ("DEFAULT", "VSX", "Z VECTOR", "NO AVX", "AVX2", "AVX512", "SVE256")
    if platform.machine().lower() in ("x86_64", "amd64"):
        from numpy._core._multiarray_umath import __cpu_features__ as f

        expected = ("AVX512" if all(f[k] for k in ("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ"))
                    else "AVX2" if f["AVX2"] and f["FMA3"] else "NO AVX")
        assert cap == expected


def test_flags_are_checked_like_torch(real):
    cases = [(backends.cudnn, real.backends.cudnn, "deterministic", "yes"),
             (backends.cudnn, real.backends.cudnn, "benchmark", 1),
             (backends.cuda.matmul, real.backends.cuda.matmul, "allow_tf32", 3)]
    for ours, theirs, attr, bad in cases:
        with pytest.raises(RuntimeError) as theirs_err:
            setattr(theirs, attr, bad)
        with pytest.raises(RuntimeError, match=r"expects a bool, but got ") as ours_err:
            setattr(ours, attr, bad)
        assert str(ours_err.value).split(" expects")[1] == str(theirs_err.value).split(" expects")[1]
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        backends.cuda.matmul.foo = 1  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        backends.cuda.matmul.foo  # noqa: B018
    with pytest.raises(ValueError, match=r"`strategy` must be one of the following: \[auto, greedy, optimal\]"):
        backends.opt_einsum.strategy = "fastest"


def test_flags_context_managers_restore(real):
    with backends.cudnn.flags(enabled=False, benchmark=True, deterministic=True):
        assert (backends.cudnn.enabled, backends.cudnn.benchmark, backends.cudnn.deterministic) == (False, True, True)
    assert (backends.cudnn.enabled, backends.cudnn.benchmark, backends.cudnn.deterministic) == (True, False, False)
    with backends.opt_einsum.flags(strategy="greedy"):
        assert backends.opt_einsum.strategy == "greedy"
    assert backends.opt_einsum.strategy == "auto"
    with backends.mkldnn.flags():  # PyTorch's defaults inside: disabled
        assert backends.mkldnn.enabled is False
    assert backends.mkldnn.enabled is True


def test_disable_global_flags_allows_only_the_context_manager():
    backends.disable_global_flags()
    assert backends.flags_frozen()
    with pytest.raises(RuntimeError, match="not allowed to set torchplug.backends.cudnn flags after disable_global_flags"):
        backends.cudnn.benchmark = True
    with backends.cudnn.flags(benchmark=True):
        assert backends.cudnn.benchmark is True
    assert backends.cudnn.benchmark is False


def test_matmul_precision_and_allow_tf32_are_one_setting(real):
    saved = real.get_float32_matmul_precision()
    try:
        for precision in ("high", "medium", "highest"):
            torch.set_float32_matmul_precision(precision)
            real.set_float32_matmul_precision(precision)
            assert backends.cuda.matmul.allow_tf32 == real.backends.cuda.matmul.allow_tf32
            assert torch.get_float32_matmul_precision() == real.get_float32_matmul_precision()
        for flag in (True, False):
            backends.cuda.matmul.allow_tf32 = flag
            real.backends.cuda.matmul.allow_tf32 = flag
            assert torch.get_float32_matmul_precision() == real.get_float32_matmul_precision()
        with pytest.warns(UserWarning, match="foo is not one of 'highest', 'high', or 'medium'"):
            torch.set_float32_matmul_precision("foo")
        assert torch.get_float32_matmul_precision() == "highest"
        with pytest.raises(RuntimeError, match="set_float32_matmul_precision expects a str, but got int"):
            torch.set_float32_matmul_precision(1)  # type: ignore[arg-type]
    finally:
        real.set_float32_matmul_precision(saved)


def test_precision_changes_reach_subscribers():
    from torchplug._base.flags import on_change

    seen = []
    unsubscribe = on_change(lambda name, value: seen.append((name, value)))
    try:
        torch.set_float32_matmul_precision("medium")
        backends.cuda.matmul.allow_tf32 = False
        torch.use_deterministic_algorithms(True, warn_only=True)
    finally:
        unsubscribe()
    torch.set_float32_matmul_precision("high")
    assert seen == [("float32_matmul_precision", "medium"), ("float32_matmul_precision", "highest"),
                    ("deterministic_algorithms", (True, True))]


def test_deterministic_algorithms_like_torch(real):
    saved = (real.are_deterministic_algorithms_enabled(), real.is_deterministic_algorithms_warn_only_enabled())
    try:
        for args, kwargs in [((True,), {}), ((True,), {"warn_only": True}), ((False,), {})]:
            torch.use_deterministic_algorithms(*args, **kwargs)
            real.use_deterministic_algorithms(*args, **kwargs)
            assert torch.are_deterministic_algorithms_enabled() == real.are_deterministic_algorithms_enabled()
            assert torch.is_deterministic_algorithms_warn_only_enabled() == real.is_deterministic_algorithms_warn_only_enabled()
            assert torch.get_deterministic_debug_mode() == real.get_deterministic_debug_mode()
        for mode in ("warn", "error", 0, 2, "default"):
            torch.set_deterministic_debug_mode(mode)
            real.set_deterministic_debug_mode(mode)
            assert torch.get_deterministic_debug_mode() == real.get_deterministic_debug_mode()
        with pytest.raises(TypeError, match=r"argument 'mode' \(position 1\) must be bool, not int"):
            torch.use_deterministic_algorithms(1)  # type: ignore[arg-type]
        with pytest.raises(RuntimeError, match="invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got x"):
            torch.set_deterministic_debug_mode("x")
        with pytest.raises(RuntimeError, match="invalid value of debug_mode, expected 0, 1, or 2, but got 3"):
            torch.set_deterministic_debug_mode(3)
    finally:
        real.use_deterministic_algorithms(saved[0], warn_only=saved[1])


def test_opt_einsum_flags_choose_einsum_contraction_order(monkeypatch):
    import opt_einsum

    calls = []
    original = opt_einsum.contract_path

    def spy(*args, **kwargs):
        calls.append(kwargs.get("optimize"))
        return original(*args, **kwargs)

    monkeypatch.setattr(opt_einsum, "contract_path", spy)
    torch.manual_seed(0)
    a, b, c = torch.randn(2, 30), torch.randn(30, 40), torch.randn(40, 3)
    expected = (a @ b) @ c
    backends.opt_einsum.strategy = "greedy"
    r1 = torch.einsum("ij,jk,kl->il", a, b, c)
    assert calls == ["greedy"]
    backends.opt_einsum.enabled = False  # left to right, no path search
    r2 = torch.einsum("ij,jk,kl->il", a, b, c)
    assert calls == ["greedy"] and backends.opt_einsum.strategy == "greedy"
    assert torch.allclose(r1, expected, atol=1e-4) and torch.allclose(r2, expected, atol=1e-4)
    with pytest.raises(ValueError, match="opt_einsum is not enabled, so setting a `strategy`"):
        backends.opt_einsum.strategy = "auto"


def test_sdp_switches(real):
    assert backends.cuda.flash_sdp_enabled() is real.backends.cuda.flash_sdp_enabled()
    backends.cuda.enable_flash_sdp(False)
    try:
        assert backends.cuda.flash_sdp_enabled() is False
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with backends.cuda.sdp_kernel(enable_math=False):
                assert backends.cuda.math_sdp_enabled() is False and backends.cuda.flash_sdp_enabled() is True
        assert backends.cuda.math_sdp_enabled() is True and backends.cuda.flash_sdp_enabled() is False
        assert any(issubclass(w.category, FutureWarning) for w in caught)
    finally:
        backends.cuda.enable_flash_sdp(True)
    assert backends.cuda.is_flash_attention_available() is False


def test_public_names_resolve():
    for name in backends.__all__:
        module = getattr(backends, name)
        for attr in getattr(module, "__all__", ()):
            assert hasattr(module, attr), f"{name}.{attr}"

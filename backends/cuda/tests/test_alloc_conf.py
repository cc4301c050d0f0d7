"""PYTORCH_CUDA_ALLOC_CONF parsing (PyTorch's option names and errors); needs no GPU."""

from __future__ import annotations

import pytest

from torchplug_cuda._alloc_conf import KNOWN_OPTIONS, parse, from_environment


def test_empty_and_defaults():
    conf = parse("")
    assert conf.backend == "native" and conf.given == [] and conf.unsupported == []


def test_full_configuration():
    conf = parse("backend:cudaMallocAsync, max_split_size_mb:128,garbage_collection_threshold:0.6,"
                 "expandable_segments:True,roundup_power2_divisions:[256:1,512:2,>:4],pinned_num_register_threads:8")
    assert conf.backend == "cudaMallocAsync"
    assert conf.max_split_size_mb == 128
    assert conf.garbage_collection_threshold == 0.6
    assert conf.expandable_segments is True
    assert conf.roundup_power2_divisions == {"256": 1, "512": 2, ">": 4}
    assert conf.pinned_num_register_threads == 8
    # Honest about what CuPy's pool cannot do:
    assert conf.unsupported == ["max_split_size_mb", "expandable_segments", "roundup_power2_divisions",
                                "pinned_num_register_threads"]


def test_scalar_divisions():
    assert parse("roundup_power2_divisions:4").roundup_power2_divisions == 4


@pytest.mark.parametrize("text, match", [
    ("max_split_size:128", "Unrecognized CachingAllocator option: max_split_size"),
    ("foo:1", "Unrecognized CachingAllocator option: foo. Known options: backend, "),
    ("backend:magic", "Unknown allocator backend 'magic', options are native and cudaMallocAsync"),
    ("max_split_size_mb:10", "max_split_size_mb too small: 10, must be >= 20"),
    ("max_split_size_mb:lots", "max_split_size_mb expects an integer"),
    ("garbage_collection_threshold:1.5", r"garbage_collection_threshold is invalid: 1.5, set it in \(0.0, 1.0\)"),
    ("expandable_segments:maybe", "Expected a single True/False argument for expandable_segments"),
    ("roundup_power2_divisions:3", "divisions has to be power of 2"),
    ("pinned_num_register_threads:3", "has to be power of 2"),
    ("backend", "expected option:value"),
])
def test_errors_name_the_option_and_the_setting(text, match):
    with pytest.raises(RuntimeError, match=match) as info:
        parse(text)
    assert "PYTORCH_CUDA_ALLOC_CONF=" in str(info.value)


def test_every_known_option_is_accepted():
    values = {"backend": "native", "roundup_power2_divisions": "2", "pinned_num_register_threads": "2",
              "garbage_collection_threshold": "0.5", "per_process_memory_fraction": "0.5",
              "max_split_size_mb": "64", "max_non_split_rounding_mb": "64"}
    for key in KNOWN_OPTIONS:
        conf = parse(f"{key}:{values.get(key, 'True')}")
        assert conf.given == [key]


def test_environment_lookup():
    assert from_environment({"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"}).backend == "cudaMallocAsync"
    assert from_environment({"PYTORCH_ALLOC_CONF": "expandable_segments:True"}).expandable_segments is True
    assert from_environment({}).given == []

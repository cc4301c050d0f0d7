"""PyTorch's UntypedStorage API on a tensor's storage: sizes, bytes, copies, construction and the refusals,
compared with the installed torch."""

from __future__ import annotations

import pytest

import torchplug as tp

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        return "ok", fn()
    except RuntimeError as exc:
        return "RuntimeError", str(exc)


def both(fn):
    return fn(tp), fn(torch)


def test_sizes_and_queries_match_torch():
    def facts(m):
        a = m.arange(6, dtype=m.int16)
        s = a.untyped_storage()
        return (s.nbytes(), s.size(), len(s), s.element_size(), str(s.device), s.is_shared(), s.is_pinned(),
                s.is_cuda, s.is_sparse, s.get_device(), s.data_ptr() == a.data_ptr(), s.untyped() is s,
                a[2:].untyped_storage().data_ptr() == s.data_ptr(), isinstance(s, m.UntypedStorage),
                m.is_storage(s))

    ours, theirs = both(facts)
    assert ours == theirs


def test_nbytes_is_still_an_int_attribute_for_internal_readers():
    s = tp.ones(3).untyped_storage()
    assert s.nbytes == 12 and s.nbytes // 4 == 3 and s.nbytes() == 12


def test_bytes_read_and_written_through_the_storage_match_torch():
    def facts(m):
        a = m.arange(4, dtype=m.int16)
        s = a.untyped_storage()
        before = (s.tolist(), s[2], list(s)[:3])
        s.fill_(1)
        filled = a.tolist()
        s[0] = 7
        return before, filled, a.tolist(), s.tolist()

    ours, theirs = both(facts)
    assert ours == theirs


def test_copies_and_construction_match_torch():
    def facts(m):
        a = m.arange(3, dtype=m.int32)
        s = a.untyped_storage()
        c = s.clone()
        made = m.UntypedStorage(8)
        from_values = m.UntypedStorage([1, 2, 3])
        target = m.UntypedStorage(2)
        target.copy_(m.tensor([5, 6], dtype=m.uint8).untyped_storage())
        return (c.tolist() == s.tolist(), c.data_ptr() != s.data_ptr(), made.nbytes(), str(made.device),
                from_values.tolist(), target.tolist(), m.UntypedStorage().nbytes(), s.cpu() is s,
                s.to(device="cpu") is s, s.new().nbytes(), str(m.UntypedStorage(3, device="meta").device),
                _outcome(lambda: s.copy_(m.UntypedStorage(3))), s.resize_(12) is s)

    ours, theirs = both(facts)
    assert ours == theirs


def test_share_memory_marks_the_storage_and_its_tensors_like_torch():
    def facts(m):
        b = m.zeros(2)
        b.share_memory_()
        u = m.UntypedStorage(4)
        u.share_memory_()
        return b.untyped_storage().is_shared(), b.is_shared(), u.is_shared()

    ours, theirs = both(facts)
    assert ours == theirs


def test_unsupported_storage_operations_are_refused_with_a_way_out():
    s = tp.arange(4.0).untyped_storage()
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        s.resize_(64)
    with pytest.raises(NotImplementedError, match="slicing"):
        s[1:3]
    with pytest.raises(NotImplementedError, match="meta storages have no data"):
        tp.ones(2, device="meta").untyped_storage().tolist()


def test_element_type_conversions_and_typed_storage_copies_match_torch():
    import warnings

    def facts(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # TypedStorage's deprecation
            u = m.tensor([1, 2, 250], dtype=m.uint8).untyped_storage()
            t = m.arange(3.0).storage()
            c = t.clone()
            c.fill_(5)
            filled = c.tolist()
            c.copy_(t)
            return (u.float().tolist(), u.long().tolist(), u.bool().tolist(), t.double().tolist(), t.int().tolist(),
                    t.type(), t.pickle_storage_type(), t.is_cuda, t.get_device(), filled, c.tolist(),
                    t.cpu().tolist(), t.to(device="cpu").tolist(), t.filename, str(u.float().dtype))

    ours, theirs = both(facts)
    assert ours[:-1] == theirs[:-1]
    assert ours[-1].split(".")[-1] == theirs[-1].split(".")[-1]

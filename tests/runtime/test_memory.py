"""hooklint.runtime.memory: the storage-bytes measurement behind the AutoRound memory checks."""

from __future__ import annotations

import gc
import warnings

import pytest

torch = pytest.importorskip("torch")

from hooklint.runtime.memory import live_tensor_bytes, storage_bytes


def test_views_of_one_storage_count_once_with_the_whole_storage():
    base = torch.zeros(10)  # 40 bytes
    assert storage_bytes([base]) == 40
    assert storage_bytes([base, base, base[:5], base.view(2, 5), base[::3]]) == 40
    assert storage_bytes([base[:1]]) == 40  # a small view keeps the whole storage alive
    assert storage_bytes([base.expand(4, 10)]) == 40


def test_distinct_storages_add_up():
    assert storage_bytes([torch.zeros(10), torch.zeros(3, dtype=torch.float64)]) == 40 + 24
    assert storage_bytes([torch.zeros(10), torch.zeros(10)]) == 80  # equal values, two storages
    assert storage_bytes([torch.zeros(10), torch.zeros(10).clone()]) == 80
    assert storage_bytes([]) == 0


def test_meta_and_sparse_tensors_hold_no_counted_storage():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's note on sparse invariant checks
        sparse = torch.sparse_coo_tensor(torch.tensor([[0, 1]]), torch.tensor([1.0, 2.0]), (3,))
    meta = [torch.empty(4, device="meta"), torch.empty(100, device="meta")]
    assert storage_bytes([sparse, *meta]) == 0
    assert storage_bytes([sparse, torch.zeros(2)]) == 8


def test_live_tensor_bytes_sees_a_tensor_held_in_a_container_and_its_release():
    held = []
    gc.collect()
    before = live_tensor_bytes()
    held.append(torch.empty(4096, dtype=torch.uint8))
    held.append(held[0][:16])  # a view adds nothing
    gc.collect()
    assert live_tensor_bytes() - before == 4096
    held.clear()
    gc.collect()
    assert live_tensor_bytes() == before


def test_a_fake_tensor_counts_nothing_and_does_not_stop_the_count():
    # torch.compile leaves FakeTensors behind in the process; their storage has no data
    # pointer (asking raises), so they hold no memory to count.
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        fake = torch.empty(1024)
    real = torch.empty(256, dtype=torch.uint8)
    assert storage_bytes([fake]) == 0
    assert storage_bytes([fake, real]) == 256
    gc.collect()
    assert live_tensor_bytes() >= 256  # the fake one in gc's objects does not raise

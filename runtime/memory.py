"""How many bytes of tensor storage a set of tensors, or the whole process, keeps alive.

The memory checks of :mod:`hooklint.runtime.autoround` (its tests, the decoder
and GPU benchmarks, the capture store's own ``nbytes``) all measure the same
thing: the bytes of the storages behind some tensors, each storage counted
once however many views share it.  This module is that one measurement.

* :func:`storage_bytes` for given tensors;
* :func:`live_tensor_bytes` for every tensor the garbage collector can reach
  (a leak check: call ``gc.collect()`` first, compare two calls).
"""

from __future__ import annotations

import gc
from collections.abc import Iterable

from hooklint.runtime import require_torch

torch = require_torch()


def storage_bytes(tensors: Iterable[torch.Tensor]) -> int:
    """Bytes of the distinct storages behind ``tensors``.

    Views of one storage (slices, ``view``, ``expand``, the same tensor
    twice) count once, with the whole storage's size, since that is what
    they keep alive.  Tensors without a storage of their own (sparse and
    other layouts, some subclasses), meta tensors and the FakeTensors of
    ``torch.compile``'s tracing (no memory) are left out.
    """
    # torch's own advice for code that reads data pointers: guard on FakeTensor (what
    # torch.compile's tracing leaves in the process; asking its storage raises or warns).
    from torch._subclasses.fake_tensor import FakeTensor

    storages: dict[tuple[str, int], int] = {}
    for tensor in tensors:
        if isinstance(tensor, FakeTensor):
            continue
        try:
            if tensor.device.type == "meta":
                continue
            storage = tensor.untyped_storage()
            key = (str(tensor.device), storage.data_ptr())
        except (NotImplementedError, RuntimeError):
            continue  # no storage of its own, or one without data
        storages[key] = storage.nbytes()
    return sum(storages.values())


def live_tensor_bytes() -> int:
    """:func:`storage_bytes` of every tensor object the garbage collector tracks.

    Run ``gc.collect()`` before it for a stable figure.  Tensors held only
    from C++ (autograd's saved tensors, for instance) are not Python objects
    and so are not counted; a leak through a Python container is.
    """
    # type(), not isinstance: isinstance would dereference lazy or dead proxies
    return storage_bytes(obj for obj in gc.get_objects() if issubclass(type(obj), torch.Tensor))

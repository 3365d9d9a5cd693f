"""Selections on the wire: numpy's basic indexing (integers, slices, Ellipsis), its advanced
indexing (integer and boolean arrays, as vectorized points or a whole-array mask), and zarr's
orthogonal and block selections. The result shape is worked out here as numpy does (to size
buffers); the server checks the same rules and has the last word."""
import numbers

import numpy as np

from zarrd.v1 import zarrd_pb2 as pb


def full_key(key, ndim):
    """`key` with the ellipsis expanded: one item per dimension (after to_proto checked it)."""
    if not isinstance(key, tuple):
        key = (key,)
    given = sum(k is not Ellipsis for k in key)
    out = []
    for k in key:
        out.extend([slice(None)] * (ndim - given) if k is Ellipsis else [k])
    out.extend([slice(None)] * (ndim - len(out)))
    return tuple(out)


def to_proto(key, shape):
    """Returns (pb.Selection, result shape) for `key` over an array of `shape`."""
    if not isinstance(key, tuple):
        key = (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    given = sum(k is not Ellipsis for k in key)
    if given > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, "
                         f"but {given} were indexed")
    sel, out_shape, axis = pb.Selection(), [], 0
    for k in key:
        if k is Ellipsis:
            n = len(shape) - given
            sel.items.add(ellipsis=True)
            out_shape.extend(shape[axis:axis + n])
            axis += n
        elif isinstance(k, slice):
            for part in (k.start, k.stop, k.step):
                if part is not None and not isinstance(part, numbers.Integral):
                    raise TypeError(f"slice indices must be integers or None, got {part!r}")
            if k.step == 0:
                raise ValueError("slice step cannot be zero")
            s = sel.items.add().slice
            for field in ("start", "stop", "step"):
                if getattr(k, field) is not None:
                    setattr(s, field, int(getattr(k, field)))
            out_shape.append(len(range(*k.indices(shape[axis]))))
            axis += 1
        elif isinstance(k, numbers.Integral) and not isinstance(k, bool):
            i = int(k)
            if not -shape[axis] <= i < shape[axis]:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {shape[axis]}")
            sel.items.add(index=i)
            axis += 1
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`) and integer or "
                             f"boolean arrays are valid indices, not {type(k).__name__}")
    out_shape.extend(shape[axis:])
    return sel, tuple(out_shape)


def _is_array(k):
    return isinstance(k, (list, np.ndarray)) or (hasattr(k, "__array__") and not np.isscalar(k))


def _index_array(k):
    a = np.asarray(k)
    if a.dtype == bool:
        return a
    if a.size == 0:
        return a.astype(np.int64)
    if a.dtype.kind not in "iu":
        raise IndexError(f"arrays used as indices must be of integer or boolean type, "
                         f"not {a.dtype}")
    return a.astype(np.int64)


def _expand(key, ndim, width=lambda k: 1):
    """`key` as a tuple with the ellipsis expanded to full slices; width(k): dimensions k takes."""
    if not isinstance(key, tuple):
        key = (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    given = sum(width(k) for k in key if k is not Ellipsis)
    if given > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, "
                         f"but {given} were indexed")
    out = []
    for k in key:
        out.extend([slice(None)] * (ndim - given) if k is Ellipsis else [k])
    return out + [slice(None)] * (ndim - sum(width(k) for k in out))


def _check_index(i, n, axis):
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")


def _basic_item(sel, k, n, axis):
    """Adds integer or slice `k` to `sel`; returns its result length (None for an integer)."""
    if isinstance(k, slice):
        item_sel, item_shape = to_proto(k, (n,))
        sel.items.append(item_sel.items[0])
        return item_shape[0]
    if isinstance(k, numbers.Integral) and not isinstance(k, bool):
        _check_index(int(k), n, axis)
        sel.items.add(index=int(k))
        return None
    raise IndexError(f"unsupported index {k!r} on axis {axis}")


def orthogonal_to_proto(key, shape):
    """zarr's oindex: per dimension an integer, a slice, or a 1-d array of integers or booleans,
    each array selecting along its own dimension. Returns (pb.Selection, result shape)."""
    sel, out_shape = pb.Selection(mode=pb.SELECTION_MODE_ORTHOGONAL), []
    for axis, k in enumerate(_expand(key, len(shape))):
        n = shape[axis]
        if _is_array(k):
            a = _index_array(k)
            if a.ndim != 1:
                raise IndexError(f"orthogonal selection takes 1-d index arrays, got {a.ndim}-d "
                                 f"on axis {axis}")
            if a.dtype == bool:
                if a.shape[0] != n:
                    raise IndexError(f"boolean index of length {a.shape[0]} on axis {axis} of "
                                     f"size {n}")
                sel.items.add(mask=a.astype(np.uint8).tobytes())
                out_shape.append(int(a.sum()))
            else:
                if a.size:
                    bad = a[(a < -n) | (a >= n)]
                    if bad.size:
                        _check_index(int(bad[0]), n, axis)
                sel.items.add().indices.values.extend(a.tolist())
                out_shape.append(a.size)
        else:
            length = _basic_item(sel, k, n, axis)
            if length is not None:
                out_shape.append(length)
    return sel, tuple(out_shape)


def vectorized_to_proto(key, shape):
    """numpy's advanced indexing (zarr's vindex): integer arrays (and integers) broadcast together
    into points, boolean arrays standing for their nonzero() coordinates; slices for the other
    dimensions. Returns (pb.Selection, result shape) with numpy's placement of the points."""
    def width(k):
        return np.asarray(k).ndim if _is_array(k) and np.asarray(k).dtype == bool else 1
    items = []
    for k in _expand(key, len(shape), width):
        if _is_array(k) and np.asarray(k).dtype == bool:
            items.extend(np.nonzero(np.asarray(k)))
        else:
            items.append(k)
    arrays = [i for i, k in enumerate(items) if _is_array(k)]
    advanced = [i for i, k in enumerate(items) if not isinstance(k, slice)]
    try:
        coords = np.broadcast_arrays(*[_index_array(items[i]) for i in arrays]) if arrays else []
    except ValueError as e:
        raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together ({e})")
    point_shape = coords[0].shape if arrays else ()
    sel = pb.Selection(mode=pb.SELECTION_MODE_VECTORIZED, point_shape=list(point_shape))
    lengths = []
    for axis, k in enumerate(items):
        if axis in arrays:
            a = coords[arrays.index(axis)].reshape(-1)
            n = shape[axis]
            bad = a[(a < -n) | (a >= n)]
            if bad.size:
                _check_index(int(bad[0]), n, axis)
            sel.items.add().indices.values.extend(a.tolist())
        else:
            length = _basic_item(sel, k, shape[axis], axis)
            if length is not None:
                lengths.append((axis, length))
    if not arrays:
        return sel, tuple(n for _, n in lengths)
    adjacent = advanced[-1] - advanced[0] + 1 == len(advanced)
    before = [n for axis, n in lengths if adjacent and axis < advanced[0]]
    after = [n for axis, n in lengths if not (adjacent and axis < advanced[0])]
    return sel, tuple(before) + tuple(point_shape) + tuple(after)


def mask_to_proto(mask, shape):
    """zarr's a[mask]: a boolean array of the array's shape; the result is 1-d."""
    mask = np.asarray(mask)
    if mask.dtype != bool or mask.shape != tuple(shape):
        raise IndexError(f"a mask selection takes a boolean array of shape {tuple(shape)}, "
                         f"got {mask.dtype} {mask.shape}")
    sel = pb.Selection(mode=pb.SELECTION_MODE_MASK,
                       mask=np.ascontiguousarray(mask).astype(np.uint8).tobytes())
    return sel, (int(mask.sum()),)


def block_to_proto(key, shape, chunks):
    """zarr's a.blocks[...]: per dimension a chunk index or a slice (step 1) of chunk indices;
    integers keep their dimension."""
    grid = tuple(-(-n // c) if c else 0 for n, c in zip(shape, chunks))
    sel, out_shape = pb.Selection(mode=pb.SELECTION_MODE_BLOCK), []
    for axis, k in enumerate(_expand(key, len(shape))):
        if isinstance(k, slice):
            if k.step not in (None, 1):
                raise IndexError("block selection: slice step must be 1")
            start, stop, _ = k.indices(grid[axis])
        elif isinstance(k, numbers.Integral) and not isinstance(k, bool):
            _check_index(int(k), grid[axis], axis)
            start = int(k) % grid[axis]
            stop = start + 1
        else:
            raise IndexError(f"block selection takes integers and slices, not {type(k).__name__}")
        _basic_item(sel, k, grid[axis], axis)
        lo, hi = start * chunks[axis], min(max(stop, start) * chunks[axis], shape[axis])
        out_shape.append(max(0, hi - lo))
    return sel, tuple(out_shape)


def any_to_proto(key, shape):
    """`a[key]` with numpy's rules: basic indexing, a boolean mask of the whole array, or
    advanced indexing with arrays."""
    parts = key if isinstance(key, tuple) else (key,)
    if not any(_is_array(k) for k in parts):
        return to_proto(key, shape)
    if len(parts) == 1 and np.asarray(parts[0]).dtype == bool and \
            np.asarray(parts[0]).shape == tuple(shape) and len(shape) > 0:
        return mask_to_proto(parts[0], shape)
    return vectorized_to_proto(key, shape)


def is_basic(sel):
    return sel.mode == pb.SELECTION_MODE_BASIC

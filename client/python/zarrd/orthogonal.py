"""Orthogonal (outer) selections: per dimension an integer, a slice, or a 1-d array of integers or
booleans, each array selecting along its own dimension (zarr's `oindex`, xarray's OUTER indexing).

The wire carries only integers and slices per dimension (server-side selection of index lists
will come with the selection work), so the client does the rest without reading the whole bounding
box: each array's indices are sorted and grouped into runs, neighbours joining a run when they are
less than a chunk apart (the server decodes whole chunks anyway, so a run costs no decoding that
its indices do not already need); each combination of runs is one slice request; the wanted
elements are then picked from the runs in the order (and with the repeats) that were asked."""
import itertools
import numbers

import numpy as np

from zarrd.selection import full_key


def _array_index(k, n, axis):
    """The sorted unique indices of array index `k` along an axis of length `n`, and where each of
    `k`'s items is among them."""
    a = np.asarray(k)
    if a.ndim != 1:
        raise IndexError(f"orthogonal selection takes 1-d index arrays, got {a.ndim}-d on axis {axis}")
    if a.dtype == bool:
        if a.shape[0] != n:
            raise IndexError(f"boolean index of length {a.shape[0]} on axis {axis} of size {n}")
        a = np.flatnonzero(a)
    elif a.size == 0:
        a = a.astype(np.int64)
    elif a.dtype.kind not in "iu":
        raise IndexError(f"arrays used as indices must be of integer or boolean type, not {a.dtype}")
    a = a.astype(np.int64)
    if a.size and (a.min() < -n or a.max() >= n):
        bad = a[(a < -n) | (a >= n)][0]
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
    a = np.where(a < 0, a + n, a)
    return np.unique(a, return_inverse=True)


def runs(unique, chunk):
    """[(start, stop)] covering the sorted unique indices `unique`, split where two neighbours are a
    chunk or more apart."""
    if unique.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(unique) >= chunk) + 1
    starts = unique[np.r_[0, breaks]]
    stops = unique[np.r_[breaks - 1, unique.size - 1]] + 1
    return list(zip(starts.tolist(), stops.tolist()))


def _is_array(k):
    return isinstance(k, (np.ndarray, list)) or (hasattr(k, "__array__") and not np.isscalar(k))


def read(array, selection, prototype):
    """`array`[`selection`] with numpy's outer semantics, through slice reads (see above)."""
    key = full_key(selection, array.ndim)
    if len(key) > array.ndim:
        raise IndexError(f"too many indices for array: array is {array.ndim}-dimensional, "
                         f"but {len(key)} were indexed")
    if not any(_is_array(k) for k in key):
        return array.get(key, prototype=prototype)
    if prototype == "device":
        from zarrd import device
        xp = device.cupy()
    else:
        xp = np
    picks = {}  # axis -> (unique, inverse, runs)
    out_shape, compact_shape, axis_in_out = [], [], {}
    for axis, (k, n) in enumerate(zip(key, array.shape)):
        if _is_array(k):
            unique, inverse = _array_index(k, n, axis)
            picks[axis] = (unique, inverse, runs(unique, array.chunks[axis]))
            axis_in_out[axis] = len(out_shape)
            out_shape.append(inverse.size)
            compact_shape.append(sum(stop - start for start, stop in picks[axis][2]))
        elif isinstance(k, slice):
            axis_in_out[axis] = len(out_shape)
            out_shape.append(len(range(*k.indices(n))))
            compact_shape.append(out_shape[-1])
        elif not isinstance(k, numbers.Integral) or isinstance(k, bool):
            raise IndexError(f"zarrd selects with integers, slices and 1-d arrays, not {type(k).__name__}")
    if any(not p[2] for p in picks.values()):
        return xp.empty(out_shape, array.dtype)

    # The runs, read one combination a request, side by side in a compact buffer.
    compact = xp.empty(compact_shape, array.dtype)
    axes = sorted(picks)
    offsets = {a: np.cumsum([0] + [stop - start for start, stop in picks[a][2]]) for a in axes}
    for combo in itertools.product(*(range(len(picks[a][2])) for a in axes)):
        wire, place = list(key), [slice(None)] * len(compact_shape)
        for a, r in zip(axes, combo):
            start, stop = picks[a][2][r]
            wire[a] = slice(start, stop)
            place[axis_in_out[a]] = slice(int(offsets[a][r]), int(offsets[a][r + 1]))
        compact[tuple(place)] = array.get(tuple(wire), prototype=prototype)

    # Each unique index's place in the compact buffer, then the order and repeats asked for.
    out = compact
    for a in axes:
        unique, inverse, rs = picks[a]
        starts = np.array([s for s, _ in rs])
        run_of = np.searchsorted(starts, unique, side="right") - 1
        position = offsets[a][run_of] + (unique - starts[run_of])
        out = xp.take(out, xp.asarray(position[inverse]), axis=axis_in_out[a])
    return out

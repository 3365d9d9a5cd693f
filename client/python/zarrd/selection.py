"""numpy basic indexing on the wire: integers, slices and Ellipsis. The result shape is worked out
here as numpy does (to size buffers); the server checks the same rules and has the last word."""
import numbers

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
            raise IndexError(f"zarrd serves basic indexing (integers, slices, ...), not {type(k).__name__}")
    out_shape.extend(shape[axis:])
    return sel, tuple(out_shape)

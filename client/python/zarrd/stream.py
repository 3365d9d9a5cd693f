"""Large HOST reads: GetItemStream pieces parsed straight from the wire (no protobuf message
copy of each piece) into the destination, and a large selection split into row bands read by
parallel streams (one stream is bounded by a single connection's rate)."""
from collections import namedtuple
from concurrent.futures import ThreadPoolExecutor

import grpc
import numpy as np

from zarrd import errors
from zarrd.wire import decode_piece

MIN_BAND_BYTES = 16 << 20  # a streamed read is split in bands of at least this

# One dimension of a resolved selection, as common/index/selection.h's DimSelection.
Dim = namedtuple("Dim", "start step count dropped")


def plan_bands(dims, chunks, itemsize, target_bytes, max_bytes=0, max_bands=0):
    """common/index/band_plan.cc's PlanBands line for line (tests/data/band_plan_cases.json holds both
    to one answer): [(dims, offset, nbytes)] covering the result once in order, cut on chunk edges
    along the first non-dropped dimension; [] when one result row exceeds max_bytes."""
    d0 = 0
    while d0 < len(dims) and dims[d0].dropped:
        d0 += 1
    elements = 1
    for dim in dims:
        elements *= 1 if dim.dropped else dim.count
    total = elements * itemsize
    if d0 == len(dims) or total == 0:
        if max_bytes and total > max_bytes:
            return []
        return [(dims, 0, total)]
    dim = dims[d0]
    row_bytes = elements // dim.count * itemsize
    if max_bytes and row_bytes > max_bytes:
        return []
    max_rows = max_bytes // row_bytes if max_bytes else dim.count
    target = target_bytes
    bands_wanted = 0
    if max_bands:
        bands_wanted = min(max(total // target if target else max_bands, 1), max_bands)
        target = total // bands_wanted + (total % bands_wanted != 0)
    chunk = chunks[d0] if d0 < len(chunks) and chunks[d0] > 0 else 1

    def run(k):
        in_chunk = (dim.start + k * dim.step) % chunk
        rows = (chunk - 1 - in_chunk) // dim.step + 1 if dim.step > 0 else in_chunk // -dim.step + 1
        return min(rows, dim.count - k)

    bands = []
    k0 = 0
    while k0 < dim.count:
        last = bands_wanted and len(bands) + 1 >= bands_wanted
        k1 = k0 + run(k0)
        if k1 - k0 > max_rows:
            k1 = k0 + max_rows
        else:
            while k1 < dim.count:
                r = run(k1)
                have, add = (k1 - k0) * row_bytes, r * row_bytes
                if max_bytes and have + add > max_bytes:
                    break
                if not last and 2 * have + add >= 2 * target:
                    break
                k1 += r
        band = list(dims)
        band[d0] = Dim(dim.start + k0 * dim.step, dim.step, k1 - k0, False)
        bands.append((band, k0 * row_bytes, (k1 - k0) * row_bytes))
        k0 = k1
    return bands


def resolve_key(key, shape):
    """A full key (an integer or a slice per dimension, as numpy reads it) as Dims."""
    dims = []
    for k, n in zip(key, shape):
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            count = len(range(start, stop, step))
            dims.append(Dim(start, step if count > 1 else 1, count, False))
        else:
            i = int(k)
            dims.append(Dim(i + n if i < 0 else i, 1, 1, True))
    return dims


def dims_key(dims):
    """The key that selects `dims` (an open stop where a negative step ends at index 0)."""
    key = []
    for dim in dims:
        if dim.dropped:
            key.append(dim.start)
            continue
        stop = dim.start + dim.count * dim.step
        key.append(slice(dim.start, dim.start if dim.count == 0 else None if stop < 0 else stop,
                         dim.step))
    return tuple(key)


def key_bands(key, shape, chunks, itemsize, target_bytes, max_bytes=0, max_bands=0):
    """plan_bands over a full key: [(band key, offset, nbytes, band result shape)]."""
    return [(dims_key(dims), offset, nbytes, tuple(d.count for d in dims if not d.dropped))
            for dims, offset, nbytes in plan_bands(resolve_key(key, shape), chunks, itemsize,
                                                   target_bytes, max_bytes, max_bands)]


def _stream_into(client, number, request, flat, nbytes):
    """Reads one GetItemStream into the bytes `flat[:nbytes]`."""
    call = client.band_channel(number).unary_stream(
        "/zarrd.v1.Zarrd/GetItemStream",
        request_serializer=lambda r: r.SerializeToString(), response_deserializer=None)
    try:
        for raw in call(request):
            offset, data, _ = decode_piece(raw)
            if data is not None and len(data):
                if offset + len(data) > nbytes:
                    raise errors.DataLossError(grpc.StatusCode.DATA_LOSS,
                                               "the server sent a piece outside the result")
                flat[offset:offset + len(data)] = np.frombuffer(data, np.uint8)
    except grpc.RpcError as e:
        raise errors.from_rpc(e) from None


def read_one_stream(client, request, out_shape, dtype):
    """Reads `request` (any selection) through one GetItemStream into a new array."""
    out = np.empty(out_shape, dtype)
    _stream_into(client, 0, request, out.reshape(-1).view(np.uint8), out.nbytes)
    return out


def read_streamed(client, key, shape, chunks, out_shape, dtype, request_for):
    """Reads the full basic `key` of an array of `shape` and `chunks` into a new array of
    `out_shape`, in bands on parallel streams; request_for(key) makes a GetItemRequest."""
    out = np.empty(out_shape, dtype)
    flat = out.reshape(-1).view(np.uint8)

    def read(numbered):
        number, (band_key, offset, nbytes, _) = numbered
        _stream_into(client, number, request_for(band_key), flat[offset:], nbytes)

    bands = key_bands(key, shape, chunks, dtype.itemsize, MIN_BAND_BYTES, 0,
                      max(1, client.read_streams))
    if len(bands) == 1:
        read((0, bands[0]))
    else:
        with ThreadPoolExecutor(len(bands)) as pool:
            list(pool.map(read, enumerate(bands)))
    return out

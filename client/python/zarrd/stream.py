"""Large HOST reads: GetItemStream pieces parsed straight from the wire (no protobuf message
copy of each piece) into the destination, and a large selection split into row bands read by
parallel streams (one stream is bounded by a single connection's rate)."""
from concurrent.futures import ThreadPoolExecutor

import grpc
import numpy as np

from zarrd import errors
from zarrd.wire import decode_piece

MIN_BAND_BYTES = 16 << 20  # a streamed read is split in bands of at least this


def _first_slice(key):
    """The axis of the first slice of a full key: the one bands split."""
    return next((i for i, k in enumerate(key) if isinstance(k, slice)), None)


def _band(key, axis, start, step, lo, hi):
    """(key, lo, rows) of result rows [lo, hi) along `axis`, whose slice starts at `start`."""
    stop = start + hi * step
    part = slice(start + lo * step, None if stop < 0 else stop, step)
    return key[:axis] + (part,) + key[axis + 1:], lo, hi - lo


def _bands(key, shape, out_shape, itemsize, max_streams):
    """Splits a full key (one item per dimension) along its first slice, when the items before it
    are integers, into contiguous parts of the result: [(key, first result row, rows)]."""
    axis = _first_slice(key)
    if axis is None or not out_shape:
        return [(key, 0, out_shape[0] if out_shape else 1)]
    start, stop, step = key[axis].indices(shape[axis])
    count = out_shape[0]
    row_bytes = max(1, int(np.prod(out_shape[1:], dtype=np.int64))) * itemsize
    n = int(min(max_streams, max(1, count * row_bytes // MIN_BAND_BYTES), count))
    return [_band(key, axis, start, step, count * i // n, count * (i + 1) // n) for i in range(n)]


def chunk_aligned_bands(key, shape, out_shape, itemsize, chunks, target_bytes, max_bytes):
    """Splits a full key along its first slice (the integers before it dropped, as `_bands`) into
    parts of the result of about `target_bytes` whose edges fall on edges of the array's `chunks`
    along that axis, so no chunk is decoded for two parts; at most `max_bytes` each.
    [(key, first result row, rows)], or None when one result row is larger than `max_bytes`."""
    axis = _first_slice(key)
    row_bytes = max(1, int(np.prod(out_shape[1:], dtype=np.int64))) * itemsize
    if axis is None or not out_shape:
        return [(key, 0, out_shape[0] if out_shape else 1)] if row_bytes <= max_bytes else None
    if row_bytes > max_bytes:
        return None
    start, _, step = key[axis].indices(shape[axis])
    count = out_shape[0]
    chunk_rows = max(1, chunks[axis])
    bands, lo = [], 0
    while lo < count:
        hi = min(count, lo + max(1, target_bytes // row_bytes))
        if hi < count and step > 0:
            # The last chunk edge at or before source row start + hi * step, if it leaves the
            # part non-empty; otherwise whole chunks up to max_bytes, else a cut inside a chunk.
            edge = (start + hi * step) // chunk_rows * chunk_rows
            cut = -(-(edge - start) // step)
            if cut <= lo:
                edge = (start + lo * step) // chunk_rows * chunk_rows + chunk_rows
                cut = -(-(edge - start) // step)
                if (cut - lo) * row_bytes > max_bytes:
                    cut = lo + max_bytes // row_bytes
            hi = min(count, max(cut, lo + 1))
        bands.append(_band(key, axis, start, step, lo, hi))
        lo = hi
    return bands


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


def read_streamed(client, store, path, key, shape, out_shape, dtype, request_for):
    """Reads `key` into a new array of `out_shape`; request_for(key) makes a GetItemRequest."""
    out = np.empty(out_shape, dtype)
    flat = out.reshape(-1).view(np.uint8)
    row_bytes = int(np.prod(out_shape[1:], dtype=np.int64)) * dtype.itemsize if out_shape else dtype.itemsize

    def read(numbered):
        number, (band_key, first_row, rows) = numbered
        _stream_into(client, number, request_for(band_key), flat[first_row * row_bytes:],
                     rows * row_bytes)

    bands = _bands(key, shape, out_shape, dtype.itemsize, max(1, client.read_streams))
    if len(bands) == 1:
        read((0, bands[0]))
    else:
        with ThreadPoolExecutor(len(bands)) as pool:
            list(pool.map(read, enumerate(bands)))
    return out

"""Arrays served by zarrd, with numpy's selection semantics."""
import json
from collections.abc import MutableMapping

import grpc
import numpy as np

from zarrd import config, device, errors, host_region, strings
from zarrd.node import Node
from zarrd.selection import (any_to_proto, block_to_proto, full_key, is_basic, mask_to_proto,
                             orthogonal_to_proto, to_proto, vectorized_to_proto)
from zarrd.stream import key_bands, read_one_stream, read_streamed
from zarrd.v1 import zarrd_pb2 as pb

_PIECE = 4 << 20  # when the server names no stream_piece_bytes


class Attributes(MutableMapping):
    """A node's attributes; every change is written to the server at once."""

    def __init__(self, node):
        self._node = node

    def _read(self):
        return json.loads(self._node._info.attributes_json or "{}")

    def _write(self, attrs):
        _check_writable(self._node)
        self._node._info = errors.call(self._node._client.stub.SetAttributes, pb.SetAttributesRequest(
            store=self._node.store, path=self._node.path, attributes_json=json.dumps(attrs)))

    def __getitem__(self, key):
        return self._read()[key]

    def __setitem__(self, key, value):
        attrs = self._read()
        attrs[key] = value
        self._write(attrs)

    def __delitem__(self, key):
        attrs = self._read()
        del attrs[key]
        self._write(attrs)

    def update(self, other=(), **kw):
        attrs = self._read()
        attrs.update(other, **kw)
        self._write(attrs)

    def __iter__(self):
        return iter(self._read())

    def __len__(self):
        return len(self._read())

    def asdict(self):
        return self._read()

    def __repr__(self):
        return repr(self._read())


def _sharding(meta):
    """The configuration of a v3 array's sharding codec, or None."""
    codecs = meta.get("codecs") or []
    return codecs[0].get("configuration") if codecs and codecs[0].get("name") == "sharding_indexed" else None


def _codec_parts(meta, zarr_format):
    """(filters, serializer, compressors): for a sharded array, those of its inner chunks."""
    if zarr_format == 2:
        compressor = meta.get("compressor")
        return tuple(meta.get("filters") or ()), None, (compressor,) if compressor else ()
    codecs = (_sharding(meta) or meta)["codecs"]
    at = next(i for i, c in enumerate(codecs) if c["name"] not in ("transpose",))
    return tuple(codecs[:at]), codecs[at], tuple(codecs[at + 1:])


def _float_fill(value, dtype):
    """A float fill value (or complex component) as JSON holds it: a number, "NaN", "Infinity",
    "-Infinity", or v3's "0x..." (the value's bits, big-endian)."""
    if isinstance(value, str) and value.startswith("0x"):
        bits = int(value, 16).to_bytes(dtype.itemsize, "big")
        return np.frombuffer(bits, dtype.newbyteorder(">"))[0].astype(dtype)
    return np.array(float(str(value).replace("Infinity", "inf")), dtype)[()]


def _into(out, result):
    """zarr-python's `out=`: the result written into `out` (NumPy or CuPy), which is returned."""
    if out is None:
        return result
    if tuple(out.shape) != tuple(result.shape):
        raise ValueError(f"out has shape {tuple(out.shape)}, the selection {tuple(result.shape)}")
    if device.is_device_array(out):
        device.as_cupy(out)[...] = device.cupy().asarray(result)
    else:
        np.copyto(out, device.as_cupy(result).get() if device.is_device_array(result) else result)
    return out


def _human(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.1f}{unit}" if unit != "B" else f"{n}B"
        n /= 1024


class _Info:
    """`Array.info` and `Group.info`: rows of (name, value), printed as a table."""

    def __init__(self, rows):
        self.rows = rows

    def __repr__(self):
        width = max(len(name) for name, _ in self.rows)
        return "\n".join(f"{name:<{width}} : {value}" for name, value in self.rows)


def _check_writable(node):
    if getattr(node, "read_only", False):
        raise errors.ReadOnlyError(f"{node.store}:{node.path or '/'} was opened read-only (mode 'r')")


class _Indexer:
    """`a.oindex[...]`, `a.vindex[...]`, `a.blocks[...]`: reads and writes of one selection kind."""

    def __init__(self, array, kind):
        self._array, self._kind = array, kind

    def __getitem__(self, selection):
        return getattr(self._array, f"get_{self._kind}_selection")(selection)

    def __setitem__(self, selection, value):
        getattr(self._array, f"set_{self._kind}_selection")(selection, value)


class Array(Node):
    """An array of a zarrd store. `a[sel]` reads (NumPy, or CuPy inside `enable_gpu()` for arrays
    of two or more dimensions), `a[sel] = value` writes NumPy, CuPy or anything with
    `__cuda_array_interface__`. `prototype` ("host" or "device") fixes where `a[sel]` puts its
    result; None follows `zarrd.config.gpu_enabled()`. Arrays pickle (see zarrd.node)."""

    def __init__(self, client, info, prototype=None):
        super().__init__(client, info)
        self.prototype = prototype

    def _pickled_state(self):
        return {**super()._pickled_state(), "prototype": self.prototype}

    # Metadata, always from the host.
    @property
    def metadata(self):
        return json.loads(self._info.metadata_json)

    @property
    def shape(self):
        return tuple(self._info.shape)

    @property
    def chunks(self):
        """The shape of a chunk: for a sharded array the inner chunk, as zarr-python gives it."""
        inner = _sharding(self.metadata)
        return tuple(inner["chunk_shape"]) if inner else tuple(self._info.chunks)

    @property
    def shards(self):
        """The shape of a shard, or None when the array is not sharded."""
        return tuple(self._info.chunks) if _sharding(self.metadata) else None

    @property
    def _grid_chunks(self):  # the chunk grid's cells: what the store holds one key per
        return tuple(self._info.chunks)

    @property
    def nchunks(self):
        """How many chunks (of `chunks`) cover the array."""
        return int(np.prod([-(-s // c) for s, c in zip(self.shape, self.chunks)], dtype=np.int64))

    @property
    def order(self):
        """The memory order of a chunk: a v2 array's "order"; for v3, "F" when the chunks are
        transposed to reversed axes, else "C"."""
        meta = self.metadata
        if self.zarr_format == 2:
            return meta.get("order", "C")
        first = (_sharding(meta) or meta)["codecs"][0]
        axes = first.get("configuration", {}).get("order") if first["name"] == "transpose" else None
        return "F" if axes is not None and list(axes) == list(range(self.ndim))[::-1] and self.ndim > 1 else "C"

    @property
    def filters(self):
        """The array-to-array codecs (v2: the filters), as their JSON configurations."""
        return _codec_parts(self.metadata, self.zarr_format)[0]

    @property
    def serializer(self):
        """The array-to-bytes codec of a v3 array (None for v2)."""
        return _codec_parts(self.metadata, self.zarr_format)[1]

    @property
    def compressors(self):
        """The bytes-to-bytes codecs (v2: the compressor), as their JSON configurations."""
        return _codec_parts(self.metadata, self.zarr_format)[2]

    @property
    def info(self):
        """A summary of the array, printed as zarr-python prints `Array.info`."""
        rows = [("Type", "Array"), ("Zarr format", self.zarr_format), ("Data type", self.dtype),
                ("Shape", self.shape), ("Chunk shape", self.chunks)]
        if self.shards is not None:
            rows.append(("Shard shape", self.shards))
        rows += [("Order", self.order), ("Store", f"zarrd {self.store}:{self.path}"),
                 ("Filters", self.filters)]
        if self.zarr_format == 3:
            rows.append(("Serializer", self.serializer))
        rows += [("Compressors", self.compressors), ("No. bytes", f"{self.nbytes} ({_human(self.nbytes)})")]
        return _Info(rows)

    @property
    def dtype(self):
        return np.dtype(self._info.numpy_dtype or self._info.data_type)

    @property
    def ndim(self):
        return len(self._info.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def zarr_format(self):
        return self._info.zarr_format

    @property
    def attrs(self):
        return Attributes(self)

    @property
    def fill_value(self):
        """The fill value as a NumPy scalar; None for a v2 array stored with "fill_value": null."""
        raw = self.metadata.get("fill_value")
        if self.dtype.kind in "OSU":
            if raw is None or not isinstance(raw, str):  # zarr 2 writes 0 for "|O"
                return None if raw is None else ("" if self._info.data_type == "string" else b"")
            if self._info.data_type == "bytes":
                import base64
                raw = base64.b64decode(raw)
            return raw if self.dtype.kind == "O" else np.array(raw, self.dtype)[()]
        if self.dtype.kind in "mM" and raw is not None:
            return np.array(raw, self.dtype)[()] if isinstance(raw, str) else \
                np.array(raw, "<i8").view(self.dtype)[()]
        if isinstance(raw, str):
            return _float_fill(raw, self.dtype)
        if isinstance(raw, list) and self.dtype.kind == "c":
            part = np.dtype(f"f{self.dtype.itemsize // 2}")
            re, im = (_float_fill(x, part) for x in raw)
            return np.array(complex(re, im), self.dtype)[()]
        return None if raw is None else np.array(raw, self.dtype)[()]

    @property
    def dimension_names(self):
        if self.zarr_format == 3:
            names = self.metadata.get("dimension_names")
        else:
            names = self.attrs.get("_ARRAY_DIMENSIONS")
        return tuple(names) if names else None

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"<zarrd.Array {self.store}:{self.path} shape={self.shape} dtype={self.dtype}>"

    def __array__(self, dtype=None, copy=None):
        out = self.get(prototype="host")
        return out if dtype is None else out.astype(dtype)

    # Reads.
    def _default_prototype(self):
        if self.prototype is not None:
            return self.prototype
        return "device" if config.gpu_enabled() and self.ndim >= 2 else "host"

    def __getitem__(self, key):
        out = self.get(key, prototype=self._default_prototype())
        return out[()] if out.ndim == 0 and isinstance(out, np.ndarray) else out

    def get(self, selection=(), prototype="host", device=None, stream=None, out=None):
        """Reads `selection`: a NumPy array (prototype "host") or a CuPy array in GPU memory
        (prototype "device", on `device`: a GPU UUID, default the server's first). A device
        result is complete when get returns; given a CuPy `stream`, get returns as soon as the
        server answers and the result is complete in that stream's order instead: work queued
        on `stream` afterwards sees it, other streams must wait for `stream` first."""
        sel, shape = any_to_proto(selection, self.shape)
        return _into(out, self._read(sel, shape, selection, prototype, device, stream))

    get_basic_selection = get

    def _read(self, sel, shape, selection, prototype="host", gpu=None, stream=None):
        """Reads the wire selection `sel` (of result `shape`; `selection` is its key when basic)."""
        request = pb.GetItemRequest(store=self.store, path=self.path, selection=sel)
        if prototype == "device":
            request.prototype = pb.PROTOTYPE_DEVICE
            request.device_uuid = gpu or ""
            request.client_pid = self._client.pid
            session = self._client.device_session()
            request.answer_before_ready = session.waits_on_events()
            response = errors.call(self._client.stub.GetItem, request)
            result = session.view(response, stream)
            # Points come back 1-d; the index arrays' broadcast shape is the caller's.
            return result if tuple(result.shape) == tuple(shape) else result.reshape(shape)
        if stream is not None:
            raise ValueError("stream applies to device results only")
        if prototype != "host":
            raise ValueError(f'prototype must be "host" or "device", not {prototype!r}')
        request.prototype = pb.PROTOTYPE_HOST
        if self.dtype.kind == "O":
            return self._read_vlen(request, shape)
        nbytes = int(np.prod(shape, dtype=np.int64)) * self.dtype.itemsize
        if self.dtype.kind in "SU":  # the server refuses host regions for strings
            pass
        elif self._client.host_regions.wanted(nbytes):
            out = self._client.host_regions.read(request, shape, self.dtype.newbyteorder("<"))
            if out is not None:
                return out
        def request_for(key):
            return pb.GetItemRequest(store=self.store, path=self.path, prototype=pb.PROTOTYPE_HOST,
                                     selection=to_proto(key, self.shape)[0])
        regions = self._client.host_regions
        if regions.enabled and nbytes > host_region.MAX_BYTES and is_basic(sel) and \
                self.dtype.kind not in "SU":
            bands = key_bands(full_key(selection, self.ndim), self.shape, self._grid_chunks,
                              self.dtype.itemsize, host_region.BAND_BYTES, host_region.MAX_BYTES)
            if bands:
                out = regions.read_bands(bands, shape, self.dtype.newbyteorder("<"), request_for)
                if out is not None:
                    return out
        if nbytes <= self._client.info.max_unary_result_bytes:
            response = errors.call(self._client.stub.GetItem, request)
            return np.frombuffer(response.data, self.dtype.newbyteorder("<")).reshape(shape).copy() \
                if response.data else np.empty(shape, self.dtype)
        if not is_basic(sel):
            return read_one_stream(self._client, request, shape, self.dtype.newbyteorder("<"))
        return read_streamed(self._client, full_key(selection, self.ndim), self.shape,
                             self._grid_chunks, shape, self.dtype.newbyteorder("<"), request_for)

    def _read_vlen(self, request, shape):
        """A variable-length string result: its size is known once the server read it."""
        count = int(np.prod(shape, dtype=np.int64))
        data = None
        if 4 * count <= self._client.info.max_unary_result_bytes:
            try:
                data = errors.call(self._client.stub.GetItem, request).data
            except errors.ResourceExhaustedError as e:
                if e.reason != "UNARY_RESULT_TOO_LARGE":
                    raise
        if data is None:
            data = strings.read_stream(self._client, request)
        return strings.decode(data, count, self._info.data_type == "string").reshape(shape)

    def get_orthogonal_selection(self, selection, prototype=None, out=None):
        """zarr's outer selection: per dimension an integer, a slice or a 1-d array of integers
        (any order, repeats, negatives) or booleans, each array selecting along its own
        dimension; selected by the server, which decodes each chunk once."""
        return _into(out, self._read(*orthogonal_to_proto(selection, self.shape), None,
                                     prototype or self._default_prototype()))

    def get_coordinate_selection(self, selection, prototype=None, out=None):
        """zarr's vindex: integer arrays broadcast together into points (numpy's advanced
        indexing; slices for dimensions without an array)."""
        return _into(out, self._read(*vectorized_to_proto(selection, self.shape), None,
                                     prototype or self._default_prototype()))

    def get_mask_selection(self, mask, prototype=None, out=None):
        """The elements where the boolean `mask` (the array's shape) is true, 1-d in C order."""
        return _into(out, self._read(*mask_to_proto(mask, self.shape), None,
                                     prototype or self._default_prototype()))

    def get_block_selection(self, selection, prototype=None, out=None):
        """zarr's blocks: per dimension a chunk index or a slice of chunk indices."""
        sel, shape = block_to_proto(selection, self.shape, self._grid_chunks)
        return _into(out, self._read(sel, shape, None, prototype or self._default_prototype()))

    @property
    def oindex(self):
        """`a.oindex[rows, cols]`: the orthogonal selection, as zarr's `Array.oindex`."""
        return _Indexer(self, "orthogonal")

    @property
    def vindex(self):
        """`a.vindex[rows, cols]`: points, as zarr's `Array.vindex` (a boolean array of the
        array's shape selects its true elements)."""
        return _Indexer(self, "coordinate")

    @property
    def blocks(self):
        """`a.blocks[i, 1:3]`: whole chunks, as zarr's `Array.blocks`."""
        return _Indexer(self, "block")

    # Writes.
    def __setitem__(self, key, value):
        self.set(key, value)

    def set(self, selection, value):
        """Writes `value` (broadcast to the selection's shape) into `selection`."""
        self._write(*any_to_proto(selection, self.shape), value)

    def set_orthogonal_selection(self, selection, value):
        self._write(*orthogonal_to_proto(selection, self.shape), value)

    def set_coordinate_selection(self, selection, value):
        self._write(*vectorized_to_proto(selection, self.shape), value)

    def set_mask_selection(self, mask, value):
        self._write(*mask_to_proto(mask, self.shape), value)

    def set_block_selection(self, selection, value):
        self._write(*block_to_proto(selection, self.shape, self._grid_chunks), value)

    def _write(self, sel, shape, value):
        _check_writable(self)
        if device.is_device_array(value) and not is_basic(sel):
            value = device.as_cupy(value).get()  # advanced selections are written from the host
        if device.is_device_array(value):
            return self._set_from_device(sel, shape, value)
        if self.dtype.kind == "O":
            if value is None or isinstance(value, (str, bytes)):
                values = np.empty((), object)
                values[()] = value
            else:
                values = np.asarray(value, object)
            flat = np.broadcast_to(values, shape).reshape(-1)
            raw = np.frombuffer(strings.encode(flat, self._info.data_type == "string"), np.uint8)
        else:
            data = np.ascontiguousarray(
                np.broadcast_to(np.asarray(value, self.dtype.newbyteorder("<")), shape))
            raw = data.reshape(-1).view(np.uint8)
        # The server's stream_piece_bytes, as the C++ client: one message up to it, else pieces of it.
        piece = self._client.info.stream_piece_bytes or _PIECE
        if raw.nbytes <= piece:
            errors.call(self._client.stub.SetItem, pb.SetItemRequest(
                store=self.store, path=self.path, selection=sel, data=raw.tobytes()))
            return

        def pieces():
            yield pb.SetItemRequest(store=self.store, path=self.path, selection=sel)
            for offset in range(0, raw.nbytes, piece):
                yield pb.SetItemRequest(offset=offset, data=raw[offset:offset + piece].tobytes())

        try:
            self._client.stub.SetItemStream(pieces())
        except grpc.RpcError as e:
            raise errors.from_rpc(e) from None

    def _set_from_device(self, sel, shape, value):
        cp = device.cupy()
        value = device.as_cupy(value).astype(self.dtype.newbyteorder("<"), copy=False)
        data = cp.ascontiguousarray(cp.broadcast_to(value, shape))
        cp.cuda.get_current_stream().synchronize()  # the server reads it on its own stream
        session = self._client.device_session()
        region = session.register(data)
        try:
            errors.call(self._client.stub.SetItem, pb.SetItemRequest(
                store=self.store, path=self.path, selection=sel,
                device_region=pb.DeviceRegionTarget(region_id=region, offset=0, nbytes=data.nbytes)))
        finally:
            session.unregister(region)

    def resize(self, *shape):
        _check_writable(self)
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        self._info = errors.call(self._client.stub.Resize, pb.ResizeRequest(
            store=self.store, path=self.path, shape=list(shape)))

    def append(self, data, axis=0):
        """Grows the array along `axis` by `data`'s length there and writes `data` into the new
        part, as zarr-python's `Array.append`; returns the new shape."""
        data = data if device.is_device_array(data) else np.asanyarray(data)
        axis = axis + self.ndim if axis < 0 else axis
        if data.ndim != self.ndim or not 0 <= axis < self.ndim:
            raise ValueError(f"data of {data.ndim} dimensions does not append along axis {axis} "
                             f"of an array of {self.ndim}")
        for d in range(self.ndim):
            if d != axis and data.shape[d] != self.shape[d]:
                raise ValueError(f"data has shape {tuple(data.shape)}: dimension {d} must be "
                                 f"{self.shape[d]}, as the array's")
        old = self.shape
        new = list(old)
        new[axis] += data.shape[axis]
        self.resize(new)
        self[tuple(slice(old[axis], None) if d == axis else slice(None) for d in range(self.ndim))] = data
        return self.shape

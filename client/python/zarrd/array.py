"""Arrays served by zarrd, with numpy's selection semantics."""
import json
from collections.abc import MutableMapping

import grpc
import numpy as np

from zarrd import config, device, errors, host_region
from zarrd.node import Node
from zarrd.selection import (any_to_proto, block_to_proto, full_key, is_basic, mask_to_proto,
                             orthogonal_to_proto, to_proto, vectorized_to_proto)
from zarrd.stream import chunk_aligned_bands, read_one_stream, read_streamed
from zarrd.v1 import zarrd_pb2 as pb

_PIECE = 4 << 20  # when the server names no stream_piece_bytes


class Attributes(MutableMapping):
    """A node's attributes; every change is written to the server at once."""

    def __init__(self, node):
        self._node = node

    def _read(self):
        return json.loads(self._node._info.attributes_json or "{}")

    def _write(self, attrs):
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
        return {"prototype": self.prototype}

    # Metadata, always from the host.
    @property
    def metadata(self):
        return json.loads(self._info.metadata_json)

    @property
    def shape(self):
        return tuple(self._info.shape)

    @property
    def chunks(self):
        return tuple(self._info.chunks)

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
        if self.dtype.kind in "mM" and raw is not None:
            return np.array(raw, self.dtype)[()] if isinstance(raw, str) else \
                np.array(raw, "<i8").view(self.dtype)[()]
        if isinstance(raw, str):
            return np.array(float(raw.replace("Infinity", "inf")), self.dtype)[()]
        if isinstance(raw, list) and self.dtype.kind == "c":
            return np.array(complex(*[float(str(x).replace("Infinity", "inf")) for x in raw]), self.dtype)[()]
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

    def get(self, selection=(), prototype="host", device=None, stream=None):
        """Reads `selection`: a NumPy array (prototype "host") or a CuPy array in GPU memory
        (prototype "device", on `device`: a GPU UUID, default the server's first). A device
        result is complete when get returns; given a CuPy `stream`, get returns as soon as the
        server answers and the result is complete in that stream's order instead: work queued
        on `stream` afterwards sees it, other streams must wait for `stream` first."""
        sel, shape = any_to_proto(selection, self.shape)
        return self._read(sel, shape, selection, prototype, device, stream)

    def _read(self, sel, shape, selection, prototype="host", gpu=None, stream=None):
        """Reads the wire selection `sel` (of result `shape`; `selection` is its key when basic)."""
        if not is_basic(sel) and prototype == "device":
            # The server serves advanced selections as HOST results: uploaded here.
            return device.cupy().asarray(self._read(sel, shape, None, "host"))
        request = pb.GetItemRequest(store=self.store, path=self.path, selection=sel)
        if prototype == "device":
            request.prototype = pb.PROTOTYPE_DEVICE
            request.device_uuid = gpu or ""
            request.client_pid = self._client.pid
            session = self._client.device_session()
            request.answer_before_ready = session.waits_on_events()
            response = errors.call(self._client.stub.GetItem, request)
            return session.view(response, stream)
        if stream is not None:
            raise ValueError("stream applies to device results only")
        if prototype != "host":
            raise ValueError(f'prototype must be "host" or "device", not {prototype!r}')
        request.prototype = pb.PROTOTYPE_HOST
        nbytes = int(np.prod(shape, dtype=np.int64)) * self.dtype.itemsize
        if self._client.host_regions.wanted(nbytes):
            out = self._client.host_regions.read(request, shape, self.dtype.newbyteorder("<"))
            if out is not None:
                return out
        def request_for(key):
            return pb.GetItemRequest(store=self.store, path=self.path, prototype=pb.PROTOTYPE_HOST,
                                     selection=to_proto(key, self.shape)[0])
        regions = self._client.host_regions
        if regions.enabled and nbytes > host_region.MAX_BYTES and is_basic(sel):
            bands = chunk_aligned_bands(full_key(selection, self.ndim), self.shape, shape,
                                        self.dtype.itemsize, self.chunks, host_region.BAND_BYTES,
                                        host_region.MAX_BYTES)
            if bands is not None:
                out = regions.read_bands(bands, shape, self.dtype.newbyteorder("<"), request_for)
                if out is not None:
                    return out
        if nbytes <= self._client.info.max_unary_result_bytes:
            response = errors.call(self._client.stub.GetItem, request)
            return np.frombuffer(response.data, self.dtype.newbyteorder("<")).reshape(shape).copy() \
                if response.data else np.empty(shape, self.dtype)
        if not is_basic(sel):
            return read_one_stream(self._client, request, shape, self.dtype.newbyteorder("<"))
        return read_streamed(self._client, self.store, self.path, full_key(selection, self.ndim),
                             self.shape, shape, self.dtype.newbyteorder("<"), request_for)

    def get_orthogonal_selection(self, selection, prototype=None):
        """zarr's outer selection: per dimension an integer, a slice or a 1-d array of integers
        (any order, repeats, negatives) or booleans, each array selecting along its own
        dimension; selected by the server, which decodes each chunk once."""
        return self._read(*orthogonal_to_proto(selection, self.shape), None,
                          prototype or self._default_prototype())

    def get_coordinate_selection(self, selection, prototype=None):
        """zarr's vindex: integer arrays broadcast together into points (numpy's advanced
        indexing; slices for dimensions without an array)."""
        return self._read(*vectorized_to_proto(selection, self.shape), None,
                          prototype or self._default_prototype())

    def get_mask_selection(self, mask, prototype=None):
        """The elements where the boolean `mask` (the array's shape) is true, 1-d in C order."""
        return self._read(*mask_to_proto(mask, self.shape), None,
                          prototype or self._default_prototype())

    def get_block_selection(self, selection, prototype=None):
        """zarr's blocks: per dimension a chunk index or a slice of chunk indices."""
        sel, shape = block_to_proto(selection, self.shape, self.chunks)
        return self._read(sel, shape, None, prototype or self._default_prototype())

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
        self._write(*block_to_proto(selection, self.shape, self.chunks), value)

    def _write(self, sel, shape, value):
        if device.is_device_array(value) and not is_basic(sel):
            value = device.as_cupy(value).get()  # advanced selections are written from the host
        if device.is_device_array(value):
            return self._set_from_device(sel, shape, value)
        data = np.ascontiguousarray(np.broadcast_to(np.asarray(value, self.dtype.newbyteorder("<")), shape))
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
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        self._info = errors.call(self._client.stub.Resize, pb.ResizeRequest(
            store=self.store, path=self.path, shape=list(shape)))

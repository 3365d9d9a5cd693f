"""String arrays on the wire (see ArrayDescriptor in proto/zarrd/v1/zarrd.proto): variable-length
strings ("|O") as, per element in C order, a uint32 little-endian byte length and the bytes
(UTF-8 for data_type "string"); fixed-length ones ("|S5", "<U3") as numpy's own elements."""
import struct

import grpc
import numpy as np

from zarrd import errors
from zarrd.wire import decode_piece

_LEN = struct.Struct("<I")


def vlen_kind(dtype):
    """"string" or "bytes" when `dtype` asks for variable-length strings (str, bytes, object,
    "string", numpy's "U" or "S" without a length), else None."""
    if dtype is str or dtype in ("str", "string", "|O", "O") or dtype is object:
        return "string"
    if dtype is bytes or dtype in ("bytes",):
        return "bytes"
    try:
        d = np.dtype(dtype)
    except TypeError:
        return None
    if d.kind == "O" or (d.kind == "U" and d.itemsize == 0):
        return "string"
    if d.kind == "S" and d.itemsize == 0:
        return "bytes"
    return None


def decode(buf, count, text):
    """A numpy object array of `count` str (text) or bytes from the vlen wire form."""
    out = np.empty(count, object)
    view = memoryview(buf)
    pos = 0
    for i in range(count):
        if pos + 4 > len(view):
            raise errors.DataLossError(grpc.StatusCode.DATA_LOSS, "string result is cut off")
        (n,) = _LEN.unpack_from(view, pos)
        pos += 4
        if pos + n > len(view):
            raise errors.DataLossError(grpc.StatusCode.DATA_LOSS, "string result is cut off")
        item = bytes(view[pos:pos + n])
        out[i] = item.decode("utf-8") if text else item
        pos += n
    return out


def encode(values, text):
    """The vlen wire form of a flat sequence of str or bytes (None is the empty string)."""
    parts = []
    for v in values:
        if v is None:
            b = b""
        elif isinstance(v, (bytes, np.bytes_)):
            b = bytes(v)
        elif isinstance(v, str):
            b = v.encode("utf-8")
        else:
            raise TypeError(f"cannot write {type(v).__name__} {v!r} to a {'string' if text else 'bytes'} array")
        if text:
            b.decode("utf-8")  # what the server refuses, said here
        parts.append(_LEN.pack(len(b)))
        parts.append(b)
    return b"".join(parts)


def read_stream(client, request):
    """The whole result of `request` through one GetItemStream, as bytes."""
    call = client.band_channel(0).unary_stream(
        "/zarrd.v1.Zarrd/GetItemStream",
        request_serializer=lambda r: r.SerializeToString(), response_deserializer=None)
    out = None
    try:
        for raw in call(request):
            offset, data, array = decode_piece(raw)
            if array is not None:
                out = bytearray(array.nbytes)
            if data is not None and len(data):
                if out is None or offset + len(data) > len(out):
                    raise errors.DataLossError(grpc.StatusCode.DATA_LOSS,
                                               "the server sent a piece outside the result")
                out[offset:offset + len(data)] = data
    except grpc.RpcError as e:
        raise errors.from_rpc(e) from None
    return bytes(out or b"")

"""Streamed result pieces (GetItemResponse{array, offset, data}) on the wire, with the field numbers
of the generated GetItemResponse: a piece's data is parsed as a view of the received bytes, not
copied into a message. The twin of proto/piece_wire.cc; both are checked against the messages
protobuf serialized in tests/data/wire/get_item_pieces.json."""
import grpc

from zarrd import errors
from zarrd.v1 import zarrd_pb2 as pb

_FIELDS = pb.GetItemResponse.DESCRIPTOR.fields_by_name
ARRAY, OFFSET, DATA = (_FIELDS[name].number for name in ("array", "offset", "data"))
# Wire types of the protobuf encoding.
_VARINT, _FIXED64, _LENGTH_DELIMITED, _FIXED32 = 0, 1, 2, 5


def _malformed(why):
    return errors.DataLossError(grpc.StatusCode.DATA_LOSS, f"a GetItemResponse of the stream {why}")


def _varint(buf, pos):
    value = shift = 0
    while pos < len(buf) and shift < 64:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
    raise _malformed("is truncated")


def _put_varint(out, value):
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)


def decode_piece(raw):
    """(offset, data, array) of a serialized GetItemResponse: data a memoryview of `raw` (None when
    absent), array the ArrayDescriptor of a stream's first message (else None)."""
    view = memoryview(raw)
    pos, offset, data, array = 0, 0, None, None
    while pos < len(view):
        tag, pos = _varint(view, pos)
        field, wire = tag >> 3, tag & 7
        if field == 0:
            raise _malformed("does not parse")
        if wire == _VARINT:
            value, pos = _varint(view, pos)
            if field == OFFSET:
                offset = value
        elif wire == _LENGTH_DELIMITED:
            length, pos = _varint(view, pos)
            if pos + length > len(view):
                raise _malformed("is truncated")
            if field == DATA:
                data = view[pos:pos + length]
            elif field == ARRAY:
                array = pb.ArrayDescriptor.FromString(view[pos:pos + length].tobytes())
            pos += length
        elif wire in (_FIXED64, _FIXED32):
            pos += 8 if wire == _FIXED64 else 4
        else:
            raise _malformed(f"has wire type {wire} in field {field}")
    if pos != len(view):
        raise _malformed("is truncated")
    return offset, data, array


def encode_piece(offset, data):
    """The bytes of GetItemResponse{offset, data}, as protobuf writes them (fields at their
    default value left out)."""
    out = bytearray()
    if offset:
        _put_varint(out, OFFSET << 3 | _VARINT)
        _put_varint(out, offset)
    if len(data):
        _put_varint(out, DATA << 3 | _LENGTH_DELIMITED)
        _put_varint(out, len(data))
        out += data
    return bytes(out)

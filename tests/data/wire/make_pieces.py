"""Writes get_item_pieces.json: GetItemResponse messages serialized by protobuf itself
(SerializeToString), the vector both piece codecs (proto/piece_wire.cc and
client/python/zarrd/wire.py) decode and encode back. Run from the repository root:
  PYTHONPATH=client/python /usr/bin/python3 tests/data/wire/make_pieces.py"""
import json
from pathlib import Path

from zarrd.v1 import zarrd_pb2 as pb


def message(**fields):
    m = pb.GetItemResponse(**fields)
    return {"hex": m.SerializeToString().hex(), "offset": m.offset, "data_hex": m.data.hex(),
            "array_hex": m.array.SerializeToString().hex() if m.HasField("array") else None}


data = bytes(range(256)) * 2 + b"zarrd"  # 517 bytes: a two-byte length
cases = [
    # The first message of a stream: the descriptor, then the first piece (offset 0 not written).
    message(array=pb.ArrayDescriptor(data_type="uint16", shape=[30, 20], nbytes=1200,
                                     prototype=pb.PROTOTYPE_HOST), data=data[:40]),
    message(offset=300, data=data),  # a two-byte offset
    message(offset=(1 << 21) + 7, data=data[:1]),  # a four-byte offset
    message(offset=(1 << 35) + 7),  # a six-byte offset, no data
]
out = Path(__file__).with_name("get_item_pieces.json")
out.write_text(json.dumps({"messages": cases}, indent=1) + "\n")

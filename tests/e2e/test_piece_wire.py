"""The Python piece codec (zarrd/wire.py) against the GetItemResponse messages protobuf serialized
in tests/data/wire/get_item_pieces.json, the vector proto/piece_wire_test.cc checks too."""
import json
from pathlib import Path

import pytest

from zarrd import errors
from zarrd.v1 import zarrd_pb2 as pb
from zarrd.wire import decode_piece, encode_piece

MESSAGES = json.loads((Path(__file__).parents[1] / "data" / "wire" / "get_item_pieces.json")
                      .read_text())["messages"]


def test_the_vector_is_what_protobuf_writes_today():
    for m in MESSAGES:
        parsed = pb.GetItemResponse.FromString(bytes.fromhex(m["hex"]))
        assert (parsed.offset, parsed.data.hex()) == (m["offset"], m["data_hex"])
        assert parsed.SerializeToString().hex() == m["hex"]


def test_decodes_and_encodes_back():
    assert len(MESSAGES) == 4
    for m in MESSAGES:
        raw = bytes.fromhex(m["hex"])
        offset, data, array = decode_piece(raw)
        assert offset == m["offset"]
        assert (bytes(data) if data is not None else b"").hex() == m["data_hex"]
        if m["array_hex"] is None:
            assert array is None
            assert encode_piece(offset, data if data is not None else b"") == raw
        else:
            assert array.SerializeToString().hex() == m["array_hex"]
            first = pb.GetItemResponse(array=array).SerializeToString()
            assert first + encode_piece(offset, data) == raw


def test_refuses_broken_messages():
    raw = bytes.fromhex(MESSAGES[1]["hex"])
    for broken in (raw[:-1], raw[:2], b"\x00\x05", b"\x13"):
        with pytest.raises(errors.DataLossError):
            decode_piece(broken)

"""Hostile input: each request is answered with its error code and a message that names what was
wrong, nothing is written, the server's memory stays bounded and it keeps serving."""
import gzip
import json
import os
import struct
from pathlib import Path

import grpc
import numpy as np
import pytest
from conftest import Server, sel
from zarrd.v1 import zarrd_pb2 as pb
from zarrd.v1 import zarrd_pb2_grpc

from hardening_util import SANITIZED, rss_bytes, tree_snapshot

CODE = grpc.StatusCode
LIMITS = {"max_chunk_bytes": 1 << 20, "max_request_bytes": 4 << 20, "max_result_bytes": 4 << 20,
          "max_unary_result_bytes": 1 << 20}


def v3(shape=(100, 100), chunks=(32, 32), dtype="float32", fill=0, codecs=None, **extra):
    return dict({"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
                 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
                 "chunk_key_encoding": {"name": "default"}, "fill_value": fill,
                 "codecs": codecs or [{"name": "bytes", "configuration": {"endian": "little"}},
                                      {"name": "zstd", "configuration": {"level": 1}}]}, **extra)


BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
V2 = {"zarr_format": 2, "shape": [100, 100], "chunks": [32, 32], "dtype": "<f4", "order": "C",
      "fill_value": 0, "compressor": {"id": "zstd", "level": 1}, "filters": None}


@pytest.fixture
def env(tmp_path):
    server = Server(tmp_path, LIMITS)
    channel = grpc.insecure_channel(server.unix, options=[("grpc.max_receive_message_length", -1),
                                                          ("grpc.max_send_message_length", -1)])
    stub = zarrd_pb2_grpc.ZarrdStub(channel)
    yield server, stub, tmp_path / "data"
    channel.close()
    assert server.stop() == 0, server.exit_report()


def refused(call, req, code, *words):
    with pytest.raises(grpc.RpcError) as e:
        call(req)
    assert e.value.code() == code, (e.value.code(), e.value.details())
    for w in words:
        assert w in e.value.details(), (w, e.value.details())
    return e.value.details()


def create(stub, path, meta, store="local"):
    return stub.CreateNode(pb.CreateNodeRequest(store=store, path=path, kind=pb.NODE_KIND_ARRAY,
                                                metadata_json=json.dumps(meta)))


def test_paths_cannot_leave_the_store_root(env, tmp_path):
    server, stub, data = env
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(b"keep")
    create(stub, "victim", v3())
    stub.SetItem(pb.SetItemRequest(store="local", path="victim", data=np.ones((100, 100), "<f4").tobytes()))
    os.rename(data / "victim", outside / "victim")
    os.symlink(outside, data / "link")
    os.symlink(outside / "secret", data / "secret")
    os.symlink("/etc", data / "etc")
    before_outside, before_data = tree_snapshot(outside), tree_snapshot(data)

    for path in ["../x", "a/../../x", "/etc/x", "/", "a\0b", "a//b", "./a", "a/.", ".."]:
        refused(stub.CreateNode, pb.CreateNodeRequest(store="local", path=path, kind=pb.NODE_KIND_ARRAY,
                                                      metadata_json=json.dumps(v3())),
                CODE.INVALID_ARGUMENT)
        refused(stub.SetItem, pb.SetItemRequest(store="local", path=path, data=b""), CODE.INVALID_ARGUMENT)
        refused(stub.DeleteNode, pb.NodeRequest(store="local", path=path), CODE.INVALID_ARGUMENT)
    # Through symlinks that lead out of the root: neither read, written nor deleted.
    for path in ["link/victim", "etc", "secret", "link"]:
        with pytest.raises(grpc.RpcError) as e:
            stub.GetItem(pb.GetItemRequest(store="local", path=path))
        assert e.value.code() in (CODE.NOT_FOUND, CODE.PERMISSION_DENIED), e.value.details()
        with pytest.raises(grpc.RpcError):
            stub.SetItem(pb.SetItemRequest(store="local", path=path, data=bytes(40000)))
        with pytest.raises(grpc.RpcError):
            stub.SetAttributes(pb.SetAttributesRequest(store="local", path=path, attributes_json="{}"))
    refused(stub.CreateNode, pb.CreateNodeRequest(store="local", path="link/new", kind=pb.NODE_KIND_ARRAY,
                                                  metadata_json=json.dumps(v3())), CODE.PERMISSION_DENIED)
    for path in ["link/victim", "link"]:
        try:
            stub.DeleteNode(pb.NodeRequest(store="local", path=path))
        except grpc.RpcError:
            pass
    assert tree_snapshot(outside) == before_outside
    assert (outside / "secret").read_bytes() == b"keep"
    # The links themselves may go (they are in the root); nothing else in the root changed.
    after = tree_snapshot(data)
    assert {k: v for k, v in after.items()} == {k: v for k, v in before_data.items() if k in after}


ABSURD = [
    ("shape", v3(shape=(2**62, 2**62), chunks=(1, 1)), "overflows"),
    ("shape", v3(shape=(-5, 10)), "negative"),
    ("shape", v3(shape="abc"), "shape"),
    ("shape", v3(shape=(1.5, 2)), "shape"),
    ("chunk", v3(chunks=(0, 10)), "positive"),
    ("chunk", v3(chunks=(2**40, 2**40), shape=(10, 10)), "exceed"),
    ("chunk", v3(chunks=(1024, 1024)), "max_chunk_bytes"),
    ("chunk", v3(shape=(4096, 4096), chunks=(1024, 1024), codecs=[
        {"name": "sharding_indexed", "configuration": {
            "chunk_shape": [32, 32], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]),
     "max_chunk_bytes"),
    ("chunk", v3(chunks=(32, 32, 32)), "dimensions"),
    ("fill", v3(dtype="uint8", fill=-1), "fill_value"),
    ("fill", v3(dtype="uint8", fill=300), "fill_value"),
    ("fill", v3(dtype="int64", fill=2**70), "fill_value"),
    ("fill", v3(dtype="float32", fill=1e300), "fill_value"),
    ("fill", v3(dtype="int32", fill="zero"), "fill_value"),
    ("fill", v3(dtype="int32", fill=[1, 2]), "fill_value"),
    ("codec", v3(codecs=[BYTES, {"name": "lzma9000"}]), "lzma9000"),
    ("codec", v3(codecs=[{"name": "zstd"}]), "bytes"),
    ("codec", v3(codecs=[BYTES, {"name": "zstd", "configuration": {"level": "max"}}]), "level"),
    ("codec", v3(codecs="zstd"), "codecs"),
    ("type", v3(dtype=5), "data_type"),
    ("type", v3(dtype="complex1024"), "data_type"),
    ("type", dict(v3(), node_type="table"), "node_type"),
    ("type", dict(v3(), zarr_format=7), "zarr_format"),
    ("type", dict(V2, dtype="<q9"), "dtype"),
    ("type", dict(V2, compressor={"id": "nope"}), "nope"),
    ("type", dict(V2, chunks=[2**40, 2**40]), "exceed"),
    ("type", dict(V2, fill_value="x"), "fill_value"),
]


def test_absurd_metadata_is_refused_and_nothing_written(env):
    server, stub, data = env
    failures = []
    for what, meta, word in ABSURD:
        try:
            refused(stub.CreateNode, pb.CreateNodeRequest(store="local", path="bad", kind=pb.NODE_KIND_ARRAY,
                                                          metadata_json=json.dumps(meta)),
                    CODE.INVALID_ARGUMENT, word)
        except (AssertionError, pytest.fail.Exception) as e:
            failures.append(f"{what} {json.dumps(meta)[:200]}: {e}")
        assert not (data / "bad").exists()
    assert not failures, "\n".join(failures)


def test_malformed_metadata_on_disk_is_named_when_opened(env):
    server, stub, data = env
    for name, text in [("trunc", json.dumps(v3())[:40]), ("wrong", json.dumps(v3(shape="x"))),
                       ("bin", "\xff\x00garbage"), ("deep", "[" * 100000 + "]" * 100000)]:
        (data / name).mkdir(parents=True)
        (data / name / "zarr.json").write_text(text, errors="surrogateescape")
        with pytest.raises(grpc.RpcError) as e:
            stub.GetItem(pb.GetItemRequest(store="local", path=name))
        assert e.value.code() in (CODE.INVALID_ARGUMENT, CODE.DATA_LOSS), e.value.details()
        assert name in e.value.details()
    assert stub.ServerInfo(pb.ServerInfoRequest()).epoch  # still serving


def gzip_bomb(nbytes):
    return gzip.compress(bytes(nbytes), compresslevel=9)


def corrupt_chunks():
    from numcodecs import Blosc, Zstd
    good = np.arange(32 * 32, dtype="<f4")
    return {
        "truncated": lambda enc: enc[: len(enc) // 2],
        "garbage": lambda enc: bytes(np.random.default_rng(3).integers(0, 256, len(enc), dtype=np.uint8)),
        "empty": lambda enc: b"",
        "zstd_bomb": lambda enc: Zstd(level=1).encode(np.zeros(256 << 20, "u1")),
        "zstd_short": lambda enc: Zstd(level=1).encode(good[:100].tobytes()),
        "blosc_bomb": lambda enc: Blosc("lz4").encode(np.zeros(64 << 20, "u1")),
        "gzip_bomb": lambda enc: gzip_bomb(256 << 20),
    }


@pytest.mark.parametrize("fmt", ["v3", "v2"])
def test_corrupt_truncated_and_bomb_chunks_are_data_loss(env, fmt):
    server, stub, data = env
    meta = v3() if fmt == "v3" else V2
    values = np.arange(100 * 100, dtype="<f4").reshape(100, 100)
    create(stub, "c", meta)
    stub.SetItem(pb.SetItemRequest(store="local", path="c", data=values.tobytes()))
    key = data / "c" / ("c/1/1" if fmt == "v3" else "1.1")
    original = key.read_bytes()
    idle = rss_bytes(server.proc.pid)
    for name, make in corrupt_chunks().items():
        bad = make(original)
        key.write_bytes(bad)
        msg = refused(stub.GetItem, pb.GetItemRequest(store="local", path="c"), CODE.DATA_LOSS)
        assert ("c/1/1" if fmt == "v3" else "1.1") in msg, (name, msg)
        # Only the bad chunk fails: a selection beside it reads.
        r = stub.GetItem(pb.GetItemRequest(store="local", path="c", selection=sel(slice(0, 32))))
        assert np.array_equal(np.frombuffer(r.data, "<f4").reshape(32, 100), values[:32])
        # A partial write into the bad chunk must not replace it with a guess.
        with pytest.raises(grpc.RpcError) as e:
            stub.SetItem(pb.SetItemRequest(store="local", path="c", selection=sel(40, 40),
                                           data=np.float32(1).tobytes()))
        assert e.value.code() == CODE.DATA_LOSS
        assert key.read_bytes() == bad
    assert SANITIZED or rss_bytes(server.proc.pid) < idle + (200 << 20), "a bomb inflated the server"
    key.write_bytes(original)
    r = stub.GetItem(pb.GetItemRequest(store="local", path="c"))
    assert np.array_equal(np.frombuffer(r.data, "<f4").reshape(100, 100), values)


def test_shard_index_pointing_outside_the_shard(env):
    server, stub, data = env
    meta = v3(shape=(64, 64), chunks=(64, 64), codecs=[{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [16, 16], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_location": "end"}}])
    create(stub, "s", meta)
    values = np.arange(64 * 64, dtype="<f4").reshape(64, 64)
    stub.SetItem(pb.SetItemRequest(store="local", path="s", data=values.tobytes()))
    shard = data / "s" / "c" / "0" / "0"
    good = shard.read_bytes()
    index_at = len(good) - 16 * 16
    for offset, nbytes, word in [(len(good), 1024, "past the end"), (2**63, 1024, "past the end"),
                                 (0, 2**64 - 2, "past the end"), (100, 5, "")]:
        bad = bytearray(good)
        struct.pack_into("<QQ", bad, index_at + 16 * 5, offset, nbytes)  # inner chunk 5 = (1, 1)
        shard.write_bytes(bad)
        refused(stub.GetItem, pb.GetItemRequest(store="local", path="s"), CODE.DATA_LOSS, "c/0/0", word)
        r = stub.GetItem(pb.GetItemRequest(store="local", path="s", selection=sel(slice(0, 16))))
        assert np.array_equal(np.frombuffer(r.data, "<f4").reshape(16, 64), values[:16])
    shard.write_bytes(good[:-3])  # the index itself truncated
    refused(stub.GetItem, pb.GetItemRequest(store="local", path="s"), CODE.DATA_LOSS, "c/0/0")


def test_requests_larger_than_the_limits(env):
    server, stub, data = env
    create(stub, "big", v3(shape=(2048, 1024), chunks=(256, 256)))
    before = tree_snapshot(data)
    refused(stub.GetItem, pb.GetItemRequest(store="local", path="big"), CODE.RESOURCE_EXHAUSTED,
            "max_result_bytes")
    with pytest.raises(grpc.RpcError) as e:
        list(stub.GetItemStream(pb.GetItemRequest(store="local", path="big")))
    assert e.value.code() == CODE.RESOURCE_EXHAUSTED
    payload = np.ones((2048, 1024), "<f4").tobytes()  # 8 MiB: over max_request_bytes
    with pytest.raises(grpc.RpcError) as e:
        stub.SetItem(pb.SetItemRequest(store="local", path="big", data=payload))
    assert e.value.code() == CODE.RESOURCE_EXHAUSTED
    pieces = [pb.SetItemRequest(store="local", path="big", offset=o, data=payload[o:o + (1 << 20)]) for o in range(0, len(payload), 1 << 20)]
    with pytest.raises(grpc.RpcError) as e:
        stub.SetItemStream(iter(pieces))
    assert e.value.code() == CODE.RESOURCE_EXHAUSTED
    assert tree_snapshot(data) == before


def test_selections_with_zero_huge_and_negative_steps(env):
    server, stub, data = env
    values = np.arange(100 * 100, dtype="<f4").reshape(100, 100)
    create(stub, "a", v3())
    stub.SetItem(pb.SetItemRequest(store="local", path="a", data=values.tobytes()))
    big = 2**63 - 1
    for s in [(slice(None, None, big),), (slice(None, None, -big),), (slice(-big, big, 7), slice(None, None, -1)),
              (slice(None, None, -(2**63)),), (slice(big, -big, -3),), (slice(5, 5),), (slice(90, 10, 1),)]:
        r = stub.GetItem(pb.GetItemRequest(store="local", path="a", selection=sel(*s)))
        got = np.frombuffer(r.data, "<f4").reshape(r.array.shape)
        assert np.array_equal(got, values[s]), s
    for s, code in [((slice(None, None, 0),), CODE.INVALID_ARGUMENT), ((-(2**63),), CODE.OUT_OF_RANGE),
                    ((big,), CODE.OUT_OF_RANGE), ((0, 0, 0), CODE.INVALID_ARGUMENT),
                    ((Ellipsis, Ellipsis), CODE.INVALID_ARGUMENT)]:
        refused(stub.GetItem, pb.GetItemRequest(store="local", path="a", selection=sel(*s)), code, "'a'")
        with pytest.raises(grpc.RpcError) as e:
            stub.SetItem(pb.SetItemRequest(store="local", path="a", selection=sel(*s), data=b""))
        assert e.value.code() == code
    r = stub.GetItem(pb.GetItemRequest(store="local", path="a"))
    assert np.array_equal(np.frombuffer(r.data, "<f4").reshape(100, 100), values)
    # A step that skips 2**40 one-element chunks costs the two it selects, not the ones skipped.
    create(stub, "long", v3(shape=(2**40,), chunks=(1,), dtype="uint8", fill=7))
    stub.SetItem(pb.SetItemRequest(store="local", path="long", selection=sel(2**40 - 1), data=b"\x09"))
    r = stub.GetItem(pb.GetItemRequest(store="local", path="long", selection=sel(slice(None, None, 2**40 - 1))),
                     timeout=10)
    assert list(r.data) == [7, 9]

"""kill -9 of zarrd at random moments during streams of writes, then a restart: every chunk holds
its old or its new complete value, metadata parses, and every acknowledged write is there."""
import json
import os
import random
import signal
import threading
import time

import grpc
import numpy as np
from conftest import Server, sel
from zarrd.v1 import zarrd_pb2 as pb
from zarrd.v1 import zarrd_pb2_grpc

BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
CHUNK = 64  # every layout's unit of atomicity is a 64 x 64 block


def v3(codecs, chunks):
    return {"zarr_format": 3, "node_type": "array", "shape": [256, 256], "data_type": "int64",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs,
            "attributes": {"purpose": "crash test"}}


ARRAYS = {
    "v3": v3([BYTES, {"name": "zstd", "configuration": {"level": 3}}], [64, 64]),
    "v2": {"zarr_format": 2, "shape": [256, 256], "chunks": [64, 64], "dtype": "<i8", "order": "F",
           "fill_value": 0, "compressor": {"id": "gzip", "level": 1}, "filters": None},
    # Shards of 128 x 128 hold four 64 x 64 inner chunks owned by different writers.
    "sharded": v3([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [64, 64], "codecs": [BYTES, {"name": "zstd", "configuration": {"level": 1}}],
        "index_codecs": [BYTES, {"name": "crc32c"}]}}], [128, 128]),
}
BLOCKS = [(i, j) for i in range(4) for j in range(4)]
WRITERS = 4  # writer w owns blocks whose (i * 4 + j) % WRITERS == w


def block_value(tag, i, j):
    """A block's content: distinct per element, so a torn or mixed block cannot pass."""
    base = np.arange(CHUNK * CHUNK, dtype=np.int64).reshape(CHUNK, CHUNK)
    return base + (tag << 20) + ((i * 4 + j) << 12)


def block_tag(block, i, j):
    """The tag a block was written with, or None if it is no complete value of any tag."""
    if (block == 0).all():
        return 0
    tag = int(block[0, 0] - ((i * 4 + j) << 12)) >> 20
    return tag if np.array_equal(block, block_value(tag, i, j)) else None


def writer(address, w, iteration, acked, in_flight, stop):
    """Writes this writer's blocks over and over, one block or a row of two blocks at a time, by
    unary and streamed requests, recording what was acknowledged and what was sent."""
    rng = random.Random(iteration * 100 + w)
    stub = zarrd_pb2_grpc.ZarrdStub(grpc.insecure_channel(address))
    mine = [b for b in BLOCKS if (b[0] * 4 + b[1]) % WRITERS == w]
    seq = 0
    while not stop.is_set():
        path = rng.choice(list(ARRAYS))
        i, j = rng.choice(mine)
        seq += 1
        tag = iteration * 1000 + seq * WRITERS + w + 1
        data = block_value(tag, i, j)
        selection = sel(slice(i * CHUNK, (i + 1) * CHUNK), slice(j * CHUNK, (j + 1) * CHUNK))
        in_flight[(path, i, j)] = tag
        try:
            if rng.random() < 0.5:
                stub.SetItem(pb.SetItemRequest(store="local", path=path, selection=selection,
                                               data=data.tobytes()), timeout=20)
            else:
                raw = data.tobytes()
                pieces = [pb.SetItemRequest(store="local", path=path, selection=selection,
                                            offset=o, data=raw[o:o + 8192])
                          for o in range(0, len(raw), 8192)]
                stub.SetItemStream(iter(pieces), timeout=20)
        except grpc.RpcError:
            return  # the server is gone
        acked[(path, i, j)] = tag


def test_kill_9_during_writes_loses_nothing_acknowledged(tmp_path):
    iterations = int(os.environ.get("ZARRD_CRASH_ITERATIONS", "12"))
    server = Server(tmp_path, {"log_level": "info"})
    stub = zarrd_pb2_grpc.ZarrdStub(grpc.insecure_channel(
            server.unix, options=[("grpc.use_local_subchannel_pool", 1)]))  # no dead connection of the last zarrd
    for path, meta in ARRAYS.items():
        stub.CreateNode(pb.CreateNodeRequest(store="local", path=path, kind=pb.NODE_KIND_ARRAY,
                                             metadata_json=json.dumps(meta)))
    acked = {}  # (path, i, j) -> last acknowledged tag
    rng = random.Random(7)
    total_acked = 0
    for iteration in range(1, iterations + 1):
        in_flights = [{} for _ in range(WRITERS)]
        stop = threading.Event()
        results = [{} for _ in range(WRITERS)]
        threads = [threading.Thread(target=writer, args=(server.unix if w % 2 else server.tcp, w,
                                                         iteration, results[w], in_flights[w], stop))
                   for w in range(WRITERS)]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.2, 1.2))
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait()
        stop.set()
        for t in threads:
            t.join()
        for r in results:
            total_acked += len(r)
            acked.update(r)
        sent = {}
        for f in in_flights:
            sent.update(f)

        server = Server(tmp_path, {"log_level": "info"})
        stub = zarrd_pb2_grpc.ZarrdStub(grpc.insecure_channel(
            server.unix, options=[("grpc.use_local_subchannel_pool", 1)]))  # no dead connection of the last zarrd
        for path in ARRAYS:
            node = stub.GetNode(pb.NodeRequest(store="local", path=path))  # metadata parses
            assert list(node.shape) == [256, 256]
            r = stub.GetItem(pb.GetItemRequest(store="local", path=path))
            got = np.frombuffer(r.data, "<i8").reshape(256, 256)
            for i, j in BLOCKS:
                block = got[i * CHUNK:(i + 1) * CHUNK, j * CHUNK:(j + 1) * CHUNK]
                tag = block_tag(block, i, j)
                assert tag is not None, f"iteration {iteration}: {path} block {(i, j)} is torn"
                old = acked.get((path, i, j), 0)
                allowed = {old, sent.get((path, i, j), old)}
                assert tag in allowed, (f"iteration {iteration}: {path} block {(i, j)} has tag {tag}, "
                                        f"acknowledged {old}, in flight {sent.get((path, i, j))}")
                acked[(path, i, j)] = tag  # an unacknowledged write that landed is the new old
        deadline = time.time() + 10
        while True:  # the restarted server removes what the killed one left, in the background
            leftovers = [p for p in (tmp_path / "data").rglob("*") if ".zarrd-tmp-" in p.name]
            if not leftovers or time.time() > deadline:
                break
            time.sleep(0.1)
        assert not leftovers, f"temporary files left after restart: {leftovers[:3]}"
    assert server.stop() == 0
    print(f"\ncrash: {iterations} kill -9 iterations, {total_acked} acknowledged writes checked")
    assert total_acked > iterations, "too few writes were acknowledged to mean anything"

"""Many clients at once: no lost updates in shared chunks and shards, and a bounded load test over
a Unix socket and TCP with every write verified and the server's memory back to idle after."""
import json
import os
import random
import threading
import time

import grpc
import numpy as np
import pytest
from conftest import Server, sel
from zarrd.v1 import zarrd_pb2 as pb
from zarrd.v1 import zarrd_pb2_grpc

from hardening_util import near_idle, rss_bytes

BYTES = {"name": "bytes", "configuration": {"endian": "little"}}


def v3(shape, chunks, codecs):
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": "int32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": -1, "codecs": codecs}


LAYOUTS = {
    "v2": {"zarr_format": 2, "shape": [64, 64], "chunks": [64, 64], "dtype": "<i4", "order": "C",
           "fill_value": -1, "compressor": {"id": "zstd", "level": 1}, "filters": None},
    "v3": v3((64, 64), (64, 64), [BYTES, {"name": "zstd", "configuration": {"level": 1}}]),
    "sharded": v3((64, 64), (64, 64), [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [16, 16], "codecs": [BYTES, {"name": "gzip", "configuration": {"level": 1}}],
        "index_codecs": [BYTES, {"name": "crc32c"}]}}]),
}


def channel_for(address):
    return grpc.insecure_channel(address, options=[("grpc.max_receive_message_length", -1),
                                                   ("grpc.max_send_message_length", -1)])


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path, {"log_level": "info"})
    yield s
    assert s.stop() == 0, s.exit_report()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_disjoint_writes_to_the_same_chunks_are_all_kept(server, layout):
    stub = zarrd_pb2_grpc.ZarrdStub(channel_for(server.unix))
    stub.CreateNode(pb.CreateNodeRequest(store="local", path="shared", kind=pb.NODE_KIND_ARRAY,
                                         metadata_json=json.dumps(LAYOUTS[layout])))
    writers = 32
    expected = np.full((64, 64), -1, np.int32)
    for round_ in range(3):
        # Writer w owns columns w and w + 32 (every chunk and inner chunk is shared by 2-16
        # writers), written with one strided selection per round.
        barrier = threading.Barrier(writers)
        errors = []

        def write(w):
            try:
                s = zarrd_pb2_grpc.ZarrdStub(channel_for(server.unix if w % 2 else server.tcp))
                value = np.full((64, 2), round_ * 100 + w, np.int32)
                barrier.wait()
                s.SetItem(pb.SetItemRequest(store="local", path="shared",
                                            selection=sel(slice(None), slice(w, 64, 32)),
                                            data=value.tobytes()))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        for w in range(writers):
            expected[:, w::32] = round_ * 100 + w
        r = stub.GetItem(pb.GetItemRequest(store="local", path="shared"))
        got = np.frombuffer(r.data, "<i4").reshape(64, 64)
        lost = np.argwhere(got != expected)
        assert len(lost) == 0, f"round {round_}: {len(lost)} lost elements, e.g. {lost[:5].tolist()}"


ARRAYS = ["load/v3_zstd", "load/v3_sharded", "load/v2_blosc", "load/mem"]
ROWS, COLS = 256, 128  # 4 rows per client; a chunk (32 rows) is shared by 8 owners


def make_load_arrays(stub):
    metas = {
        "load/v3_zstd": v3((ROWS, COLS), (32, 64), [BYTES, {"name": "zstd", "configuration": {"level": 1}}]),
        "load/v3_sharded": v3((ROWS, COLS), (64, 128), [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [32, 32], "codecs": [BYTES], "index_codecs": [BYTES, {"name": "crc32c"}]}}]),
        "load/v2_blosc": {"zarr_format": 2, "shape": [ROWS, COLS], "chunks": [32, 64], "dtype": "<i4",
                          "order": "C", "fill_value": -1, "filters": None,
                          "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}},
        "load/mem": v3((ROWS, COLS), (32, 64), [BYTES]),
    }
    for path, meta in metas.items():
        store = "mem" if path == "load/mem" else "local"
        stub.CreateNode(pb.CreateNodeRequest(store=store, path=path, kind=pb.NODE_KIND_ARRAY,
                                             metadata_json=json.dumps(meta)))


def store_of(path):
    return "mem" if path == "load/mem" else "local"


def test_load_64_clients_mixed_reads_and_writes(server):
    seconds = float(os.environ.get("ZARRD_LOAD_SECONDS", "25"))
    clients = 64
    stub = zarrd_pb2_grpc.ZarrdStub(channel_for(server.unix))
    make_load_arrays(stub)
    # Client c owns rows c*4 .. c*4+3 of every array and writes whole rows with value
    # c * 1_000_000 + seq; readers check every row they see is one value written by its owner.
    acked = {}  # (path, row) -> last acknowledged value
    latencies, errors = [], []
    lock = threading.Lock()

    def client(c, stop_at, first_seq):
        rng = random.Random(c * 7 + first_seq)
        channel = channel_for(server.unix if c % 2 else server.tcp)
        s = zarrd_pb2_grpc.ZarrdStub(channel)
        mine, lat, seq = {}, [], first_seq
        try:
            while time.time() < stop_at:
                path = rng.choice(ARRAYS)
                t0 = time.perf_counter()
                op = rng.random()
                if op < 0.45:
                    seq += 1
                    rows = sorted(rng.sample(range(c * 4, c * 4 + 4), rng.randint(1, 4)))
                    value = c * 1_000_000 + seq
                    r0, r1 = rows[0], rows[-1] + 1
                    data = np.full((r1 - r0, COLS), value, np.int32)
                    s.SetItem(pb.SetItemRequest(store=store_of(path), path=path,
                                                selection=sel(slice(r0, r1)), data=data.tobytes()))
                    for row in range(r0, r1):
                        mine[(path, row)] = value
                else:
                    r0 = rng.randrange(0, ROWS - 1)
                    r1 = rng.randrange(r0 + 1, ROWS + 1)
                    step = rng.choice([1, 1, 2, 3])
                    if op < 0.9:
                        r = s.GetItem(pb.GetItemRequest(store=store_of(path), path=path,
                                                        selection=sel(slice(r0, r1, step))))
                        got = np.frombuffer(r.data, "<i4").reshape(r.array.shape)
                    else:
                        buf = bytearray()
                        for m in s.GetItemStream(pb.GetItemRequest(store=store_of(path), path=path,
                                                                   selection=sel(slice(r0, r1, step)))):
                            buf[m.offset:m.offset + len(m.data)] = m.data
                        got = np.frombuffer(bytes(buf), "<i4").reshape(-1, COLS)
                    # A write of a row spans two chunks and is atomic per chunk only: check each
                    # 32-column block (within one chunk or inner chunk of every layout).
                    for i, row in enumerate(range(r0, r1, step)):
                        for block in got[i].reshape(-1, 32):
                            if not (block == block[0]).all():
                                raise AssertionError(f"{path} row {row}: torn chunk {np.unique(block)[:4]}")
                            if block[0] not in (-1, 0) and block[0] // 1_000_000 != row // 4:
                                raise AssertionError(f"{path} row {row}: {block[0]} not by its owner")
                            if block[0] < mine.get((path, row), -1):
                                raise AssertionError(f"{path} row {row}: older than an acknowledged write")
                lat.append(time.perf_counter() - t0)
        except Exception as e:  # noqa: BLE001 - reported below
            with lock:
                errors.append(f"client {c}: {e!r}"[:500])
        finally:
            channel.close()
        with lock:
            latencies.extend(lat)
            acked.update(mine)

    def run(seconds, first_seq):
        stop_at = time.time() + seconds
        threads = [threading.Thread(target=client, args=(c, stop_at, first_seq))
                   for c in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, "\n".join(errors[:10])

    # Warm-up: a short burst of the same load, so first-use allocations (every worker thread's
    # codec contexts and buffers, the connections' and the allocator's arenas) are in the
    # baseline; what the long run leaves above it grows with the requests served.
    for path in ARRAYS:
        stub.SetItem(pb.SetItemRequest(store=store_of(path), path=path, selection=sel(0),
                                       data=np.zeros(COLS, np.int32).tobytes()))
    run(3, 0)
    time.sleep(1.5)
    idle = rss_bytes(server.proc.pid)
    latencies.clear()

    t_start = time.time()
    run(seconds, 100_000)
    elapsed = time.time() - t_start

    lat = np.array(latencies) * 1e6
    print(f"\nload: {clients} clients, {len(lat)} requests in {elapsed:.1f} s = {len(lat) / elapsed:.0f} "
          f"requests/s; latency p50 {np.percentile(lat, 50):.0f} us, p99 {np.percentile(lat, 99):.0f} us")
    # Every acknowledged write is there.
    for path in ARRAYS:
        r = stub.GetItem(pb.GetItemRequest(store=store_of(path), path=path))
        got = np.frombuffer(r.data, "<i4").reshape(ROWS, COLS)
        for (p, row), value in acked.items():
            if p == path:
                assert (got[row] == value).all(), f"{path} row {row}: {got[row][0]}, acknowledged {value}"
    assert len(acked) > ROWS, "too few writes to mean anything"

    # Memory back to idle within 10 % once the clients are gone.
    deadline = time.time() + 15
    while True:
        now = rss_bytes(server.proc.pid)
        if near_idle(now, idle) or time.time() > deadline:
            break
        time.sleep(0.5)
    print(f"server RSS idle {idle / 2**20:.1f} MiB, after the clients left {now / 2**20:.1f} MiB")
    assert near_idle(now, idle), f"RSS {now / 2**20:.1f} MiB vs idle {idle / 2**20:.1f} MiB"

"""A long randomized model test, in the manner of a stateful property test: workers mix creates
(arrays and groups), writes, resizes, deletes and reads of a small hierarchy and check every result
against a model of numpy arrays they keep. Each worker owns a subtree, so its operations are
serial and the model exact; the workers (threads and processes, over the Unix socket and TCP)
run at once. The second mode kills zarrd with SIGKILL at random moments, restarts it, and checks
that every subtree is in a state the model allows: every acknowledged operation there, the one in
flight whole or not at all (a write chunk by chunk: old or new, never a mix), deleted nodes gone.

ZARRD_MODEL_SEED sets the seed (printed), ZARRD_MODEL_OPS the operations of each worker,
ZARRD_MODEL_KILLS the kill -9 iterations."""
import json
import multiprocessing
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

from hardening_util import SANITIZED, ZSTD, rss_bytes, v3_array

CODE = grpc.StatusCode
SEED = int(os.environ.get("ZARRD_MODEL_SEED", random.SystemRandom().randrange(1 << 32)))
OPS = int(os.environ.get("ZARRD_MODEL_OPS", "300"))
KILLS = int(os.environ.get("ZARRD_MODEL_KILLS", "8"))
RSS_BOUND = 512 << 20  # zarrd's resident memory, during and after: small arrays, a few clients
BYTES_ONLY = [{"name": "bytes", "configuration": {"endian": "little"}}]
# Names below a worker's subtree; "x/sub" and "g/x/sub" lie inside arrays when x is one.
NAMES = ["", "x", "y", "g", "g/x", "g/y", "g/h", "g/h/x", "x/sub", "g/x/sub"]


class Unsettled(Exception):
    """The server went away under a request: the operation may or may not have happened."""


def ancestors(path):
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def below(path, other):
    return other != path and other.startswith(path + "/")


class Worker:
    """One subtree, its model ({path: ("group",) | ("array", values, meta)}) and its operations."""

    def __init__(self, root, seed):
        self.root = root
        self.rng = random.Random(seed)
        self.model = {}
        self.paths = [f"{root}/{n}" if n else root for n in NAMES]
        self.ops = 0

    # --- the model's answers -------------------------------------------------------------------

    def array_above(self, path):
        return any(self.model.get(a, ("",))[0] == "array" for a in ancestors(path))

    @staticmethod
    def add_parents(model, path):
        """A create makes the missing parent groups first, as zarr-python does."""
        for a in ancestors(path):
            model.setdefault(a, ("group",))

    def expect_open(self, path):
        node = self.model.get(path)
        if node is None:
            return CODE.NOT_FOUND
        return CODE.OK if node[0] == "array" else CODE.FAILED_PRECONDITION

    # --- operations: (name, request-making and model-changing parts) --------------------------

    def random_meta(self):
        rank = self.rng.choice([1, 2])
        shape = [self.rng.randint(1, 24) for _ in range(rank)]
        chunks = [self.rng.randint(1, 8) for _ in range(rank)]
        dtype = self.rng.choice(["int32", "float64"])
        fill = self.rng.choice([0, 7])
        if self.rng.random() < 0.3:
            return {"zarr_format": 2, "shape": shape, "chunks": chunks,
                    "dtype": "<i4" if dtype == "int32" else "<f8", "order": "C",
                    "fill_value": fill, "compressor": {"id": "gzip", "level": 1}, "filters": None}
        return v3_array(shape, chunks, dtype, fill, self.rng.choice([ZSTD, BYTES_ONLY]))

    @staticmethod
    def dtype_of(meta):
        return np.dtype(meta["dtype"] if meta["zarr_format"] == 2 else
                        {"int32": "<i4", "float64": "<f8"}[meta["data_type"]])

    def chunks_of(self, meta):
        return meta["chunks"] if meta["zarr_format"] == 2 else \
            meta["chunk_grid"]["configuration"]["chunk_shape"]

    def plan(self):
        """The next operation: (kind, path, arguments, expected code, model after it)."""
        path = self.rng.choice(self.paths)
        kind = self.rng.choices(["create_array", "create_group", "write", "read", "resize",
                                 "delete"], [3, 2, 6, 5, 2, 1])[0]
        after = dict(self.model)
        node = self.model.get(path)
        if kind == "create_array":
            meta, overwrite = self.random_meta(), self.rng.random() < 0.3
            nodes_below = any(below(path, p) for p in self.model)
            if self.array_above(path):
                code = CODE.FAILED_PRECONDITION
            elif node is not None and not overwrite:
                code = CODE.ALREADY_EXISTS
            elif node is None and nodes_below:
                code = CODE.ALREADY_EXISTS
            else:
                code = CODE.OK
                for p in list(after):
                    if p == path or below(path, p):
                        del after[p]
                values = np.full(meta["shape"], meta["fill_value"], self.dtype_of(meta))
                after[path] = ("array", values, meta)
                self.add_parents(after, path)
            return kind, path, (meta, overwrite), code, after
        if kind == "create_group":
            code = (CODE.FAILED_PRECONDITION if self.array_above(path) else
                    CODE.ALREADY_EXISTS if node is not None else CODE.OK)
            if code == CODE.OK:
                after[path] = ("group",)
                self.add_parents(after, path)
            return kind, path, None, code, after
        if kind == "delete":
            doomed = [p for p in self.model if p == path or below(path, p)]
            code = CODE.OK if doomed and not self.array_above(path) else CODE.NOT_FOUND
            if code == CODE.OK:
                for p in doomed:
                    del after[p]
            return kind, path, None, code, after
        code = self.expect_open(path)
        if kind == "resize":
            if code != CODE.OK:
                return kind, path, [1], code, after
            _, values, meta = node
            shape = [max(1, s + self.rng.randint(-10, 10)) for s in values.shape]
            grown = np.full(shape, meta["fill_value"], values.dtype)
            overlap = tuple(slice(0, min(a, b)) for a, b in zip(values.shape, shape))
            grown[overlap] = values[overlap]
            after[path] = ("array", grown, meta)
            return kind, path, shape, code, after
        if code != CODE.OK:  # no array there: any selection and input are refused
            args = (slice(None),) if kind == "read" else ((slice(None),), np.zeros(1, "<i4"))
            return kind, path, args, code, after
        _, values, meta = node
        items = []  # never empty: shapes are at least 1
        for s in values.shape:
            a = self.rng.randint(0, s - 1)
            items.append(slice(a, self.rng.randint(a + 1, s + 1), self.rng.choice([1, 1, 2])))
        items = tuple(items)
        if kind == "read":
            return kind, path, items, code, after
        part = values[items]
        data = (np.arange(part.size) * 13 + self.rng.randint(0, 1000)).astype(values.dtype)
        data = data.reshape(part.shape)
        changed = values.copy()
        changed[items] = data
        after[path] = ("array", changed, meta)
        return kind, path, (items, data), code, after

    def run(self, stub, kind, path, args):
        """Sends one operation; returns (code, result of a read)."""
        try:
            if kind == "create_array":
                meta, overwrite = args
                stub.CreateNode(pb.CreateNodeRequest(store="local", path=path,
                                                     kind=pb.NODE_KIND_ARRAY, overwrite=overwrite,
                                                     metadata_json=json.dumps(meta)), timeout=30)
            elif kind == "create_group":
                stub.CreateNode(pb.CreateNodeRequest(store="local", path=path,
                                                     kind=pb.NODE_KIND_GROUP), timeout=30)
            elif kind == "delete":
                stub.DeleteNode(pb.NodeRequest(store="local", path=path), timeout=30)
            elif kind == "resize":
                stub.Resize(pb.ResizeRequest(store="local", path=path, shape=args), timeout=30)
            elif kind == "read":
                r = stub.GetItem(pb.GetItemRequest(store="local", path=path,
                                                   selection=sel(*args)), timeout=30)
                return CODE.OK, r
            else:
                items, data = args
                stub.SetItem(pb.SetItemRequest(store="local", path=path, selection=sel(*items),
                                               data=data.tobytes()), timeout=30)
        except grpc.RpcError as e:
            if e.code() in (CODE.UNAVAILABLE, CODE.DEADLINE_EXCEEDED, CODE.CANCELLED):
                raise Unsettled(f"{kind} {path}: {e.code()}") from None
            return e.code(), e.details()
        return CODE.OK, None

    def step(self, stub):
        """One operation checked against the model. Raises Unsettled with the plan attached when
        the server went away under it."""
        kind, path, args, code, after = plan = self.plan()
        try:
            got, result = self.run(stub, kind, path, args)
        except Unsettled as e:
            e.plan = plan
            raise
        where = f"{self.root} op {self.ops} {kind} {path} {args if kind != 'write' else args[0]}"
        assert got == code, f"{where}: {got} ({result}), the model says {code}"
        if kind == "read" and code == CODE.OK:
            values = self.model[path][1]
            want = values[args]
            assert result.array.data_type == {"<i4": "int32", "<f8": "float64"}[values.dtype.str]
            assert list(result.array.shape) == list(want.shape), where
            got_values = np.frombuffer(result.data, values.dtype).reshape(want.shape)
            np.testing.assert_array_equal(got_values, want, err_msg=where)
        self.model = after
        self.ops += 1

    # --- the store against the model after a crash ---------------------------------------------

    def observe(self, stub):
        """{path: node} as the server shows it now, for every name of the subtree."""
        seen = {}
        for path in self.paths:
            try:
                info = stub.GetNode(pb.NodeRequest(store="local", path=path), timeout=30)
            except grpc.RpcError as e:
                assert e.code() == CODE.NOT_FOUND, (path, e.code(), e.details())
                continue
            if info.kind == pb.NODE_KIND_GROUP:
                seen[path] = ("group",)
                continue
            meta = json.loads(info.metadata_json)
            r = stub.GetItem(pb.GetItemRequest(store="local", path=path), timeout=30)
            values = np.frombuffer(r.data, self.dtype_of(meta)).reshape(list(info.shape))
            seen[path] = ("array", values, meta)
        return seen

    def settle(self, stub, plan):
        """After a restart: the subtree must hold the model's state with the unsettled operation
        `plan` (or None) applied whole or not at all; that state becomes the model."""
        seen = self.observe(stub)
        before = self.model
        after = plan[4] if plan else before
        kind, path = (plan[0], plan[1]) if plan else (None, None)
        for p in self.paths:
            now, old, new = seen.get(p), before.get(p), after.get(p)
            allowed = [old, new]
            if kind in ("delete", "create_array") and (p == path or below(path, p)):
                allowed.append(None)  # metadata documents go first, node by node
            if kind in ("create_array", "create_group") and p in ancestors(path):
                allowed.append(None)  # parents are made after the node itself
            if any(same(now, a) for a in allowed):
                continue
            if kind == "write" and p == path and now and old and now[0] == "array":
                chunk_mix(now, old, new, self.chunks_of(old[2]), f"{self.root}: write {p}")
                continue
            raise AssertionError(f"{self.root}: {p} is {describe(now)} after the restart; "
                                 f"before {describe(old)}, after {describe(new)} ({kind} {path})")
        self.model = {p: n for p, n in seen.items()}


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if a[0] != b[0]:
        return False
    return a[0] == "group" or (a[1].dtype == b[1].dtype and a[1].shape == b[1].shape and
                               np.array_equal(a[1], b[1]))


def describe(node):
    if node is None:
        return "absent"
    return "a group" if node[0] == "group" else f"an array {node[1].dtype} {list(node[1].shape)}"


def chunk_mix(now, old, new, chunks, where):
    """Every chunk of `now` equals the same chunk of `old` or of `new`."""
    assert now[1].shape == old[1].shape == new[1].shape, where
    grid = [range(0, max(s, 1), c) for s, c in zip(now[1].shape, chunks)]
    for corner in np.array(np.meshgrid(*grid, indexing="ij")).reshape(len(chunks), -1).T:
        box = tuple(slice(a, a + c) for a, c in zip(corner, chunks))
        assert (np.array_equal(now[1][box], old[1][box]) or
                np.array_equal(now[1][box], new[1][box])), f"{where}: chunk at {corner} is torn"


def connect(address):
    # A channel of its own connections: gRPC otherwise shares subchannels between channels to one
    # address, and the first call after a restart could go to the killed zarrd's dead connection
    # ("Broken pipe", seen once under load).
    channel = grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
    return zarrd_pb2_grpc.ZarrdStub(channel)


def run_worker(address, root, seed, ops):
    """A worker's whole run (also the body of a worker process); returns how many ops it did."""
    worker = Worker(root, seed)
    stub = connect(address)
    for _ in range(ops):
        worker.step(stub)
    return worker.ops


class RssWatch:
    """The highest resident memory of a process, sampled every 50 ms."""

    def __init__(self, pid):
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self):
        while not self._stop.wait(0.05):
            try:
                self.peak = max(self.peak, rss_bytes(self.pid))
            except (OSError, RuntimeError):
                return

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.peak


def check_rss(server, peak, label):
    now = rss_bytes(server.proc.pid)
    print(f"\nmodel ({label}): zarrd RSS peak {peak >> 20} MiB, after {now >> 20} MiB "
          f"(bound {RSS_BOUND >> 20} MiB)")
    if not SANITIZED:
        assert peak < RSS_BOUND and now < RSS_BOUND, (peak, now)


def test_model_concurrent_clients(tmp_path):
    print(f"\nmodel: seed {SEED} (ZARRD_MODEL_SEED), {OPS} operations a worker")
    server = Server(tmp_path, {"log_level": "info"})
    watch = RssWatch(server.proc.pid)
    addresses = [server.unix, server.tcp]
    rng = random.Random(SEED)
    seeds = [rng.randrange(1 << 32) for _ in range(6)]
    errors, counts = [], []

    def thread_body(i):
        try:
            counts.append(run_worker(addresses[i % 2], f"t{i}", seeds[i], OPS))
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=thread_body, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        done = pool.starmap(run_worker, [(addresses[i % 2], f"p{i}", seeds[4 + i], OPS)
                                         for i in range(2)])
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    counts += done
    assert sum(counts) == 6 * OPS
    check_rss(server, watch.stop(), "concurrent")
    assert server.stop() == 0, server.exit_report()
    print(f"model: {sum(counts)} operations checked, seed {SEED}")


def test_model_kill_9(tmp_path):
    print(f"\nmodel kill -9: seed {SEED} (ZARRD_MODEL_SEED), {KILLS} kills")
    rng = random.Random(SEED ^ 0x9E3779B9)
    workers = [Worker(f"k{i}", rng.randrange(1 << 32)) for i in range(4)]
    server = Server(tmp_path, {"log_level": "info"})
    peak, unsettled_total = 0, 0
    for iteration in range(KILLS):
        watch = RssWatch(server.proc.pid)
        unsettled = [None] * len(workers)
        failures = []
        stop = threading.Event()

        def body(i, address):
            stub = connect(address)
            try:
                while not stop.is_set():
                    workers[i].step(stub)
            except Unsettled as e:
                unsettled[i] = e.plan
            except BaseException as e:
                failures.append(e)

        threads = [threading.Thread(target=body, args=(i, [server.unix, server.tcp][i % 2]))
                   for i in range(len(workers))]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.2, 1.5))
        peak = max(peak, watch.stop())
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait()
        stop.set()
        for t in threads:
            t.join()
        if failures:
            raise failures[0]
        server = Server(tmp_path, {"log_level": "info"})
        stub = connect(server.unix)
        for worker, plan in zip(workers, unsettled):
            worker.settle(stub, plan)
        unsettled_total += sum(p is not None for p in unsettled)
    check_rss(server, peak, "kill -9")
    assert server.stop() == 0, server.exit_report()
    print(f"model kill -9: {KILLS} kills, {sum(w.ops for w in workers)} operations acknowledged, "
          f"{unsettled_total} unsettled ones checked whole or absent, seed {SEED}")

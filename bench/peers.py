"""The peer figures of bench/run, measured with tensorstore (and CuPy) on the suite's arrays.
Prints one JSON object (seconds are the best of --repeat runs):

    python3 bench/peers.py DIR [--repeat 3]
"""
import argparse
import json
import random
import shutil
import time
from pathlib import Path

import numpy as np
import tensorstore as ts

parser = argparse.ArgumentParser()
parser.add_argument("dir")
parser.add_argument("--repeat", type=int, default=3)
args = parser.parse_args()
root = Path(args.dir)


def open_array(name, **extra):
    driver = "zarr" if (root / name / ".zarray").exists() else "zarr3"
    return ts.open({"driver": driver, "kvstore": {"driver": "file", "path": str(root / name)},
                    **extra}).result()


def fresh_like_r1(name):
    """An empty array with R1's metadata at DIR/name (replacing what is there)."""
    meta = json.loads((root / "r1" / "zarr.json").read_text())
    target = root / name
    shutil.rmtree(target, ignore_errors=True)
    keys = ("shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs")
    return ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(target)},
                    "metadata": {k: meta[k] for k in keys}}, create=True).result()


def best(f, repeat=args.repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


out = {}
r1 = open_array("r1")
host = None


def read_r1():
    global host
    host = r1.read().result()


out["r1_host_read_s"] = best(read_r1)
out["r1_sample_sum"] = float(host[::1024, ::1024].astype(np.float64).sum())

try:
    import cupy as cp

    for name in ("r1", "r2", "r3", "r4", "r5"):
        a = open_array(name)

        def read_upload():
            d = cp.asarray(a.read().result())
            cp.cuda.Device().synchronize()
            return d

        out[f"{name}_gpu_s"] = best(read_upload)
    # Full write from the GPU: CuPy download, then a tensorstore write.
    device = cp.asarray(host)
    out["gpu_write_s"] = best(lambda: fresh_like_r1("peer_write_gpu").write(cp.asnumpy(device)).result())
    del device
except ImportError as e:
    out["gpu_error"] = str(e)

# Full write from the host.
out["r1_host_write_s"] = best(lambda: fresh_like_r1("peer_write").write(host).result())
shutil.rmtree(root / "peer_write", ignore_errors=True)
shutil.rmtree(root / "peer_write_gpu", ignore_errors=True)

# One 512 x 512 chunk of R1, at random, without a cache (a fresh read each time).
rng = random.Random(1)
lat = []
for i in range(600):
    r, c = rng.randrange(32) * 512, rng.randrange(32) * 512
    t0 = time.perf_counter()
    r1[r:r + 512, c:c + 512].read().result()
    if i >= 100:
        lat.append(time.perf_counter() - t0)
out["chunk_p50_us"] = float(np.percentile(lat, 50) * 1e6)
out["chunk_p99_us"] = float(np.percentile(lat, 99) * 1e6)
print(json.dumps(out))

"""The peer of bench/device_read: tensorstore reads a Zarr v3 array in-process, then CuPy copies
it to the GPU. Prints one JSON line: the best of --repeat runs, in seconds."""
import argparse
import json
import time

import cupy as cp
import tensorstore as ts

parser = argparse.ArgumentParser()
parser.add_argument("path")
parser.add_argument("--repeat", type=int, default=3)
args = parser.parse_args()
array = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": args.path}}).result()
best_read = best_total = float("inf")
checksum = None
for _ in range(args.repeat):
    t0 = time.perf_counter()
    host = array.read().result()
    t1 = time.perf_counter()
    device = cp.asarray(host)
    cp.cuda.Device().synchronize()
    t2 = time.perf_counter()
    best_read, best_total = min(best_read, t1 - t0), min(best_total, t2 - t0)
    checksum = float(device[::1024, ::1024].sum())
    del host, device
print(json.dumps({"read_s": best_read, "read_upload_s": best_total, "nbytes": array.dtype.numpy_dtype.itemsize * array.size,
                  "sample_sum": checksum}))

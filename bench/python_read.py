"""python_read: the 1 GiB reference array (written by bench/device_read or engine_read into
--dir/r1) read through the Python client, HOST and DEVICE, beside the C++ client doing the same
from a long-lived process (tests/device_probe.cc) and tensorstore's own Python read, all in one
run against one zarrd.

    python3 bench/python_read.py --zarrd "CMD" --probe "CMD" --dir DIR [--repeat R]

HOST reads are given with each client's default transport (over the Unix socket: bands through
shared-memory scratch regions) and through the bytes transport, the Python client's also by its
number of streams (Client.read_streams).
Rates are array bytes over the best of R steady-state reads (the first read is a warm-up)."""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "client" / "python"))
import zarrd  # noqa: E402
from zarrd import host_region  # noqa: E402


def best(repeat, fn):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--zarrd", required=True)
    p.add_argument("--probe", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    root = Path(args.dir).resolve()
    work = Path(tempfile.mkdtemp(prefix="zarrd-pyread-"))
    socket = work / "zarrd.sock"
    (work / "zarrd.json").write_text(json.dumps({
        "stores": [{"name": "bench", "root": str(root)}], "listen": [f"unix:{socket}"], "metrics_listen": "",
        "log_level": "warn"}))
    server = subprocess.Popen([*shlex.split(args.zarrd), "--config", str(work / "zarrd.json")])
    try:
        client = zarrd.connect(f"unix:{socket}", timeout=30)
        a = client.open_array("bench", "r1")
        nbytes = a.nbytes
        rate = lambda s: nbytes / s / 1e9  # noqa: E731
        py_shm = rate(best(args.repeat, lambda: a.get(prototype="host")))
        defaults = (host_region.BANDS_IN_FLIGHT, host_region.BAND_BYTES)
        by_bands = {}
        for in_flight, band_mib in [(8, 32), (4, 64), (8, 16), (2, 32)]:
            host_region.BANDS_IN_FLIGHT, host_region.BAND_BYTES = in_flight, band_mib << 20
            by_bands[in_flight, band_mib] = rate(best(args.repeat, lambda: a.get(prototype="host")))
        host_region.BANDS_IN_FLIGHT, host_region.BAND_BYTES = defaults
        default_streams = client.read_streams
        client.host_regions.enabled = False  # the bytes transport
        by_streams = {}
        for streams in sorted({1, 2, 4, 8, default_streams}):
            client.read_streams = streams
            by_streams[streams] = rate(best(args.repeat, lambda: a.get(prototype="host")))
        client.read_streams = default_streams
        client.host_regions.enabled = True
        py_host = by_streams[default_streams]
        probe = subprocess.Popen([*shlex.split(args.probe), f"unix:{socket}"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)

        def ask(line):
            probe.stdin.write(line + "\n")
            probe.stdin.flush()
            answer = json.loads(probe.stdout.readline())
            assert "error" not in answer, answer
        cpp_shm = rate(best(args.repeat, lambda: ask("host bench r1")))
        cpp_host = rate(best(args.repeat, lambda: ask("host-bytes bench r1")))
        rows = [("Python client HOST (shared-memory bands)", py_shm, f"{100 * py_shm / cpp_shm:.0f}% of the C++ client [target >= 90%]"),
                ("C++ client HOST (shared-memory bands)", cpp_shm, ""),
                *[(f"  Python, {n} bands of {mib} MiB in flight", r, f"{100 * r / cpp_shm:.0f}% of the C++ client")
                  for (n, mib), r in by_bands.items()],
                ("Python client HOST (bytes transport)", py_host, f"{100 * py_host / cpp_host:.0f}% of the C++ client"),
                ("C++ client HOST (bytes transport)", cpp_host, "")]
        rows += [(f"  Python client HOST, {n} stream(s)", r, f"{100 * r / cpp_host:.0f}% of the C++ client")
                 for n, r in by_streams.items()]
        try:
            import cupy as cp

            def py_device():
                x = a.get(prototype="device")
                cp.cuda.get_current_stream().synchronize()
                del x
            py_dev = rate(best(args.repeat, py_device))
            cpp_dev = rate(best(args.repeat, lambda: ask("get bench r1")))
            rows += [("Python client DEVICE (CuPy result)", py_dev, f"{100 * py_dev / cpp_dev:.0f}% of the C++ client [target >= 90%]"),
                     ("C++ client DEVICE (+ GPU checksum)", cpp_dev, "")]
        except ImportError:
            rows.append(("Python client DEVICE", 0.0, "skipped: no CuPy"))
        probe.stdin.close()
        probe.wait(timeout=30)
        try:
            import tensorstore as ts
            t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(root / "r1")}}).result()
            rows.append(("tensorstore Python read, in-process", rate(best(args.repeat, lambda: t.read().result())), ""))
        except ImportError:
            rows.append(("tensorstore Python read", 0.0, "skipped: no tensorstore"))
        print(f"python_read: {a.shape} {a.dtype} ({nbytes / 2**30:.2f} GiB), best of {args.repeat}, {os.cpu_count()} cores")
        for name, gbs, note in rows:
            print(f"{name:<40} {gbs:8.2f} GB/s  {note}")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()

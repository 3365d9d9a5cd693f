"""python_read: the 1 GiB reference array (written by bench/device_read or engine_read into
--dir/r1) read through the Python client, HOST and DEVICE, beside the C++ client doing the same
from a long-lived process (tests/device_probe.cc) and tensorstore's own Python read, all in one
run against one zarrd.

    python3 bench/python_read.py --zarrd "CMD" --probe "CMD" --dir DIR [--repeat R]

The Python client's HOST read is also given by its number of streams (Client.read_streams).
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
        default_streams = client.read_streams
        by_streams = {}
        for streams in sorted({1, 2, 4, 8, default_streams}):
            client.read_streams = streams
            by_streams[streams] = rate(best(args.repeat, lambda: a.get(prototype="host")))
        client.read_streams = default_streams
        py_host = by_streams[default_streams]
        probe = subprocess.Popen([*shlex.split(args.probe), f"unix:{socket}"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)

        def ask(line):
            probe.stdin.write(line + "\n")
            probe.stdin.flush()
            answer = json.loads(probe.stdout.readline())
            assert "error" not in answer, answer
        cpp_host = rate(best(args.repeat, lambda: ask("host bench r1")))
        rows = [("Python client HOST (bytes transport)", py_host, f"{100 * py_host / cpp_host:.0f}% of the C++ client [target >= 90%]"),
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

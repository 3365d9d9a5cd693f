"""python_host_sizes: the Python client's HOST reads of 1 to 64 MiB parts of the reference array
(--dir/r1, written by engine_read or serve_read) over a Unix socket, through its shared-memory
scratch regions beside protobuf bytes, in one run against one zarrd. Values of both are compared.

    /usr/bin/python3 bench/python_host_sizes.py --zarrd build/server/zarrd --dir DIR [--repeat R]

Times are the best of R reads (after one warm-up read)."""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "client" / "python"))
import zarrd  # noqa: E402

SIZES = [("1 MiB", np.s_[0:512, 0:512]), ("4 MiB", np.s_[0:512, 0:2048]),
         ("16 MiB", np.s_[0:1024, 0:4096]), ("64 MiB", np.s_[0:1024, :])]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--zarrd", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--repeat", type=int, default=10)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        socket = Path(tmp) / "zarrd.sock"
        config = Path(tmp) / "zarrd.json"
        config.write_text(json.dumps({
            "stores": [{"name": "bench", "root": str(Path(args.dir).resolve())}],
            "listen": [f"unix:{socket}"], "metrics_listen": "", "log_level": "warn"}))
        server = subprocess.Popen([args.zarrd, "--config", str(config)])
        try:
            client = zarrd.Client(f"unix:{socket}", timeout=30)
            a = client.open_array("bench", "r1")
            print(f"python_host_sizes: best of {args.repeat} reads of parts of r1, "
                  "protobuf bytes vs shared memory")
            for label, key in SIZES:
                seconds, results = {}, {}
                for mode in ("bytes", "shared memory"):
                    client.host_regions.enabled = mode == "shared memory"
                    results[mode] = a.get(key)
                    times = []
                    for _ in range(args.repeat):
                        t0 = time.perf_counter()
                        a.get(key)
                        times.append(time.perf_counter() - t0)
                    seconds[mode] = min(times)
                if not np.array_equal(results["bytes"], results["shared memory"]):
                    sys.exit(f"{label}: the two transports gave different values")
                b, s = seconds["bytes"], seconds["shared memory"]
                print(f"  {label:>7}: bytes {b * 1e3:7.1f} ms, shared memory {s * 1e3:7.1f} ms "
                      f"({b / s:.1f}x)")
            client.close()
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()

"""Writes the suite's reference arrays with tensorstore (a peer), so zarrd reads a peer's files:
R1 16384 x 16384 float32, chunks 512 x 512, bytes + zstd level 3, values a smooth field plus
noise rounded to 0.01; R2 the same values uncompressed; R3 R1 sharded (shards 4096 x 4096 of
512 x 512 inner chunks); R4 the same values in zarr 2's default encoding (v2, blosc lz4 clevel 5
+ byte shuffle), written by tensorstore's zarr v2 driver; R5 v3 with gzip level 5. Arrays
already there are kept.

    python3 bench/make_reference.py DIR
"""
import json
import sys
import time
from pathlib import Path

import numpy as np
import tensorstore as ts

N, CHUNK, SHARD = 16384, 512, 4096
BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
LAYOUTS = {
    "r1": [BYTES, ZSTD],
    "r2": [BYTES],
    "r3": [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [CHUNK, CHUNK], "codecs": [BYTES, ZSTD],
        "index_codecs": [BYTES, {"name": "crc32c"}], "index_location": "end"}}],
    "r4": "v2 blosc",
    "r5": [BYTES, {"name": "gzip", "configuration": {"level": 5}}],
}


def values():
    rng = np.random.default_rng(20261202)
    y = np.linspace(0, 8 * np.pi, N, dtype=np.float64)[:, None]
    x = np.linspace(0, 6 * np.pi, N, dtype=np.float64)[None, :]
    out = np.empty((N, N), np.float32)
    for r in range(0, N, 1024):  # in bands, to bound the float64 temporaries
        field = 100 * np.sin(y[r:r + 1024] / 3) * np.cos(x / 2) + 20 * np.cos(y[r:r + 1024] + x / 5)
        out[r:r + 1024] = np.round(field + rng.normal(0, 0.5, field.shape), 2)
    return out


def spec(path, codecs):
    if codecs == "v2 blosc":
        return {"driver": "zarr", "kvstore": {"driver": "file", "path": str(path)},
                "metadata": {"shape": [N, N], "chunks": [CHUNK, CHUNK], "dtype": "<f4",
                             "fill_value": 0, "order": "C", "filters": None,
                             "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5,
                                            "shuffle": 1, "blocksize": 0}}}
    chunk = [SHARD, SHARD] if codecs[0]["name"] == "sharding_indexed" else [CHUNK, CHUNK]
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)},
            "metadata": {"shape": [N, N], "data_type": "float32",
                         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunk}},
                         "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
                         "codecs": codecs}}


def main():
    root = Path(sys.argv[1])
    root.mkdir(parents=True, exist_ok=True)
    data = None
    for name, codecs in LAYOUTS.items():
        if (root / name / "zarr.json").exists() or (root / name / ".zarray").exists():
            print(f"{name}: already written")
            continue
        if data is None:
            data = values()
        t0 = time.perf_counter()
        array = ts.open(spec(root / name, codecs), create=True, delete_existing=True).result()
        array.write(data).result()
        print(f"{name}: written by tensorstore in {time.perf_counter() - t0:.1f} s")
    (root / "reference.json").write_text(json.dumps({"shape": [N, N], "chunk": CHUNK, "shard": SHARD}))


if __name__ == "__main__":
    main()

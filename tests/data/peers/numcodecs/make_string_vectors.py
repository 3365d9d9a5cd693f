"""Writes the numcodecs string vectors beside this file (vlen-utf8, vlen-bytes, categorize):
`cd /tmp && /usr/bin/python3 <this file>` with Debian's python3-numcodecs 0.11 and numpy 1.24.
Object arrays do not load outside Python from .npy, so inputs are JSON: <id>/input.NN.json, a
list of strings (vlen-bytes: each as a list of byte values), C order. <id>/encoded.NN.dat is
numcodecs' encode of input NN. Categorize has codec.MM/config.json and, per input NN,
codec.MM/encoded.NN.dat (the encoded integers' bytes) and codec.MM/decoded.NN.json (numcodecs'
decode of them: strings not among the labels come back empty)."""
import json
import pathlib
import shutil

import numcodecs
import numpy as np

ROOT = pathlib.Path(__file__).parent

TEXT = [
    ["a", "bb", "", "ccc"],
    ["héllo", "wörld", "€", "😀 emoji", "", "x" * 300, "tab\tnew\nline", "nul\0inside"],
    [],
    [str(i) * (i % 7) for i in range(50)],
]
BYTES = [
    [b"a", b"\x00\xff", b"", b"bytes"],
    [bytes(range(256)), b"\x00" * 5, b"z"],
]
CATEGORIES = [
    ["a", "bb", "a", "zz", "", "bb", "a"],
    ["ü", "x", "ü", "y", "x", "ü"],
]
CATEGORIZE = [
    dict(labels=["a", "bb"], dtype="<U2", astype="|u1"),
    dict(labels=["a", "bb", ""], dtype="|O", astype="|u1"),
    dict(labels=["ü", "x", "y"], dtype="<U1", astype="<u2"),
    dict(labels=["x", "ü"], dtype="|O", astype="<i4"),
]


def fresh(name):
    d = ROOT / name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir()
    return d


def main():
    for codec_id, codec, inputs in (("vlen-utf8", numcodecs.VLenUTF8(), TEXT),
                                    ("vlen-bytes", numcodecs.VLenBytes(), BYTES)):
        d = fresh(codec_id)
        for n, items in enumerate(inputs):
            arr = np.empty(len(items), object)
            arr[:] = items
            as_json = items if codec_id == "vlen-utf8" else [list(b) for b in items]
            (d / f"input.{n:02d}.json").write_text(json.dumps(as_json, ensure_ascii=False) + "\n")
            (d / f"encoded.{n:02d}.dat").write_bytes(bytes(codec.encode(arr)))
    d = fresh("categorize")
    for n, items in enumerate(CATEGORIES):
        (d / f"input.{n:02d}.json").write_text(json.dumps(items, ensure_ascii=False) + "\n")
    for m, config in enumerate(CATEGORIZE):
        codec = numcodecs.Categorize(**config)
        c = d / f"codec.{m:02d}"
        c.mkdir()
        (c / "config.json").write_text(json.dumps(codec.get_config(), ensure_ascii=False) + "\n")
        for n, items in enumerate(CATEGORIES):
            arr = np.array(items, dtype=object if config["dtype"] == "|O" else config["dtype"])
            if config["dtype"] != "|O" and any(len(s) > arr.dtype.itemsize // 4 for s in items):
                continue  # the input does not fit the fixed length
            encoded = codec.encode(arr)
            (c / f"encoded.{n:02d}.dat").write_bytes(np.ascontiguousarray(encoded).tobytes())
            decoded = codec.decode(encoded)
            (c / f"decoded.{n:02d}.json").write_text(
                json.dumps([str(x) for x in decoded], ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()

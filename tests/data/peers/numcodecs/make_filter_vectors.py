"""Writes the numcodecs filter vectors beside this file (delta, fixedscaleoffset, quantize,
bitround, astype, shuffle): `cd /tmp && /usr/bin/python3 <this file>` with Debian's
python3-numcodecs 0.11 and numpy 1.24. Layout as for the compressors: array.NN.npy inputs,
codec.MM/config.json, codec.MM/encoded.NN.dat (numcodecs' encode of array NN), and, because
these filters may be lossy, codec.MM/decoded.NN.dat (numcodecs' decode of those encoded bytes).
A codec.MM has files only for the arrays whose dtype its configuration names."""
import json
import pathlib
import shutil

import numcodecs
import numpy as np

ROOT = pathlib.Path(__file__).parent
rng = np.random.default_rng(22)


def ints(dtype, n=40):
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
    a[:4] = [info.min, info.max, 0, info.max]  # wraps in delta
    return a


def floats(dtype, scale=1000.0, n=40, special=True):
    a = (rng.standard_normal(n) * scale).astype(dtype)
    if special:
        a[3], a[5], a[6], a[7] = np.nan, np.inf, -np.inf, -0.0
    a[8] = 2.5  # a tie for the rounding filters
    return a


def ramp(dtype, start, step, n=40):
    return (start + step * np.arange(n)).astype(dtype)


ARRAYS = {
    "delta": [ints(t) for t in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8")]
    + [floats(t) for t in ("f2", "f4", "f8")] + [ramp("i4", 100, 3), ramp("f8", 1000, 0.25)],
    "fixedscaleoffset": [ramp("f4", 1000, 0.123), ramp("f8", -50, 1.37), ramp("i4", 7, 13),
                         ramp("i2", -30, 3), floats("f8", special=True)],
    "quantize": [floats("f4"), floats("f8"), floats("f8", scale=0.01, special=False),
                 floats("f2", scale=10)],
    "bitround": [floats("f2", scale=10), floats("f4"), floats("f8")],
    "astype": [ints("i4"), ramp("f8", -100.7, 3.31), floats("f8"), ints("i2"), ramp("u1", 0, 5)],
    "shuffle": [np.arange(48, dtype="u1") * 5, rng.integers(0, 255, 96, dtype="u1")],
}

CODECS = {
    "delta": [dict(dtype=t) for t in
              ("<i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8")]
    + [dict(dtype="<i1", astype="<i2"), dict(dtype="<i4", astype="<i2"),
       dict(dtype="<i4", astype="<i8"), dict(dtype="<f8", astype="<f4"),
       dict(dtype="<f4", astype="<f8"), dict(dtype="<u2", astype="<i4")],
    "fixedscaleoffset": [
        dict(offset=1000, scale=10, dtype="<f4", astype="<i2"),
        dict(offset=1000, scale=10, dtype="<f4"),
        dict(offset=-50, scale=2.5, dtype="<f8", astype="<u2"),
        dict(offset=0.5, scale=3.5, dtype="<f8", astype="<f4"),
        dict(offset=5, scale=2, dtype="<i4"),
        dict(offset=1.5, scale=10, dtype="<i4", astype="<i8"),
        dict(offset=-30, scale=4, dtype="<i2", astype="|u1"),
        dict(offset=100, scale=0.5, dtype="<f8"),
    ],
    "quantize": [dict(digits=d, dtype=t) for t in ("<f4", "<f8", "<f2") for d in (0, 1, 3, 5)]
    + [dict(digits=2, dtype="<f8", astype="<f4"), dict(digits=4, dtype="<f4", astype="<f8")],
    "bitround": [dict(keepbits=k) for k in (0, 3, 7, 10, 23, 52)],
    "astype": [dict(encode_dtype=e, decode_dtype=d) for e, d in
               (("<i2", "<i4"), ("<i8", "<i4"), ("<f4", "<i4"), ("<f4", "<f8"), ("<i4", "<f8"),
                ("<f2", "<f8"), ("<u2", "<i2"), ("<f8", "|u1"), ("|u1", "|u1"))],
    "shuffle": [dict(elementsize=e) for e in (0, 1, 2, 3, 4, 8)],
}


def fits(codec_id, config, array):
    dtype = config.get("dtype", config.get("decode_dtype"))
    if dtype is not None:
        return np.dtype(dtype) == array.dtype
    if codec_id == "bitround":
        bits = {2: 10, 4: 23, 8: 52}[array.dtype.itemsize]
        return config["keepbits"] <= bits
    return True


def main():
    for codec_id, arrays in ARRAYS.items():
        folder = ROOT / codec_id
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        for n, array in enumerate(arrays):
            np.save(folder / f"array.{n:02d}.npy", array)
        for m, config in enumerate(CODECS[codec_id]):
            config = dict(id=codec_id, **config)
            codec = numcodecs.get_codec(config)
            sub = folder / f"codec.{m:02d}"
            sub.mkdir()
            (sub / "config.json").write_text(json.dumps(codec.get_config(), sort_keys=True) + "\n")
            for n, array in enumerate(arrays):
                if not fits(codec_id, config, array):
                    continue
                with np.errstate(all="ignore"):
                    encoded = np.ascontiguousarray(codec.encode(array.copy()))
                    decoded = np.ascontiguousarray(codec.decode(encoded.copy()))
                (sub / f"encoded.{n:02d}.dat").write_bytes(encoded.tobytes())
                (sub / f"decoded.{n:02d}.dat").write_bytes(decoded.tobytes())


if __name__ == "__main__":
    main()

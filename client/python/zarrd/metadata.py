"""Array metadata documents from zarr-python-like keywords."""
import base64
import copy
import math

import numpy as np

from zarrd.strings import vlen_kind

# The compressors by name, as zarr-python writes them by default: v3 zstd at level 0 without
# checksum (zarr-python 3's default); v2 numcodecs' configurations, zstd at zarr-python 3's level
# 0. zarrctl create --codec uses the same table (client/zarrctl.cc).
_V2_COMPRESSOR = {"zstd": {"id": "zstd", "level": 0}, "gzip": {"id": "gzip", "level": 1},
                  "zlib": {"id": "zlib", "level": 1},
                  "blosc": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}}
_V3_COMPRESSOR = {"zstd": {"name": "zstd", "configuration": {"level": 0, "checksum": False}},
                  "gzip": {"name": "gzip", "configuration": {"level": 1}},
                  "blosc": {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                               "shuffle": "shuffle", "blocksize": 0}}}


def guess_chunks(shape, itemsize):
    """zarr-python's chunk shape for `chunks=None`: halves the dimensions in turn, from the first,
    until a chunk is within half of a target size that grows with the array's (PyTables' rule,
    between 128 KiB and 64 MiB)."""
    base, least, most = 256 * 1024, 128 * 1024, 64 * 1024 * 1024
    chunks = [max(float(s), 1.0) for s in shape]
    if not chunks:
        return []
    target = base * 2 ** math.log10(math.prod(chunks) * itemsize / (1024.0 * 1024))
    target = min(max(target, least), most)
    axis = 0
    while True:
        nbytes = math.prod(chunks) * itemsize
        if (nbytes < target or abs(nbytes - target) / target < 0.5) and nbytes < most:
            break
        if math.prod(chunks) == 1:
            break
        chunks[axis % len(chunks)] = math.ceil(chunks[axis % len(chunks)] / 2.0)
        axis += 1
    return [int(c) for c in chunks]


def json_fill_value(value, dtype):
    if value is None:
        return None
    if dtype.kind == "c":
        c = complex(value)
        return [json_fill_value(c.real, np.dtype("f8")), json_fill_value(c.imag, np.dtype("f8"))]
    if dtype.kind == "f":
        v = float(value)
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if dtype.kind == "b":
        return bool(value)
    if dtype.kind in "mM":  # int64 counts of the unit; NaT is the smallest int64, as zarr writes it
        return int(np.array(value, dtype.newbyteorder("<")).view("<i8"))
    if dtype.kind == "U":
        return "" if isinstance(value, int) and value == 0 else str(value)
    if dtype.kind == "S":  # base64, as zarr 2 writes it
        return base64.b64encode(b"" if isinstance(value, int) and value == 0 else bytes(value)).decode()
    return int(value)


def _sharded(inner, chunks, shards):
    """The codecs and chunk grid of inner chunks `chunks` with `codecs` inner, in shards of
    `shards` when given (the index as zarr-python writes it: bytes + crc32c, at the end)."""
    if shards is None:
        return inner, chunks
    return [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": chunks, "codecs": inner,
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "crc32c"}]}}], [int(s) for s in shards]


def _vlen_metadata(kind, shape, chunks, fill_value, compressors, shards, dimension_names,
                   attributes, zarr_format, order, filters):
    """Variable-length strings as zarr-python writes them: v3 data_type "string" (or "bytes")
    with the vlen-utf8 (vlen-bytes) codec, v2 "|O" with that object codec first in filters."""
    codec = "vlen-utf8" if kind == "string" else "vlen-bytes"
    shape = [int(s) for s in shape]
    if chunks is None:
        chunks = guess_chunks(shape, 16)
    elif isinstance(chunks, int):
        chunks = [chunks] * len(shape)
    chunks = [int(c) for c in chunks]
    if fill_value is None or (isinstance(fill_value, int) and fill_value == 0):
        fill_value = ""
    if kind == "bytes":
        fill = base64.b64encode(fill_value.encode() if isinstance(fill_value, str) else bytes(fill_value)).decode()
    else:
        fill = fill_value.decode() if isinstance(fill_value, bytes) else str(fill_value)
    attributes = dict(attributes or {})
    if zarr_format == 2:
        if shards is not None:
            raise ValueError("zarr_format 2 has no shards")
        comp = _compressors(compressors, _V2_COMPRESSOR, 1)
        if len(comp) > 1:
            raise ValueError("zarr_format 2 takes one compressor")
        if dimension_names is not None:
            attributes["_ARRAY_DIMENSIONS"] = list(dimension_names)
        return {"zarr_format": 2, "shape": shape, "chunks": chunks, "dtype": "|O",
                "compressor": comp[0] if comp else None, "fill_value": fill, "order": order,
                "filters": [{"id": codec}] + [_numcodecs_config(f) for f in filters or ()]}, attributes
    if filters:
        raise ValueError("filters: zarrd writes v3 string arrays without filters")
    inner = [{"name": codec, "configuration": {}}] + _compressors(compressors, _V3_COMPRESSOR, 1)
    if order == "F":
        inner.insert(0, {"name": "transpose", "configuration": {"order": list(range(len(shape)))[::-1]}})
    codecs, chunks = _sharded(inner, chunks, shards)
    meta = {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": kind,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill, "codecs": codecs, "attributes": attributes}
    if dimension_names is not None:
        meta["dimension_names"] = list(dimension_names)
    return meta, None


def v3_data_type(dtype):
    """The v3 data_type of a numpy dtype: its name, or zarr-python 3's datetime64/timedelta64
    form with the unit and its multiplier."""
    if dtype.kind in "mM":
        unit, count = np.datetime_data(dtype)
        return {"name": "numpy.datetime64" if dtype.kind == "M" else "numpy.timedelta64",
                "configuration": {"unit": unit, "scale_factor": count}}
    return dtype.name


def _compressors(compressors, table, itemsize):
    if compressors == "default":
        compressors = "zstd"
    if compressors is None or compressors == "none":
        return []
    if isinstance(compressors, (str, dict)):
        compressors = [compressors]
    out = [copy.deepcopy(table[c]) if isinstance(c, str) else c for c in compressors]
    for c in out:
        if c.get("name") == "blosc":  # v3 blosc names the item size its shuffle works on
            c["configuration"].setdefault("typesize", itemsize)
    return out


# numcodecs' filters that work on bytes (v3 places them after the bytes codec); the others work
# on arrays.
_BYTES_FILTERS = {"shuffle"}


def _numcodecs_config(f):
    """A filter as numcodecs' JSON: a dict with "id", or a numcodecs codec (its get_config())."""
    config = f.get_config() if hasattr(f, "get_config") else dict(f)
    if "id" not in config:
        raise ValueError(f"filters: {config!r} has no numcodecs \"id\"")
    return config


def _v3_filter(f):
    """A filter as a v3 codec: a {"name", "configuration"} dict as given, or numcodecs' JSON
    under its "numcodecs.<id>" name, as zarr-python 3 writes it."""
    if isinstance(f, dict) and "name" in f:
        return f
    config = _numcodecs_config(f)
    return {"name": "numcodecs." + config.pop("id"), "configuration": config}


def array_metadata(shape, dtype, chunks=None, fill_value=0, codecs=None, compressors="default",
                   shards=None, dimension_names=None, attributes=None, zarr_format=3, order="C",
                   filters=None):
    """Returns (metadata document, v2 attributes or None). `filters`: numcodecs filters (dicts
    such as {"id": "delta", "dtype": "<i4"}, or numcodecs codecs), applied in order before the
    compressors, as zarr-python's `filters`."""
    vlen = vlen_kind(dtype)
    if vlen is None and np.dtype(dtype).kind in "SU" and zarr_format == 3:
        # zarrd writes no v3 fixed-length string type: as zarr-python 3.0, they are "string".
        vlen = "string" if np.dtype(dtype).kind == "U" else "bytes"
    if vlen is not None:
        return _vlen_metadata(vlen, shape, chunks, fill_value, compressors, shards,
                              dimension_names, attributes, zarr_format, order, filters)
    dtype = np.dtype(dtype)
    shape = [int(s) for s in shape]
    if chunks is None:
        chunks = guess_chunks(shape, dtype.itemsize)
    elif isinstance(chunks, int):  # one length for every dimension, as zarr-python takes it
        chunks = [chunks] * len(shape)
    chunks = [int(c) for c in chunks]
    attributes = dict(attributes or {})
    if zarr_format == 2:
        if shards is not None or codecs is not None:
            raise ValueError("zarr_format 2 has no shards or v3 codecs; use compressors")
        comp = _compressors(compressors, _V2_COMPRESSOR, dtype.itemsize)
        if len(comp) > 1:
            raise ValueError("zarr_format 2 takes one compressor")
        if dimension_names is not None:
            attributes["_ARRAY_DIMENSIONS"] = list(dimension_names)
        meta = {"zarr_format": 2, "shape": shape, "chunks": chunks,
                "dtype": dtype.newbyteorder("<").str if dtype.itemsize > 1 else dtype.str,
                "compressor": comp[0] if comp else None, "fill_value": json_fill_value(fill_value, dtype),
                "order": order,
                "filters": [_numcodecs_config(f) for f in filters] if filters else None}
        return meta, attributes
    if filters and codecs is not None:
        raise ValueError("give either v3 codecs or filters, not both")
    if codecs is None:
        v3_filters = [_v3_filter(f) for f in filters or ()]
        array_filters = [f for f in v3_filters
                         if f["name"].removeprefix("numcodecs.") not in _BYTES_FILTERS]
        inner = array_filters + [{"name": "bytes", "configuration": {"endian": "little"}}] + \
            [f for f in v3_filters if f not in array_filters] + \
            _compressors(compressors, _V3_COMPRESSOR, dtype.itemsize)
        if order == "F":
            inner.insert(0, {"name": "transpose", "configuration": {"order": list(range(len(shape)))[::-1]}})
        codecs, chunks = _sharded(inner, chunks, shards)
    meta = {"zarr_format": 3, "node_type": "array", "shape": shape,
            "data_type": v3_data_type(dtype),
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": json_fill_value(fill_value, dtype), "codecs": codecs,
            "attributes": attributes}
    if dimension_names is not None:
        meta["dimension_names"] = list(dimension_names)
    return meta, None

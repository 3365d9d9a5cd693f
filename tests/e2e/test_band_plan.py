"""The band planner: tests/data/band_plan_cases.json holds cases and the bands expected of them;
common/index/band_plan_test.cc holds PlanBands to the same bands, this file the Python port
(zarrd/stream.py's plan_bands), and both check the expected bands against the rule by brute
force. `python3 tests/e2e/test_band_plan.py` writes the file again from the Python port."""
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[2] / "client" / "python"))
from zarrd.stream import key_bands, plan_bands, resolve_key  # noqa: E402

CASES = Path(__file__).parents[1] / "data" / "band_plan_cases.json"


def key_of(case):
    """The case's full key: its selection, then whole dimensions."""
    key = tuple(s if isinstance(s, int) else slice(*s) for s in case["selection"])
    return key + (slice(None),) * (len(case["shape"]) - len(key))


def plan(case):
    return [[dims[case["axis"]].start, dims[case["axis"]].count, offset, nbytes]
            for dims, offset, nbytes in plan_bands(
                resolve_key(key_of(case), case["shape"]), case["chunks"],
                case["itemsize"], case["target"], case["max"], case["max_bands"])]


def check_rule(case):
    """The expected bands against the rule, from the rows numpy selects."""
    shape, chunks, itemsize, key = case["shape"], case["chunks"], case["itemsize"], key_of(case)
    most, bands = case["max"], case["bands"]
    out_shape = np.broadcast_to(np.zeros((), np.uint8), shape)[key].shape
    total = int(np.prod(out_shape, dtype=object)) * itemsize
    axis = next((d for d, k in enumerate(key) if isinstance(k, slice)), None)
    if axis is None or total == 0:
        assert bands == ([] if most and total > most else [[bands[0][0], bands[0][1], 0, total]])
        return
    picked = range(shape[axis])[key[axis]]
    rows = np.arange(picked.start, picked.stop, picked.step)
    row_bytes = total // len(rows)
    if most and row_bytes > most:
        assert bands == []
        return
    chunk_of = rows // chunks[axis]
    run_rows = {c: int((chunk_of == c).sum()) for c in set(chunk_of.tolist())}
    target, wanted = case["target"], 0
    if case["max_bands"]:
        wanted = min(max(total // target if target else case["max_bands"], 1), case["max_bands"])
        target = -(-total // wanted)
        if not most:
            assert len(bands) <= case["max_bands"]
    step = key[axis].indices(shape[axis])[2]
    lo = 0
    for b, (start, count, offset, nbytes) in enumerate(bands):
        assert count >= 1 and offset == lo * row_bytes and nbytes == count * row_bytes, (case, b)
        assert start == rows[lo], (case, b)
        assert not most or nbytes <= most, (case, b)
        hi = lo + count
        # A band never splits a chunk's rows unless that chunk's rows alone exceed `most`.
        for k in (lo, hi):
            if 0 < k < len(rows) and chunk_of[k - 1] == chunk_of[k]:
                assert most and run_rows[chunk_of[k]] * row_bytes > most, (case, b)
        whole = (lo == 0 or chunk_of[lo - 1] != chunk_of[lo]) and \
            (hi == len(rows) or chunk_of[hi - 1] != chunk_of[hi])
        if whole and hi < len(rows) and not (wanted and b + 1 >= wanted):
            # Closest to the target: adding the next chunk's rows brings it no closer (or breaks
            # `most`), and dropping its last chunk's rows would take it further away.
            following = run_rows[chunk_of[hi]] * row_bytes
            assert (most and nbytes + following > most) or \
                abs(nbytes + following - target) >= abs(nbytes - target), (case, b)
            own = run_rows[chunk_of[hi - 1]] * row_bytes
            if own < nbytes:
                assert abs(nbytes - own - target) > abs(nbytes - target), (case, b)
        lo = hi
    assert lo == len(rows)


def generated_cases():
    fixed = [
        ((1000, 7), (64, 7), [[None, None, None]], 4, 100 * 28, 200 * 28, 0),
        ((1000, 7), (64, 7), [[None, None, -1]], 4, 100 * 28, 200 * 28, 0),
        ((1000, 7), (64, 7), [[900, 2, -7], 3], 4, 10 * 4, 40 * 4, 0),
        ((1000, 7), (64, 7), [5, [None, None, None]], 4, 8, 16, 0),
        ((1000, 7), (64, 7), [[None, None, None]], 4, 8, 16, 0),  # a row exceeds max
        ((1000, 7), (64, 7), [[3, None, 5]], 4, 10 * 28, 20 * 28, 0),
        ((1000, 7), (64, 7), [[None, None, 1]], 4, 10 * 28, 20 * 28, 0),  # chunks past max: cut
        ((1000, 7), (64, 7), [[None, None, -3]], 4, 10 * 28, 12 * 28, 0),
        ((700, 3, 1000), (64, 3, 250), [[None, None, None]], 4, 1 << 16, 0, 4),
        ((700, 3, 1000), (64, 3, 250), [[None, None, -1]], 4, 1 << 16, 0, 3),
        ((700, 3, 1000), (64, 3, 250), [[650, 2, -3]], 4, 1 << 16, 0, 4),
        ((700, 3, 1000), (64, 3, 250), [2, [None, None, None], [None, None, 2]], 4, 1 << 10, 0, 4),
        ((700, 3, 1000), (16, 3, 250), [[None, None, None]], 4, 96 << 10, 256 << 10, 0),
        ((8192, 8192), (512, 512), [[None, None, None]], 4, 16 << 20, 0, 8),
        ((8192, 8192), (512, 512), [[None, None, None]], 1, 16 << 20, 0, 8),
        ((1024, 8192), (100, 512), [[None, None, None]], 4, 16 << 20, 0, 8),
        ((512, 8192), (100, 512), [[None, None, None]], 4, 16 << 20, 0, 8),
        ((100,), (30,), [[None, None, None]], 1, 50, 0, 2),
        ((100,), (45,), [[None, None, None]], 1, 50, 0, 2),
        ((100,), (45,), [[None, None, -1]], 1, 50, 0, 2),
        ((100,), (45,), [[None, None, None]], 1, 0, 0, 0),
        ((100,), (45,), [[None, None, None]], 1, 0, 0, 5),
        ((100,), (10,), [[5, 5, 1]], 1, 10, 20, 2),  # empty
        ((100, 0), (10, 1), [[None, None, None], [None, None, None]], 1, 10, 20, 2),
        ((5, 6), (2, 2), [1, 2], 8, 4, 4, 0),  # a scalar above max
        ((5, 6), (2, 2), [1, 2], 8, 4, 8, 0),
        ((10,), (3,), [[None, None, -100]], 2, 1, 1, 0),
        ((10,), (3,), [[9, None, -4]], 2, 1, 0, 0),
        ((2**40,), (2**20,), [[2**40 - 2**26, None, 2**10 + 3]], 8, 1 << 8, 1 << 10, 0),
        ((2**40,), (2**20,), [[-5 * 2**20, None, 2**10]], 8, 4 << 10, 16 << 10, 0),
        ((2**40,), (2**20,), [[None, -(2**22), -(2**10 + 1)]], 8, 4 << 10, 0, 3),
    ]
    for shape, chunks, selection, itemsize, target, most, max_bands in fixed:
        yield dict(shape=list(shape), chunks=list(chunks), selection=selection, itemsize=itemsize,
                   target=target, max=most, max_bands=max_bands)
    rng = random.Random(19)
    for _ in range(300):
        rank = rng.randint(1, 3)
        shape = [rng.randint(0 if rng.random() < 0.05 else 1, 60) for _ in range(rank)]
        chunks = [rng.randint(1, max(1, n + 3)) for n in shape]
        selection = []
        for n in shape:
            if n and rng.random() < 0.2:
                selection.append(rng.randint(-n, n - 1))
                continue
            step = rng.choice([1, 1, 2, 3, 7, -1, -1, -2, -5, 50])
            start = rng.choice([None, rng.randint(-n - 3, n + 3)])
            stop = rng.choice([None, rng.randint(-n - 3, n + 3)])
            selection.append([start, stop, step])
        itemsize = rng.choice([1, 2, 4, 8, 16])
        row = itemsize * int(np.prod(shape[1:], dtype=np.int64))
        target = rng.choice([0, 1, row, 3 * row, 10 * row, 10**6])
        most = rng.choice([0, 0, row, 2 * row, 5 * row, 20 * row, max(1, row // 2)])
        max_bands = rng.choice([0, 0, 1, 2, 3, 4, 8])
        yield dict(shape=shape, chunks=chunks, selection=selection, itemsize=itemsize,
                   target=target, max=most, max_bands=max_bands)


def write():
    cases = []
    for case in generated_cases():
        key = key_of(case)
        case["axis"] = next((d for d, k in enumerate(key) if isinstance(k, slice)), 0)
        case["bands"] = plan(case)
        check_rule(case)
        cases.append(case)
    about = ("Cases of the band planner (common/index/band_plan.h), written by"
             " tests/e2e/test_band_plan.py and checked there against the rule. selection: per dimension [start, stop, step]"
             " (null: numpy's default) or an integer. bands: [start, count] of the first"
             " non-dropped dimension (axis), the band's byte offset in the result, its bytes.")
    text = json.dumps({"about": about, "cases": cases}, separators=(",", ":"))
    CASES.write_text(text.replace('{"shape"', '\n{"shape"') + "\n")


def test_the_python_port_gives_the_expected_bands():
    cases = json.loads(CASES.read_text())["cases"]
    assert len(cases) > 300
    for case in cases:
        assert plan(case) == case["bands"], case


def test_the_expected_bands_follow_the_rule():
    for case in json.loads(CASES.read_text())["cases"]:
        check_rule(case)


def test_band_keys_select_the_band_rows():
    for case in json.loads(CASES.read_text())["cases"]:
        shape, key = case["shape"], key_of(case)
        if any(n > 10**4 for n in shape):
            continue
        values = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        whole = np.ascontiguousarray(values[key]).reshape(-1).view(np.uint8)
        bands = key_bands(key, shape, case["chunks"], 8, case["target"] * 8 // case["itemsize"],
                          case["max"] * 8 // case["itemsize"], case["max_bands"])
        for band_key, offset, nbytes, band_shape in bands:
            got = values[band_key]
            assert got.shape == band_shape
            got = np.ascontiguousarray(got).reshape(-1).view(np.uint8)
            assert (got == whole[offset:offset + nbytes]).all(), case


if __name__ == "__main__":
    write()

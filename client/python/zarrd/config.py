"""Settings of the zarrd client. `enable_gpu()` works like zarr-python's
`zarr.config.enable_gpu()`: called, it turns GPU results on; used in a `with` block, it turns them
back off (to what they were) at the end. Inside it, reads of arrays of two or more dimensions
return CuPy arrays decoded by the server into GPU memory; metadata, and 0-d and 1-d arrays
(coordinates), stay on the host as NumPy.

`enable_gpu()` alone sets a context variable: it holds in this thread (and asyncio task) only.
`enable_gpu(globally=True)` (or `zarrd.config.set(gpu=True)`) sets the process-wide default that
every thread sees, Dask's worker threads included; a context setting overrides it. The
process-wide default starts from `$ZARRD_GPU` ("1" turns it on), so workers started with that
variable read to the GPU without any code of the user's running in them."""
import contextvars
import os

_UNSET = object()
_gpu = contextvars.ContextVar("zarrd_gpu", default=_UNSET)
_process = {"gpu": os.environ.get("ZARRD_GPU", "") in ("1", "true", "yes")}


class _Setting:
    def __init__(self, value):
        self._token = _gpu.set(value)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _gpu.reset(self._token)
        return False


class _ProcessSetting:
    def __init__(self, **values):
        self._previous = {k: _process[k] for k in values}
        _process.update(values)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _process.update(self._previous)
        return False


def set(**values):  # noqa: A001 - zarrd.config.set, as dask.config.set and zarr.config.set
    """Sets process-wide defaults (`gpu=True`); usable as a context manager that restores them."""
    unknown = values.keys() - _process.keys()
    if unknown:
        raise TypeError(f"unknown zarrd settings: {sorted(unknown)}")
    return _ProcessSetting(**values)


def enable_gpu(globally=False):
    return _ProcessSetting(gpu=True) if globally else _Setting(True)


def disable_gpu(globally=False):
    return _ProcessSetting(gpu=False) if globally else _Setting(False)


def gpu_enabled():
    value = _gpu.get()
    return _process["gpu"] if value is _UNSET else value

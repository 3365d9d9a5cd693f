"""Process-wide settings of the zarrd client. `enable_gpu()` works like zarr-python's
`zarr.config.enable_gpu()`: called, it turns GPU results on; used in a `with` block, it turns them
back off (to what they were) at the end. Inside it, reads of arrays of two or more dimensions
return CuPy arrays decoded by the server into GPU memory; metadata, and 0-d and 1-d arrays
(coordinates), stay on the host as NumPy."""
import contextvars

_gpu = contextvars.ContextVar("zarrd_gpu", default=False)


class _Setting:
    def __init__(self, value):
        self._token = _gpu.set(value)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _gpu.reset(self._token)
        return False


def enable_gpu():
    return _Setting(True)


def disable_gpu():
    return _Setting(False)


def gpu_enabled():
    return _gpu.get()

"""An xarray backend over zarrd groups:

    xr.open_dataset("zarrd://STORE/GROUP", engine=ZarrdBackendEntrypoint, address=...)

(or engine="zarrd" where the package is installed, through its entry point). Variables are lazy;
coordinates (1-d variables, and every variable named like a dimension) are read to the host as
NumPy, so they can index; data variables of two or more dimensions are read to the GPU as CuPy
inside `zarrd.config.enable_gpu()` (or its process-wide form).

`chunks={}` gives Dask arrays aligned to the Zarr chunks (each variable's `preferred_chunks`).
The variables pickle: on Dask distributed each worker reads through its own process's client,
and a dataset opened without `address` reads, in a worker, from the worker's $ZARRD_ADDRESS
(its node's zarrd). Outer and vectorized indexing are selected by the server (zarrd's orthogonal
and point selections). `ds.close()` closes the connection it opened."""
import numpy as np
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.backends.common import AbstractDataStore
from xarray.backends.store import StoreBackendEntrypoint
from xarray.core import indexing
from xarray.core.nputils import _advanced_indexer_subspaces
from xarray.core.utils import FrozenDict

from zarrd import config
from zarrd import device as zarrd_device
from zarrd.client import connect


class ZarrdBackendArray(BackendArray):
    def __init__(self, array, host_only):
        self.array, self.host_only = array, host_only
        self.shape, self.dtype = array.shape, array.dtype

    def __getitem__(self, key):
        # IndexingSupport.VECTORIZED: every indexer goes to the server as it is.
        prototype = "device" if config.gpu_enabled() and not self.host_only else "host"
        if isinstance(key, indexing.VectorizedIndexer):
            out = self.array.get_coordinate_selection(key.tuple, prototype)
            # xarray's vindex puts the broadcast dimensions first, where numpy keeps them in place.
            mixed, first = _advanced_indexer_subspaces(key.tuple)
            xp = np if isinstance(out, np.ndarray) else zarrd_device.cupy()
            return xp.moveaxis(out, mixed, first)
        return self.array.get_orthogonal_selection(key.tuple, prototype)


class ZarrdDataStore(AbstractDataStore):
    def __init__(self, group, client=None):
        self.group, self._client = group, client

    def close(self):
        if self._client is not None:
            self._client.close()
            self._client = None

    def _variable(self, name, array, dimension_names):
        from xarray import Variable
        attrs = dict(array.attrs)
        dims = array.dimension_names or attrs.get("_ARRAY_DIMENSIONS")
        attrs.pop("_ARRAY_DIMENSIONS", None)
        if dims is None:
            dims = [f"dim_{i}" for i in range(array.ndim)]
        fill = array.fill_value
        # A NaN fill needs no masking (and masking would pull GPU data to the host).
        if fill is not None and array.dtype.kind != "b" and not (
                array.dtype.kind in "fc" and np.isnan(fill)):
            attrs["_FillValue"] = fill
        host_only = array.ndim <= 1 or name in dimension_names
        data = indexing.LazilyIndexedArray(ZarrdBackendArray(array, host_only))
        encoding = {"chunks": array.chunks, "preferred_chunks": dict(zip(dims, array.chunks))}
        return Variable(dims, data, attrs, encoding)

    def get_variables(self):
        arrays = self.group.arrays()
        dimension_names = set()
        for _, a in arrays:
            dimension_names.update(a.dimension_names or a.attrs.get("_ARRAY_DIMENSIONS") or [])
        return FrozenDict({name: self._variable(name, a, dimension_names) for name, a in arrays})

    def get_attrs(self):
        return FrozenDict(self.group.attrs.asdict())

    def get_dimensions(self):
        dims = {}
        for v in self.get_variables().values():
            dims.update(dict(zip(v.dims, v.shape)))
        return FrozenDict(dims)


def _parse(uri):
    if not uri.startswith("zarrd://"):
        raise ValueError(f"expected zarrd://STORE/GROUP, got {uri!r}")
    store, _, path = uri[len("zarrd://"):].partition("/")
    return store, path.strip("/")


class ZarrdBackendEntrypoint(BackendEntrypoint):
    description = "Open Zarr groups served by a zarrd daemon (host or GPU results)"
    url = "https://github.com/zarrd/zarrd"
    open_dataset_parameters = ("filename_or_obj", "drop_variables", "address", "mask_and_scale",
                               "decode_times", "decode_coords", "use_cftime", "decode_timedelta")

    def guess_can_open(self, filename_or_obj):
        return isinstance(filename_or_obj, str) and filename_or_obj.startswith("zarrd://")

    def open_dataset(self, filename_or_obj, *, drop_variables=None, address=None,
                     mask_and_scale=True, decode_times=True, decode_coords=True, use_cftime=None,
                     decode_timedelta=None, concat_characters=True):
        store, path = _parse(str(filename_or_obj))
        client = connect(address)
        try:
            data_store = ZarrdDataStore(client.open_group(store, path), client)
        except BaseException:
            client.close()
            raise
        return StoreBackendEntrypoint().open_dataset(
            data_store, mask_and_scale=mask_and_scale, decode_times=decode_times,
            concat_characters=concat_characters, decode_coords=decode_coords,
            drop_variables=drop_variables, use_cftime=use_cftime, decode_timedelta=decode_timedelta)

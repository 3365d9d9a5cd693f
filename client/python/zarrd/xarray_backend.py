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
from zarrd.group import Group


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
        # As xarray's zarr backend: a v2 array's fill_value is its _FillValue; a v3 array's is
        # not (only a `_FillValue` attribute is, which stays in attrs).
        fill = array.fill_value if array.zarr_format == 2 else None
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


def _parse(uri, group=None):
    if not uri.startswith("zarrd://"):
        raise ValueError(f"expected zarrd://STORE/GROUP, got {uri!r}")
    store, _, path = uri[len("zarrd://"):].partition("/")
    path = "/".join(p for p in (path.strip("/"), (group or "").strip("/")) if p)
    return store, path


def _check_format(group, zarr_format):
    if zarr_format is not None and group.zarr_format != zarr_format:
        raise ValueError(f"{group.store}:{group.path or '/'} is a zarr_format {group.zarr_format} "
                         f"group, not {zarr_format}")


class ZarrdBackendEntrypoint(BackendEntrypoint):
    description = "Open Zarr groups served by a zarrd daemon (host or GPU results)"
    url = "https://github.com/zarrd/zarrd"
    open_dataset_parameters = ("filename_or_obj", "drop_variables", "address", "group",
                               "consolidated", "zarr_format", "mask_and_scale", "decode_times",
                               "decode_coords", "use_cftime", "decode_timedelta")

    def guess_can_open(self, filename_or_obj):
        return isinstance(filename_or_obj, str) and filename_or_obj.startswith("zarrd://")

    def open_dataset(self, filename_or_obj, *, drop_variables=None, address=None, group=None,
                     consolidated=None, zarr_format=None, mask_and_scale=True, decode_times=True,
                     decode_coords=True, use_cftime=None, decode_timedelta=None,
                     concat_characters=True):
        """`group` is a path below the URI's group; the group and its arrays' metadata come in
        one request, from its consolidated metadata when it has some, unless `consolidated` is
        False; `zarr_format` (2 or 3), when given, must be the group's."""
        store, path = _parse(str(filename_or_obj), group)
        client = connect(address)
        try:
            node = client.open_tree(store, path, max_depth=1, consolidated=consolidated)
            _check_format(node, zarr_format)
            data_store = ZarrdDataStore(node, client)
        except BaseException:
            client.close()
            raise
        return _decode(data_store, locals())

    def open_groups_as_dict(self, filename_or_obj, *, drop_variables=None, address=None,
                            group=None, consolidated=None, zarr_format=None, mask_and_scale=True,
                            decode_times=True, decode_coords=True, use_cftime=None,
                            decode_timedelta=None, concat_characters=True):
        """Every group at and below the URI's (and `group`'s) as a Dataset, keyed by its path
        relative to it ("/" for itself), as xarray's `open_groups`. The datasets share one
        connection, which the first one's close() closes."""
        store, path = _parse(str(filename_or_obj), group)
        client = connect(address)
        try:
            root = client.open_tree(store, path, consolidated=consolidated)
            _check_format(root, zarr_format)
            found = [("/", root)] + [("/" + name, node) for name, node in root.members(max_depth=None)
                                     if isinstance(node, Group)]
            out = {}
            for i, (name, node) in enumerate(found):
                out[name] = _decode(ZarrdDataStore(node, client if i == 0 else None), locals())
            return out
        except BaseException:
            client.close()
            raise

    def open_datatree(self, filename_or_obj, **kwargs):
        """The group tree as an xarray DataTree (xarray 2024.10 and later)."""
        import xarray as xr
        if not hasattr(xr, "DataTree"):
            raise NotImplementedError(f"xarray {xr.__version__} has no DataTree; use open_groups")
        return xr.DataTree.from_dict(self.open_groups_as_dict(filename_or_obj, **kwargs))


def _decode(data_store, options):
    return StoreBackendEntrypoint().open_dataset(
        data_store, mask_and_scale=options["mask_and_scale"], decode_times=options["decode_times"],
        concat_characters=options["concat_characters"], decode_coords=options["decode_coords"],
        drop_variables=options["drop_variables"], use_cftime=options["use_cftime"],
        decode_timedelta=options["decode_timedelta"])


def open_groups(uri, **kwargs):
    """`xr.open_groups` for zarrd URIs on any xarray: {path: Dataset} of the group tree."""
    return ZarrdBackendEntrypoint().open_groups_as_dict(uri, **kwargs)

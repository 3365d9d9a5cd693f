"""zarrd's Python client: Zarr arrays served by a zarrd daemon, NumPy on the host and CuPy on the
GPU (inside `zarrd.config.enable_gpu()`), and an xarray backend (`zarrd.xarray_backend`)."""
import os

# A forked child (multiprocessing, Dask's nannies) makes its own channel; gRPC lets a child use
# gRPC only with fork support on, read once when grpc is first imported (import zarrd first, or
# set it yourself).
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "1")

from zarrd import config  # noqa: E402 (after the environment gRPC reads at import)
from zarrd.array import Array, Attributes
from zarrd.client import Client, connect, shared_client
from zarrd.errors import (AlreadyExistsError, DataLossError, FailedPreconditionError,
                          InvalidArgumentError, NotFoundError, OutOfRangeError,
                          PermissionDeniedError, ResourceExhaustedError, UnavailableError,
                          ZarrdError)
from zarrd.group import Group, consolidate_metadata

__all__ = ["AlreadyExistsError", "Array", "Attributes", "Client", "DataLossError",
           "FailedPreconditionError", "Group", "InvalidArgumentError", "NotFoundError",
           "OutOfRangeError", "PermissionDeniedError", "ResourceExhaustedError",
           "UnavailableError", "ZarrdError", "config", "connect", "consolidate_metadata",
           "shared_client"]

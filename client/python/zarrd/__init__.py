"""zarrd's Python client: Zarr arrays served by a zarrd daemon, NumPy on the host and CuPy on the
GPU (inside `zarrd.config.enable_gpu()`), and an xarray backend (`zarrd.xarray_backend`)."""
from zarrd import config
from zarrd.array import Array, Attributes
from zarrd.client import Client, connect, shared_client
from zarrd.errors import (AlreadyExistsError, DataLossError, FailedPreconditionError,
                          InvalidArgumentError, NotFoundError, OutOfRangeError,
                          PermissionDeniedError, ResourceExhaustedError, UnavailableError,
                          ZarrdError)
from zarrd.group import Group

__all__ = ["AlreadyExistsError", "Array", "Attributes", "Client", "DataLossError",
           "FailedPreconditionError", "Group", "InvalidArgumentError", "NotFoundError",
           "OutOfRangeError", "PermissionDeniedError", "ResourceExhaustedError",
           "UnavailableError", "ZarrdError", "config", "connect", "shared_client"]

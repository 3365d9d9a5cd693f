"""zarrd's errors as Python exceptions: one class per gRPC status code that zarrd uses, each also
a subclass of the built-in exception a Python user would catch (IndexError for out-of-range
indices, KeyError for missing nodes, ...). The message is the server's."""
import grpc


class ZarrdError(Exception):
    """A request that zarrd refused; `code` is the gRPC status code, `message` the server's and
    `reason`, for the errors a client acts on, the ErrorInfo reason (proto/zarrd/v1/error.proto),
    else ""."""

    def __init__(self, code, message, reason=""):
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason

    def __str__(self):
        return f"{self.code.name}: {self.message}"


class NotFoundError(ZarrdError, KeyError):
    pass


class InvalidArgumentError(ZarrdError, ValueError):
    pass


class OutOfRangeError(ZarrdError, IndexError):
    pass


class AlreadyExistsError(ZarrdError, FileExistsError):
    pass


class PermissionDeniedError(ZarrdError, PermissionError):
    pass


class ReadOnlyError(PermissionDeniedError):
    """A write through a node opened with mode "r"; refused by the client, as zarr-python does."""

    def __init__(self, message):
        super().__init__(grpc.StatusCode.PERMISSION_DENIED, message)


class ResourceExhaustedError(ZarrdError, MemoryError):
    pass


class FailedPreconditionError(ZarrdError, RuntimeError):
    pass


class DataLossError(ZarrdError, OSError):
    pass


class UnavailableError(ZarrdError, ConnectionError):
    pass


_BY_CODE = {
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.OUT_OF_RANGE: OutOfRangeError,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExistsError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.DATA_LOSS: DataLossError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
}


_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def reason_of(error):
    """The zarrd ErrorInfo reason in a gRPC error's status details, or ""."""
    from zarrd.v1 import error_pb2
    trailing = getattr(error, "trailing_metadata", None)
    for key, value in (trailing() or ()) if trailing else ():
        if key != "grpc-status-details-bin":
            continue
        status = error_pb2.RpcStatus.FromString(value)
        for detail in status.details:
            if detail.type_url == _ERROR_INFO:
                info = error_pb2.ErrorInfo.FromString(detail.value)
                if info.domain == "zarrd":
                    return info.reason
    return ""


def from_rpc(error):
    code = error.code()
    return _BY_CODE.get(code, ZarrdError)(code, error.details() or "", reason_of(error))


def call(method, request, **kwargs):
    """Calls a unary method, raising ZarrdError subclasses instead of grpc.RpcError."""
    try:
        return method(request, **kwargs)
    except grpc.RpcError as e:
        raise from_rpc(e) from None

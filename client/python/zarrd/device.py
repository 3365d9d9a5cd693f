"""GPU results and inputs through CuPy. DEVICE results are sub-allocations of the server's
exported slabs: each slab's IPC handle is opened once per (server epoch, slab) and cached, so a
steady state opens none; a result is a CuPy array whose lease is released when the array (and
every view of it) is garbage collected. GPU inputs are registered with the server as device
regions for the one write, so nothing is copied through the host."""
import ctypes
import os

import grpc
import numpy as np

from zarrd import errors
from zarrd.v1 import zarrd_pb2 as pb


def cupy():
    try:
        import cupy as cp
    except ImportError as e:
        raise errors.FailedPreconditionError(
            grpc.StatusCode.FAILED_PRECONDITION,
            f"GPU results need CuPy, which cannot be imported here ({e})") from None
    return cp


_DLPACK_CUDA = 2  # kDLCUDA


def is_device_array(value):
    """True for GPU arrays: CuPy, anything with __cuda_array_interface__, or DLPack on CUDA."""
    if hasattr(value, "__cuda_array_interface__"):
        return True
    try:
        return hasattr(value, "__dlpack_device__") and value.__dlpack_device__()[0] == _DLPACK_CUDA
    except Exception:  # noqa: BLE001 - not a DLPack producer after all
        return False


def as_cupy(value):
    cp = cupy()
    if hasattr(value, "__cuda_array_interface__"):
        return cp.asarray(value)
    return cp.from_dlpack(value)


def _uuid_string(raw):
    h = bytes(raw).hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _device_uuid(ordinal, library="libcuda.so.1"):
    """The 16 bytes of the UUID of CUDA device `ordinal`, from the driver. CuPy's device
    properties hold the UUID as a C string, cut at its first zero byte: a GPU whose UUID has one
    could not be matched by them."""
    try:
        cuda = ctypes.CDLL(library)
    except OSError as e:
        raise errors.FailedPreconditionError(
            grpc.StatusCode.FAILED_PRECONDITION, f"the CUDA driver cannot be loaded ({e})") from None
    device = ctypes.c_int()
    uuid = (ctypes.c_ubyte * 16)()
    get_uuid = getattr(cuda, "cuDeviceGetUuid_v2", None) or cuda.cuDeviceGetUuid
    for what, rc in (("cuInit", lambda: cuda.cuInit(0)),
                     ("cuDeviceGet", lambda: cuda.cuDeviceGet(ctypes.byref(device), ordinal)),
                     ("cuDeviceGetUuid", lambda: get_uuid(uuid, device))):
        code = rc()
        if code != 0:
            raise errors.FailedPreconditionError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"{what} failed with CUDA driver error {code} for device {ordinal}")
    return bytes(uuid)


class _Mapping:
    """One opened slab; closed when no result uses it any more."""

    def __init__(self, cp, device, handle):
        self._cp, self.device = cp, device
        with cp.cuda.Device(device):
            self.ptr = cp.cuda.runtime.ipcOpenMemHandle(handle)

    def __del__(self):
        try:
            with self._cp.cuda.Device(self.device):
                self._cp.cuda.runtime.ipcCloseMemHandle(self.ptr)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class _Lease:
    """Owner of a DEVICE result's memory: releases the lease when collected."""

    def __init__(self, stub, lease_id, mapping):
        self._stub, self.lease_id, self.mapping = stub, lease_id, mapping

    def __del__(self):
        if self.lease_id:
            try:
                self._stub.ReleaseLease(pb.ReleaseLeaseRequest(lease_id=self.lease_id), timeout=10)
            except Exception:  # noqa: BLE001 - the server may be gone; its TTL ends the lease
                pass


class DeviceSession:
    """Per-client state: the slab mappings and the GPU ordinals by UUID."""

    def __init__(self, stub):
        self._stub = stub
        self._epoch = None
        self._slabs = {}
        self._events = {}  # the server's ready events by id, for _epoch
        self._stale_events = []  # of earlier server runs: never used or destroyed again
        self._ordinals = None
        self.handle_opens = 0
        self.ready_events_opened = 0

    def waits_on_events(self):
        """True when this CuPy can open the server's ready events: the server may then answer
        while the result's copies still run (GetItemRequest.answer_before_ready)."""
        try:
            import cupy as cp
        except ImportError:
            return False  # the server's answer, or view(), says what is missing
        runtime = cp.cuda.runtime
        return all(hasattr(runtime, f) for f in
                   ("ipcOpenEventHandle", "eventSynchronize", "streamWaitEvent"))

    def _wait_ready(self, cp, device, buffer, stream):
        """Waits for a result the server answered about before it was complete: here, or on
        `stream` when one is given."""
        if not buffer.ready_event_handle:
            return
        event = self._events.get(buffer.ready_event_id)
        with cp.cuda.Device(device):
            if event is None:
                event = cp.cuda.runtime.ipcOpenEventHandle(bytes(buffer.ready_event_handle))
                self._events[buffer.ready_event_id] = event
                self.ready_events_opened += 1
            if stream is None:
                cp.cuda.runtime.eventSynchronize(event)
            else:
                cp.cuda.runtime.streamWaitEvent(stream.ptr, event, 0)

    def _table(self):
        if self._ordinals is None:
            cp = cupy()
            self._ordinals = {_uuid_string(_device_uuid(i)): i
                              for i in range(cp.cuda.runtime.getDeviceCount())}
        return self._ordinals

    def ordinal(self, uuid):
        if uuid not in self._table():
            raise errors.FailedPreconditionError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"the server's GPU {uuid} is not visible to this process")
        return self._ordinals[uuid]

    def uuid(self, ordinal):
        return {v: k for k, v in self._table().items()}[ordinal]

    def view(self, response, stream=None):
        """The CuPy array of a DEVICE GetItem response, complete now or in `stream`'s order."""
        cp = cupy()
        b, d = response.device_buffer, response.array
        dtype = np.dtype(d.numpy_dtype or d.data_type)
        if dtype.kind in "mM":  # CuPy has no datetime64/timedelta64: the int64 counts of the unit
            dtype = np.dtype("<i8")
        if b.server_epoch != self._epoch:  # a restarted server: its old slabs and events are gone
            self._stale_events.extend(self._events.values())
            self._slabs, self._events, self._epoch = {}, {}, b.server_epoch
        device = self.ordinal(b.gpu_uuid)
        mapping = self._slabs.get(b.slab_id)
        if mapping is None:
            mapping = self._slabs[b.slab_id] = _Mapping(cp, device, b.ipc_handle)
            self.handle_opens += 1
        lease = _Lease(self._stub, b.lease_id, mapping)
        self._wait_ready(cp, device, b, stream)
        memory = cp.cuda.UnownedMemory(mapping.ptr + b.offset, max(b.nbytes, 1), lease, device)
        return cp.ndarray(tuple(d.shape), dtype, cp.cuda.MemoryPointer(memory, 0))

    def register(self, array):
        """Registers a C-contiguous CuPy array's memory; returns the region id."""
        cp = cupy()
        ptr = array.data.ptr
        base = _allocation_base(ptr)
        with cp.cuda.Device(array.device.id):
            handle = cp.cuda.runtime.ipcGetMemHandle(base)
        reply = errors.call(self._stub.RegisterDeviceRegion, pb.RegisterDeviceRegionRequest(
            gpu_uuid=self.uuid(array.device.id), ipc_handle=handle, handle_offset=ptr - base,
            nbytes=array.nbytes, client_pid=os.getpid()))
        return reply.region_id

    def unregister(self, region_id):
        errors.call(self._stub.UnregisterDeviceRegion,
                    pb.UnregisterDeviceRegionRequest(region_id=region_id))


_libcuda = None


def _allocation_base(ptr):
    """The base of the cudaMalloc allocation holding `ptr` (an IPC handle names the base)."""
    global _libcuda
    if _libcuda is None:
        _libcuda = ctypes.CDLL("libcuda.so.1")
        _libcuda.cuMemGetAddressRange_v2.argtypes = [
            ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_size_t), ctypes.c_uint64]
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    rc = _libcuda.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ptr)
    if rc != 0:
        raise errors.InvalidArgumentError(grpc.StatusCode.INVALID_ARGUMENT,
                                          f"cuMemGetAddressRange failed ({rc}) for {ptr:#x}")
    return base.value

"""HOST results of 64 KiB to 64 MiB decoded by the server straight into shared memory this client
keeps, for clients on the server's host (a Unix socket), as the C++ client's Client::Get: no
bytes cross the socket, and one copy out makes the caller's array. Larger results are read in
parts of about BAND_BYTES, cut on chunk edges, by parallel requests into such regions. zarrd
creates each region (it maps no object it did not make) and this process maps it; regions are
registered once and reused, and their names are unlinked as soon as both sides have them, so a
crashed client leaves nothing in /dev/shm (the server drops its mapping when this process exits)."""
import mmap
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import grpc
import numpy as np

from zarrd import errors
from zarrd.v1 import zarrd_pb2 as pb

MIN_BYTES, MAX_BYTES = 64 << 10, 64 << 20
BAND_BYTES = 32 << 20
BANDS_IN_FLIGHT = 4
_KEEP = 4  # free regions kept for the next reads


class _Region:
    def __init__(self, region_id, memory):
        self.id = region_id
        self.memory = memory
        self.size = len(memory)


class HostRegions:
    """Scratch regions for one client; turned off for good the first time the server cannot open
    this process's shared memory (another host, another /dev/shm, another user)."""

    def __init__(self, stub, address):
        self._stub = stub
        self._free = []
        self._lock = threading.Lock()
        self.enabled = address.startswith("unix:") and os.path.isdir("/dev/shm")

    def wanted(self, nbytes):
        return self.enabled and MIN_BYTES <= nbytes <= MAX_BYTES

    def read_bands(self, bands, out_shape, dtype, request_for):
        """A result larger than MAX_BYTES, as a new array: each of `bands` (key, offset, nbytes,
        shape; stream.key_bands) decoded by the server into a region of its own,
        BANDS_IN_FLIGHT at a time, and copied into its bytes. None when the server cannot use
        this process's shared memory."""
        out = np.empty(out_shape, dtype)
        flat = out.reshape(-1).view(np.uint8)

        def read(band):
            band_key, offset, nbytes, band_shape = band
            return self.read(request_for(band_key), band_shape, dtype,
                             flat[offset:offset + nbytes])

        with ThreadPoolExecutor(max(1, min(BANDS_IN_FLIGHT, len(bands)))) as pool:
            done = list(pool.map(read, bands))
        return out if all(d is not None for d in done) else None

    def read(self, request, shape, dtype, into=None):
        """The result of the HOST GetItem `request` as a new array, or copied into the bytes
        `into` (then returned); None when the server cannot use this process's shared memory (the
        caller reads bytes instead)."""
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        for attempt in range(2):
            region = self._take(nbytes)
            if region is None:
                return None
            request.host_region.CopyFrom(pb.HostRegionTarget(region_id=region.id, offset=0,
                                                             nbytes=nbytes))
            try:
                errors.call(self._stub.GetItem, request)
            except errors.NotFoundError as e:
                if attempt == 0 and e.reason == "HOST_REGION_NOT_REGISTERED":
                    # zarrd restarted since the region was registered; its regions went with it.
                    region.memory.close()
                    self._forget()
                    continue
                self._give(region)
                raise
            except BaseException:
                self._give(region)
                raise
            if into is not None:
                into[:] = np.frombuffer(region.memory, np.uint8, count=nbytes)
                out = into
            else:
                out = np.frombuffer(region.memory, dtype, count=nbytes // dtype.itemsize) \
                    .reshape(shape).copy()
            self._give(region)
            return out

    def close(self):
        for region in self._take_all():
            self._drop(region)

    def _forget(self):
        """Drops the kept regions without unregistering them: the server no longer knows them."""
        for region in self._take_all():
            region.memory.close()

    def _take_all(self):
        with self._lock:
            free, self._free = self._free, []
        return free

    def _take(self, nbytes):
        with self._lock:
            fits = [r for r in self._free if r.size >= nbytes]
            if fits:
                region = min(fits, key=lambda r: r.size)
                self._free.remove(region)
                return region
        return self._create(max(nbytes, 1 << 20))

    def _give(self, region):
        with self._lock:
            self._free.append(region)
            if len(self._free) <= max(_KEEP, BANDS_IN_FLIGHT):
                return
            # Drop the smallest: the kept ones serve the sizes this process reads.
            region = min(self._free, key=lambda r: r.size)
            self._free.remove(region)
        self._drop(region)

    def _create(self, size):
        try:
            registered = self._stub.RegisterHostRegion(pb.RegisterHostRegionRequest(
                nbytes=size, client_pid=os.getpid()))
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                return None  # no room in /dev/shm, or this process's quota: bytes this time
            if e.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.PERMISSION_DENIED,
                            grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.INVALID_ARGUMENT):
                self.enabled = False  # an older zarrd, or one that cannot see this process
                return None
            raise errors.from_rpc(e) from None
        # zarrd created the object; its name goes as soon as this process has it mapped.
        path = "/dev/shm" + registered.shm_name
        try:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:  # another /dev/shm (a container) or another user
            self.enabled = False
            self._unregister(registered.region_id)
            return None
        try:
            os.unlink(path)
            memory = mmap.mmap(fd, registered.nbytes)
        finally:
            os.close(fd)
        return _Region(registered.region_id, memory)

    def _drop(self, region):
        self._unregister(region.id)
        region.memory.close()

    def _unregister(self, region_id):
        try:
            self._stub.UnregisterHostRegion(pb.UnregisterHostRegionRequest(region_id=region_id))
        except grpc.RpcError:
            pass  # the server drops it when this process exits

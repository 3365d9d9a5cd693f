"""The connection to a zarrd server."""
import json
import os
import threading

import grpc

from zarrd import errors
from zarrd.array import Array
from zarrd.group import Group, read_tree
from zarrd.host_region import HostRegions
from zarrd.metadata import array_metadata
from zarrd.v1 import zarrd_pb2 as pb
from zarrd.v1 import zarrd_pb2_grpc


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def default_address():
    return os.environ.get("ZARRD_ADDRESS") or "unix:zarrd.sock"


class Client:
    def __init__(self, address=None, timeout=10, tls_ca=None, tls_cert=None, tls_key=None):
        # What pickled nodes carry: `address` as given (None: the default of whoever unpickles).
        self.spec = (address, timeout, tls_ca, tls_cert, tls_key)
        self.address = address or default_address()
        self.closed = False
        # Large HTTP/2 frames and receive window, as the C++ client (measured in bench/serve_read).
        options = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1),
                   ("grpc.http2.max_frame_size", 4 << 20), ("grpc.http2.lookahead_bytes", 64 << 20)]
        self._credentials = None
        if tls_ca:
            self._credentials = grpc.ssl_channel_credentials(
                _read(tls_ca), _read(tls_key) if tls_key else None, _read(tls_cert) if tls_cert else None)
        self._options = options
        self._channel = self._make_channel(options)
        self._band_channels = []
        self._band_lock = threading.Lock()
        self.stub = zarrd_pb2_grpc.ZarrdStub(self._channel)
        self.pid = os.getpid()
        self.info = errors.call(self.stub.ServerInfo, pb.ServerInfoRequest(), wait_for_ready=True,
                                timeout=timeout)
        self._device = None
        self.host_regions = HostRegions(self.stub, self.address)
        # Streamed HOST reads split into up to this many parallel streams, of at least
        # stream.MIN_BAND_BYTES each: the C++ client's defaults (README, Clients).
        self.read_streams = 2

    def _make_channel(self, options):
        if self._credentials is not None:
            return grpc.secure_channel(self.address, self._credentials, options=options)
        return grpc.insecure_channel(self.address, options=options)

    def band_channel(self, band):
        """The channel band `band` of a streamed read uses: this client's for band 0, for the
        others a connection each (streams on one HTTP/2 connection share its socket)."""
        if band == 0:
            return self._channel
        with self._band_lock:
            while len(self._band_channels) < band:
                self._band_channels.append(
                    self._make_channel(self._options + [("grpc.use_local_subchannel_pool", 1)]))
            return self._band_channels[band - 1]

    def device_session(self):
        from zarrd.device import DeviceSession
        if self._device is None:
            self._device = DeviceSession(self.stub)
        return self._device

    def close(self):
        self.closed = True
        self.host_regions.close()
        for channel in self._band_channels:
            channel.close()
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _node(self, store, path):
        return errors.call(self.stub.GetNode, pb.NodeRequest(store=store, path=path.strip("/")))

    def open(self, store, path="", mode=None, **create):
        """The array or group at `path`. `mode` as zarr-python's: "r" read-only (the client
        refuses writes), "r+" read-write, the node must exist (also None); "a" as "r+" but
        creates it when absent; "w" creates it, replacing what is there; "w-" (or "x") creates
        it, failing when something is there. Creating makes an array when `create` has `shape`
        (with create_array's keywords), else a group."""
        if mode not in (None, "r", "r+", "a", "w", "w-", "x"):
            raise ValueError(f'mode must be one of "r", "r+", "a", "w", "w-", "x", not {mode!r}')
        if mode in ("w", "w-", "x") or mode == "a" and not self._exists(store, path):
            create["overwrite"] = mode == "w"
            if "shape" in create:
                return self.create_array(store, path, **create)
            return self.create_group(store, path, **create)
        info = self._node(store, path)
        node = Array(self, info) if info.kind == pb.NODE_KIND_ARRAY else Group(self, info)
        node.read_only = mode == "r"
        return node

    def _exists(self, store, path):
        try:
            self._node(store, path)
            return True
        except errors.NotFoundError:
            return False

    def open_tree(self, store, path="", max_depth=None, consolidated=None, mode=None):
        """The group at `path` with the metadata of the nodes below it (`max_depth` levels, None:
        all) in one request, from the group's consolidated metadata when it has some (unless
        `consolidated` is False): walking it (members, arrays, tree, [name]) asks nothing more."""
        group = read_tree(self, store, path, max_depth, consolidated)
        group.read_only = mode == "r"
        return group

    def open_array(self, store, path, mode=None, **create):
        node = self.open(store, path, mode, **create)
        if not isinstance(node, Array):
            raise errors.NotFoundError(grpc.StatusCode.NOT_FOUND, f"{store}:{path} is a group, not an array")
        return node

    def open_group(self, store, path="", mode=None, **create):
        node = self.open(store, path, mode, **create)
        if not isinstance(node, Group):
            raise errors.NotFoundError(grpc.StatusCode.NOT_FOUND, f"{store}:{path} is an array, not a group")
        return node

    def create_array(self, store, path, *, shape, dtype, chunks=None, fill_value=0, codecs=None,
                     compressors="default", shards=None, dimension_names=None, attributes=None,
                     zarr_format=3, order="C", overwrite=False, filters=None):
        """Creates an array with zarr-python's keywords; returns it. `chunks` None picks a chunk
        shape as zarr-python does (about 128 KiB to 64 MiB, by the array's size). `filters`:
        numcodecs filters as dicts ({"id": "delta", "dtype": "<i4"}) or numcodecs codecs."""
        meta, v2_attrs = array_metadata(shape, dtype, chunks, fill_value, codecs, compressors, shards,
                                        dimension_names, attributes, zarr_format, order, filters)
        info = errors.call(self.stub.CreateNode, pb.CreateNodeRequest(
            store=store, path=path.strip("/"), kind=pb.NODE_KIND_ARRAY, metadata_json=json.dumps(meta),
            attributes_json=json.dumps(v2_attrs) if v2_attrs else "", overwrite=overwrite))
        return Array(self, info)

    def create_group(self, store, path="", *, attributes=None, zarr_format=3, overwrite=False):
        meta = {"zarr_format": 2} if zarr_format == 2 else {
            "zarr_format": 3, "node_type": "group", "attributes": attributes or {}}
        info = errors.call(self.stub.CreateNode, pb.CreateNodeRequest(
            store=store, path=path.strip("/"), kind=pb.NODE_KIND_GROUP, metadata_json=json.dumps(meta),
            attributes_json=json.dumps(attributes or {}), overwrite=overwrite))
        return Group(self, info)

    def consolidate(self, store, path=""):
        """Writes the consolidated metadata of the group at `path` (v3: its zarr.json's
        consolidated_metadata, v2: its .zmetadata); zarrd keeps it current from then on.
        Returns the group, reopened."""
        errors.call(self.stub.Consolidate, pb.ConsolidateRequest(store=store, path=path.strip("/")))
        return self.open_group(store, path)

    def delete(self, store, path):
        return errors.call(self.stub.DeleteNode, pb.NodeRequest(store=store, path=path.strip("/"))).keys_deleted


_shared = {}
_shared_lock = threading.Lock()
_forked_away = []  # the parent's clients, kept from their finalizers, which would use its channels


def _forget_shared_clients():
    global _shared_lock
    _forked_away.extend(_shared.values())
    _shared.clear()
    _shared_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_shared_clients)


def shared_client(address=None, timeout=10, tls_ca=None, tls_cert=None, tls_key=None):
    """This process's client for `address` (default $ZARRD_ADDRESS), made on first use and kept
    for the life of the process; a forked child makes its own. Unpickled arrays and groups read
    through it."""
    key = (address or default_address(), tls_ca, tls_cert, tls_key)
    with _shared_lock:
        client = _shared.get(key)
        if client is None or client.closed or client.pid != os.getpid():
            client = _shared[key] = Client(address, timeout, tls_ca, tls_cert, tls_key)
        return client


def connect(address=None, timeout=10, tls_ca=None, tls_cert=None, tls_key=None):
    """Connects to zarrd at `address` ("unix:/run/zarrd/zarrd.sock", "host:port"; default
    $ZARRD_ADDRESS, else unix:zarrd.sock). For a TLS listener: tls_ca, the PEM file of the CA
    that signed the server's certificate, and for mTLS the client's tls_cert and tls_key."""
    return Client(address, timeout, tls_ca, tls_cert, tls_key)

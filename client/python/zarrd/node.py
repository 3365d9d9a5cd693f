"""What arrays and groups share: the node's metadata and the connection it is read through.

A node pickles as its connection's parameters, its store, path and metadata, never as a live
channel: unpickled (in a Dask worker, say), it reconnects through the process's shared client for
that address (`zarrd.client.shared_client`). A node opened through the default address
($ZARRD_ADDRESS) goes to the default address of the process that uses it, so a worker bound to
its node's zarrd by environment reads from that zarrd. A node used in a forked child reconnects
too: gRPC channels do not survive fork()."""
import os

from zarrd.v1 import zarrd_pb2 as pb


class Node:
    # True for a node opened with mode "r": the client refuses its writes (ReadOnlyError).
    read_only = False

    def __init__(self, client, info):
        self._conn, self._spec = client, client.spec
        self._info = info
        self.store, self.path = info.store, info.path

    @property
    def _client(self):
        conn = self._conn
        if conn is None or conn.pid != os.getpid():
            from zarrd.client import shared_client
            conn = self._conn = shared_client(*self._spec)
        return conn

    @property
    def name(self):
        """The node's path from the store root, with a leading "/", as zarr-python's `name`."""
        return "/" + self.path

    @property
    def basename(self):
        return self.path.rsplit("/", 1)[-1]

    def __reduce__(self):
        return _restore, (type(self), self._spec, self._info.SerializeToString(), self._pickled_state())

    def _pickled_state(self):
        return {"read_only": self.read_only} if self.read_only else {}


def _restore(cls, spec, info, state):
    node = cls.__new__(cls)
    node._conn, node._spec = None, spec
    node._info = pb.NodeInfo.FromString(info)
    node.store, node.path = node._info.store, node._info.path
    node.__dict__.update(state)
    return node

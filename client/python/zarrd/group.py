"""Groups served by zarrd."""
import json

from zarrd import errors
from zarrd.array import Attributes
from zarrd.node import Node
from zarrd.v1 import zarrd_pb2 as pb


def _join(path, name):
    return f"{path}/{name}" if path else name


class Group(Node):
    """A group of a zarrd store; groups pickle like arrays (see zarrd.node)."""

    @property
    def attrs(self):
        return Attributes(self)

    @property
    def metadata(self):
        return json.loads(self._info.metadata_json or "{}")

    @property
    def zarr_format(self):
        return self._info.zarr_format

    def _entries(self):
        reply = errors.call(self._client.stub.ListNodes, pb.NodeRequest(store=self.store, path=self.path))
        return list(reply.nodes)

    def keys(self):
        return [e.name for e in self._entries()]

    def __iter__(self):
        return iter(self.keys())

    def __contains__(self, name):
        return name in self.keys()

    def __getitem__(self, name):
        return self._client.open(self.store, _join(self.path, name))

    def arrays(self):
        return [(e.name, self[e.name]) for e in self._entries() if e.kind == pb.NODE_KIND_ARRAY]

    def groups(self):
        return [(e.name, self[e.name]) for e in self._entries() if e.kind == pb.NODE_KIND_GROUP]

    def create_array(self, name, **kwargs):
        kwargs.setdefault("zarr_format", self.zarr_format)
        return self._client.create_array(self.store, _join(self.path, name), **kwargs)

    def create_group(self, name, **kwargs):
        kwargs.setdefault("zarr_format", self.zarr_format)
        return self._client.create_group(self.store, _join(self.path, name), **kwargs)

    def __repr__(self):
        return f"<zarrd.Group {self.store}:{self.path or '/'}>"


def consolidate_metadata(group):
    """zarr.consolidate_metadata for a zarrd group: writes its consolidated metadata, which zarrd
    keeps current on its own writes from then on; returns the group, reopened."""
    return group._client.consolidate(group.store, group.path)

"""Groups served by zarrd."""
import json

import numpy as np

from zarrd import errors
from zarrd.array import Attributes, _check_writable, _Info
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
        return self._client.open(self.store, _join(self.path, name),
                                 mode="r" if self.read_only else None)

    def __len__(self):
        return len(self._entries())

    def __delitem__(self, name):
        """Deletes the member `name` (an array with its chunks, a group with all it holds)."""
        _check_writable(self)
        self._client.delete(self.store, _join(self.path, name))

    def arrays(self):
        return [(e.name, self[e.name]) for e in self._entries() if e.kind == pb.NODE_KIND_ARRAY]

    def groups(self):
        return [(e.name, self[e.name]) for e in self._entries() if e.kind == pb.NODE_KIND_GROUP]

    def array_keys(self):
        return [e.name for e in self._entries() if e.kind == pb.NODE_KIND_ARRAY]

    def group_keys(self):
        return [e.name for e in self._entries() if e.kind == pb.NODE_KIND_GROUP]

    def array_values(self):
        return [node for _, node in self.arrays()]

    def group_values(self):
        return [node for _, node in self.groups()]

    def members(self, max_depth=0):
        """(name, node) pairs of the members, as zarr-python's `Group.members`: with `max_depth`
        0 the children only, n levels below them too, None the whole tree; names below the
        children are paths relative to this group."""
        out = []
        todo = [("", self, 0)]
        while todo:
            prefix, group, depth = todo.pop(0)
            for e in group._entries():
                node = group[e.name]
                name = prefix + e.name
                out.append((name, node))
                if e.kind == pb.NODE_KIND_GROUP and (max_depth is None or depth < max_depth):
                    todo.append((name + "/", node, depth + 1))
        return tuple(sorted(out, key=lambda item: item[0]))

    def tree(self, level=None):
        """The hierarchy below this group as text, one node a line, arrays with shape and dtype."""
        lines = [self.name]

        def walk(group, indent, depth):
            entries = sorted(group._entries(), key=lambda e: e.name)
            for i, e in enumerate(entries):
                last = i == len(entries) - 1
                node = group[e.name]
                label = e.name if e.kind == pb.NODE_KIND_GROUP else \
                    f"{e.name} {node.shape} {node.dtype}"
                lines.append(indent + ("└── " if last else "├── ") + label)
                if e.kind == pb.NODE_KIND_GROUP and (level is None or depth + 1 < level):
                    walk(node, indent + ("    " if last else "│   "), depth + 1)

        walk(self, "", 0)
        return _Tree("\n".join(lines))

    @property
    def info(self):
        entries = self._entries()
        return _Info([("Name", self.name), ("Type", "Group"), ("Zarr format", self.zarr_format),
                      ("Read-only", self.read_only), ("Store", f"zarrd {self.store}:{self.path}"),
                      ("No. members", len(entries)),
                      ("No. arrays", sum(e.kind == pb.NODE_KIND_ARRAY for e in entries)),
                      ("No. groups", sum(e.kind == pb.NODE_KIND_GROUP for e in entries))])

    def create_array(self, name, **kwargs):
        _check_writable(self)
        kwargs.setdefault("zarr_format", self.zarr_format)
        return self._client.create_array(self.store, _join(self.path, name), **kwargs)

    def create_group(self, name, **kwargs):
        _check_writable(self)
        kwargs.setdefault("zarr_format", self.zarr_format)
        return self._client.create_group(self.store, _join(self.path, name), **kwargs)

    def require_group(self, name, **kwargs):
        """The group `name`, created when absent; an array there is an error (as zarr-python)."""
        try:
            node = self[name]
        except errors.NotFoundError:
            return self.create_group(name, **kwargs)
        if not isinstance(node, Group):
            raise TypeError(f"{node.store}:{node.path} is an array, not a group")
        return node

    def require_array(self, name, *, shape, dtype, **kwargs):
        """The array `name`, created when absent; an existing one must have `shape` and `dtype`
        (a dtype it can be read as exactly), as zarr-python requires."""
        try:
            node = self[name]
        except errors.NotFoundError:
            return self.create_array(name, shape=shape, dtype=dtype, **kwargs)
        if isinstance(node, Group):
            raise TypeError(f"{node.store}:{node.path} is a group, not an array")
        if tuple(node.shape) != tuple(int(s) for s in shape):
            raise TypeError(f"{node.store}:{node.path} has shape {node.shape}, not {tuple(shape)}")
        if node.dtype != np.dtype(dtype):
            raise TypeError(f"{node.store}:{node.path} has dtype {node.dtype}, not {np.dtype(dtype)}")
        return node

    def __repr__(self):
        return f"<zarrd.Group {self.store}:{self.path or '/'}>"


class _Tree:
    """What `Group.tree()` returns: prints as the tree."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text

    __str__ = __repr__


def consolidate_metadata(group):
    """zarr.consolidate_metadata for a zarrd group: writes its consolidated metadata, which zarrd
    keeps current on its own writes from then on; returns the group, reopened."""
    return group._client.consolidate(group.store, group.path)

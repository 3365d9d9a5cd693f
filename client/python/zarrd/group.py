"""Groups served by zarrd."""
import json

import numpy as np

from zarrd import errors
from zarrd.array import Array, Attributes, _check_writable, _Info
from zarrd.node import Node
from zarrd.v1 import zarrd_pb2 as pb


def _join(path, name):
    return f"{path}/{name}" if path else name


def read_tree(client, store, path, max_depth=None, consolidated=None):
    """The group at `path` holding the metadata of the nodes below it, `max_depth` levels (None:
    all), from one GetTree request; `consolidated` False reads the stored documents even where
    the group has consolidated metadata."""
    reply = errors.call(client.stub.GetTree, pb.GetTreeRequest(
        store=store, path=path.strip("/"), max_depth=max_depth or 0,
        ignore_consolidated=consolidated is False))
    group = Group(client, reply.nodes[0])
    start = len(group.path) + 1 if group.path else 0
    group._below = {info.path[start:]: info for info in reply.nodes[1:]}
    group._below_depth = max_depth
    return group


class Group(Node):
    """A group of a zarrd store; groups pickle like arrays (see zarrd.node).

    members(), tree(), arrays() and groups() read the metadata of every node they return with
    one GetTree request (served from the group's consolidated metadata when it has some). The
    groups among what they return hold that answer (`_below`), so walking further down asks the
    server nothing more, as a group opened with zarr-python's open_consolidated; a change made
    through such a group drops what it holds."""

    # {path relative to this group: NodeInfo} of the nodes below it, and the levels it covers
    # (None: all), when this group came from a GetTree answer; None otherwise.
    _below = None
    _below_depth = None

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
        if self._below is not None:
            return [pb.ListNodesResponse.Entry(name=name, kind=info.kind, zarr_format=info.zarr_format)
                    for name, info in sorted(self._below.items()) if "/" not in name]
        reply = errors.call(self._client.stub.ListNodes, pb.NodeRequest(store=self.store, path=self.path))
        return list(reply.nodes)

    def _node_from(self, info, below, depth):
        """A node of a GetTree answer; a group gets the part of `below` under it."""
        if info.kind == pb.NODE_KIND_ARRAY:
            node = Array(self._client, info)
        else:
            node = Group(self._client, info)
            prefix = info.path[len(self.path) + 1 if self.path else 0:] + "/"
            node._below = {name[len(prefix):]: i for name, i in below.items()
                           if name.startswith(prefix)}
            node._below_depth = None if depth is None else depth - prefix.count("/")
        node.read_only = self.read_only
        return node

    def _tree(self, max_depth=None):
        """{path relative to this group: node} of the nodes below it, `max_depth` levels (None:
        all): from what this group holds when it covers them, else from one GetTree request."""
        covered = self._below is not None and (
            self._below_depth is None or max_depth is not None and max_depth <= self._below_depth)
        if covered:
            below = self._below
        else:
            below = read_tree(self._client, self.store, self.path, max_depth)._below
        below = {name: info for name, info in below.items()
                 if max_depth is None or name.count("/") < max_depth}
        return {name: self._node_from(info, below, max_depth) for name, info in below.items()}

    def _changed(self):
        self._below = self._below_depth = None

    def keys(self):
        return [e.name for e in self._entries()]

    def __iter__(self):
        return iter(self.keys())

    def __contains__(self, name):
        return name in self.keys()

    def __getitem__(self, name):
        if self._below is not None and name in self._below:
            return self._node_from(self._below[name], self._below, self._below_depth)
        return self._client.open(self.store, _join(self.path, name),
                                 mode="r" if self.read_only else None)

    def __len__(self):
        return len(self._entries())

    def __delitem__(self, name):
        """Deletes the member `name` (an array with its chunks, a group with all it holds)."""
        _check_writable(self)
        self._changed()
        self._client.delete(self.store, _join(self.path, name))

    def arrays(self):
        return [(name, node) for name, node in sorted(self._tree(1).items())
                if not isinstance(node, Group)]

    def groups(self):
        return [(name, node) for name, node in sorted(self._tree(1).items())
                if isinstance(node, Group)]

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
        return tuple(sorted(self._tree(None if max_depth is None else max_depth + 1).items()))

    def tree(self, level=None):
        """The hierarchy below this group as text, one node a line, arrays with shape and dtype."""
        lines = [self.name]
        nodes = self._tree(level)

        def walk(prefix, indent):
            names = sorted(n for n in nodes if n.startswith(prefix) and "/" not in n[len(prefix):])
            for i, name in enumerate(names):
                last = i == len(names) - 1
                node, base = nodes[name], name[len(prefix):]
                is_group = isinstance(node, Group)
                lines.append(indent + ("└── " if last else "├── ") +
                             (base if is_group else f"{base} {node.shape} {node.dtype}"))
                if is_group:
                    walk(name + "/", indent + ("    " if last else "│   "))

        walk("", "")
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
        self._changed()
        kwargs.setdefault("zarr_format", self.zarr_format)
        return self._client.create_array(self.store, _join(self.path, name), **kwargs)

    def create_group(self, name, **kwargs):
        _check_writable(self)
        self._changed()
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

#include <spdlog/spdlog.h>

#include "common/array/node_tree.h"
#include "common/metadata/consolidated.h"
#include "common/metadata/group.h"
#include "common/metadata/json_document.h"
#include "common/metadata/node_lifecycle.h"
#include "server/service_unary.h"

namespace zarrd::server {

using internal::RetryStale;
using nlohmann::json;

namespace {

std::string NodeName(const std::string& store, const std::string& path) {
  return store + ":" + (path.empty() ? "/" : path);
}

void FillArrayInfo(const std::string& store, const std::string& path, const ArrayMetadata& m,
                   pb::NodeInfo* info) {
  info->set_store(store);
  info->set_path(path);
  info->set_kind(pb::NODE_KIND_ARRAY);
  info->set_zarr_format(static_cast<int>(m.format));
  info->set_metadata_json(m.format == ZarrFormat::kV3 ? ToV3Json(m).dump() : ToV2Json(m).dump());
  info->set_attributes_json(m.attributes.dump());
  info->set_data_type(std::string(V3Name(m.dtype)));
  info->set_numpy_dtype(m.result_typestr());
  for (int64_t s : m.shape) info->add_shape(s);
  for (int64_t c : m.chunk_shape) info->add_chunks(c);
}

void FillGroupInfo(const std::string& store, const std::string& path, const GroupMetadata& g,
                   pb::NodeInfo* info) {
  info->set_store(store);
  info->set_path(path);
  info->set_kind(pb::NODE_KIND_GROUP);
  info->set_zarr_format(static_cast<int>(g.format));
  info->set_metadata_json(g.format == ZarrFormat::kV3 ? ToV3Json(g).dump()
                                                      : json{{"zarr_format", 2}}.dump());
  info->set_attributes_json(g.attributes.dump());
}

// After a change of the node at `path`: the groups above it that have consolidated metadata
// describe the change too. A failure here leaves the change made, and says so.
Status Refreshed(const StoreHandle& store, const std::string& path) {
  Status s = RefreshConsolidatedMetadata(store, path);
  return s.ok() ? s : Status(s.code(), "done, but consolidated metadata is stale: " + s.message());
}

Result<json> ParseJsonField(const std::string& text, const char* field, bool allow_empty) {
  if (text.empty() && allow_empty) return json(nullptr);
  return ParseJsonDocument(text, field);
}

}  // namespace

grpc::ServerUnaryReactor* ZarrdService::CreateNode(grpc::CallbackServerContext*,
                                                   const pb::CreateNodeRequest* req,
                                                   pb::NodeInfo* resp) {
  return RunUnary(
      "CreateNode", req->store(), req->path(), Dispatch::kExecutor,
      [this, req, resp](const std::atomic<bool>&) -> Status {
        ZARRD_ASSIGN_OR_RETURN(NamedStore * s, state_.arrays.FindStore(req->store(), true));
        ZARRD_ASSIGN_OR_RETURN(json doc, ParseJsonField(req->metadata_json(), "metadata_json",
                                                        req->kind() == pb::NODE_KIND_GROUP));
        ZARRD_ASSIGN_OR_RETURN(json attrs,
                               ParseJsonField(req->attributes_json(), "attributes_json", true));
        if (req->kind() == pb::NODE_KIND_GROUP) {
          GroupMetadata g;
          if (doc.is_object() && doc.value("zarr_format", 3) == 2) {
            g.format = ZarrFormat::kV2;
          } else if (!doc.is_null()) {
            ZARRD_ASSIGN_OR_RETURN(g, ParseV3GroupMetadata(doc));
          }
          if (attrs.is_object()) g.attributes = attrs;
          ZARRD_RETURN_IF_ERROR(CreateGroup(s->store, req->path(), g));
          // The parents after the node: a create that fails leaves nothing behind.
          ZARRD_RETURN_IF_ERROR(CreateParentGroups(s->store, req->path(), g.format));
          ZARRD_RETURN_IF_ERROR(Refreshed(s->store, req->path()));
          FillGroupInfo(req->store(), req->path(), g, resp);
          return OkStatus();
        }
        if (req->kind() != pb::NODE_KIND_ARRAY) return InvalidArgument("kind: ARRAY or GROUP");
        auto m = doc.is_object() && doc.value("zarr_format", 0) == 2
                     ? ParseV2ArrayMetadata(doc, attrs)
                     : ParseV3ArrayMetadata(doc);
        if (!m.ok()) return m.status().WithContext("metadata_json");
        if (attrs.is_object() && m->format == ZarrFormat::kV3) m->attributes = attrs;
        ZARRD_RETURN_IF_ERROR(state_.arrays.CheckChunkLimit(*m, "metadata_json"));
        state_.arrays.Forget(req->store(), req->path());
        ZARRD_ASSIGN_OR_RETURN(auto array,
                               Array::Create(s->store, req->path(), *m, req->overwrite()));
        ZARRD_RETURN_IF_ERROR(CreateParentGroups(s->store, req->path(), m->format));
        ZARRD_RETURN_IF_ERROR(Refreshed(s->store, req->path()));
        FillArrayInfo(req->store(), req->path(), *array->metadata(), resp);
        return OkStatus();
      });
}

grpc::ServerUnaryReactor* ZarrdService::GetNode(grpc::CallbackServerContext*,
                                                const pb::NodeRequest* req, pb::NodeInfo* resp) {
  return RunUnary(
      "GetNode", req->store(), req->path(), Dispatch::kShort,
      [this, req, resp](const std::atomic<bool>&) -> Status {
        ZARRD_ASSIGN_OR_RETURN(NamedStore * s, state_.arrays.FindStore(req->store(), false));
        auto array = state_.arrays.Open(req->store(), req->path());
        if (array.ok()) {
          FillArrayInfo(req->store(), req->path(), *(*array)->metadata(), resp);
          return OkStatus();
        }
        if (array.status().code() != StatusCode::kFailedPrecondition &&
            array.status().code() != StatusCode::kNotFound) {
          return array.status();
        }
        auto group = OpenGroup(*s->store, req->path());
        if (!group.ok()) {
          return group.status().code() == StatusCode::kNotFound
                     ? NotFound("no array or group at " + NodeName(req->store(), req->path()))
                     : group.status();
        }
        FillGroupInfo(req->store(), req->path(), *group, resp);
        return OkStatus();
      });
}

grpc::ServerUnaryReactor* ZarrdService::ListNodes(grpc::CallbackServerContext*,
                                                  const pb::NodeRequest* req,
                                                  pb::ListNodesResponse* resp) {
  return RunUnary("ListNodes", req->store(), req->path(), Dispatch::kExecutor,
                  [this, req, resp](const std::atomic<bool>&) -> Status {
                    ZARRD_ASSIGN_OR_RETURN(NamedStore * s,
                                           state_.arrays.FindStore(req->store(), false));
                    ZARRD_ASSIGN_OR_RETURN(auto children, ListChildren(*s->store, req->path()));
                    for (const auto& c : children) {
                      if (!c.error.empty()) {  // skipped: its siblings stay listable
                        spdlog::warn("ListNodes {}: skipping child \"{}\": {}",
                                     NodeName(req->store(), req->path()), c.name, c.error);
                        continue;
                      }
                      auto* e = resp->add_nodes();
                      e->set_name(c.name);
                      e->set_kind(c.kind == NodeEntry::Kind::kArray ? pb::NODE_KIND_ARRAY
                                                                    : pb::NODE_KIND_GROUP);
                      e->set_zarr_format(static_cast<int>(c.format));
                    }
                    return OkStatus();
                  });
}

grpc::ServerUnaryReactor* ZarrdService::GetTree(grpc::CallbackServerContext*,
                                                const pb::GetTreeRequest* req,
                                                pb::GetTreeResponse* resp) {
  return RunUnary(
      "GetTree", req->store(), req->path(), Dispatch::kExecutor,
      [this, req, resp](const std::atomic<bool>&) -> Status {
        ZARRD_ASSIGN_OR_RETURN(NamedStore * s, state_.arrays.FindStore(req->store(), false));
        auto tree =
            ReadNodeTree(s->store, req->path(), req->max_depth(), !req->ignore_consolidated());
        if (!tree.ok()) {
          if (tree.status().code() == StatusCode::kNotFound) {
            return NotFound("no group at " + NodeName(req->store(), req->path()));
          }
          return tree.status();
        }
        for (const TreeNode& node : tree->nodes) {
          if (const auto* array = std::get_if<ArrayMetadata>(&node.metadata)) {
            FillArrayInfo(req->store(), node.path, *array, resp->add_nodes());
          } else {
            FillGroupInfo(req->store(), node.path, std::get<GroupMetadata>(node.metadata),
                          resp->add_nodes());
          }
        }
        resp->set_consolidated(tree->consolidated);
        return OkStatus();
      });
}

grpc::ServerUnaryReactor* ZarrdService::DeleteNode(grpc::CallbackServerContext*,
                                                   const pb::NodeRequest* req,
                                                   pb::DeleteNodeResponse* resp) {
  return RunUnary(
      "DeleteNode", req->store(), req->path(), Dispatch::kExecutor,
      [this, req, resp](const std::atomic<bool>&) -> Status {
        ZARRD_ASSIGN_OR_RETURN(NamedStore * s, state_.arrays.FindStore(req->store(), true));
        ZARRD_ASSIGN_OR_RETURN(size_t deleted, ::zarrd::DeleteNode(s->store, req->path()));
        state_.arrays.Forget(req->store(), req->path());
        resp->set_keys_deleted(deleted);
        ZARRD_RETURN_IF_ERROR(Refreshed(s->store, req->path()));
        return OkStatus();
      });
}

grpc::ServerUnaryReactor* ZarrdService::SetAttributes(grpc::CallbackServerContext*,
                                                      const pb::SetAttributesRequest* req,
                                                      pb::NodeInfo* resp) {
  return RunUnary(
      "SetAttributes", req->store(), req->path(), Dispatch::kExecutor,
      RetryStale([this, req, resp](const std::atomic<bool>&) -> Status {
        ZARRD_ASSIGN_OR_RETURN(NamedStore * s, state_.arrays.FindStore(req->store(), true));
        ZARRD_ASSIGN_OR_RETURN(json attrs,
                               ParseJsonField(req->attributes_json(), "attributes_json", false));
        auto array = state_.arrays.Open(req->store(), req->path());
        if (array.ok()) {
          ZARRD_RETURN_IF_ERROR((*array)->SetAttributes(attrs));
          ZARRD_RETURN_IF_ERROR(Refreshed(s->store, req->path()));
          resp->Clear();
          FillArrayInfo(req->store(), req->path(), *(*array)->metadata(), resp);
          return OkStatus();
        }
        ZARRD_RETURN_IF_ERROR(SetGroupAttributes(s->store, req->path(), attrs));
        ZARRD_RETURN_IF_ERROR(Refreshed(s->store, req->path()));
        ZARRD_ASSIGN_OR_RETURN(auto g, OpenGroup(*s->store, req->path()));
        FillGroupInfo(req->store(), req->path(), g, resp);
        return OkStatus();
      }));
}

grpc::ServerUnaryReactor* ZarrdService::Resize(grpc::CallbackServerContext*,
                                               const pb::ResizeRequest* req, pb::NodeInfo* resp) {
  return RunUnary("Resize", req->store(), req->path(), Dispatch::kExecutor,
                  RetryStale([this, req, resp](const std::atomic<bool>&) -> Status {
                    ZARRD_RETURN_IF_ERROR(state_.arrays.FindStore(req->store(), true));
                    ZARRD_ASSIGN_OR_RETURN(auto array,
                                           state_.arrays.Open(req->store(), req->path()));
                    std::vector<int64_t> shape(req->shape().begin(), req->shape().end());
                    ZARRD_RETURN_IF_ERROR(array->Resize(shape));
                    ZARRD_RETURN_IF_ERROR(Refreshed(array->store(), req->path()));
                    resp->Clear();
                    FillArrayInfo(req->store(), req->path(), *array->metadata(), resp);
                    return OkStatus();
                  }));
}

grpc::ServerUnaryReactor* ZarrdService::Consolidate(grpc::CallbackServerContext*,
                                                    const pb::ConsolidateRequest* req,
                                                    pb::ConsolidateResponse* resp) {
  return RunUnary("Consolidate", req->store(), req->path(), Dispatch::kExecutor,
                  [this, req, resp](const std::atomic<bool>&) -> Status {
                    ZARRD_ASSIGN_OR_RETURN(NamedStore * s,
                                           state_.arrays.FindStore(req->store(), true));
                    ZARRD_ASSIGN_OR_RETURN(auto done, ConsolidateMetadata(s->store, req->path()));
                    resp->set_zarr_format(static_cast<int>(done.format));
                    resp->set_key(done.key);
                    resp->set_entries(done.entries);
                    return OkStatus();
                  });
}

}  // namespace zarrd::server

// Orthogonal, point and mask selections: resolved against the size limits, read and written on
// the host by the engine's per-chunk plan.
#include <algorithm>
#include <limits>

#include "server/service.h"

namespace zarrd::server {

void Describe(const ArrayMetadata& m, const ResolvedAdvanced& sel, pb::ArrayDescriptor* out) {
  out->set_data_type(std::string(V3Name(m.dtype)));
  for (int64_t s : sel.result_shape) out->add_shape(s);
  out->set_nbytes(static_cast<uint64_t>(sel.num_elements) * ItemSize(m.dtype));
}

Result<ResolvedAdvanced> ZarrdService::ResolveAdvanced(const Array& array, const std::string& path,
                                                       const pb::Selection& selection,
                                                       bool for_input) const {
  const std::string where = "array '" + path + "'";
  // Index lists cost the server 8 bytes an index, as the input it writes costs its bytes.
  const uint64_t limit = for_input ? config_.max_request_bytes : config_.max_result_bytes;
  if (selection.ByteSizeLong() > limit) {
    return ResourceExhausted(where + ": the selection's " +
                             std::to_string(selection.ByteSizeLong()) + " bytes exceed " +
                             (for_input ? "max_request_bytes" : "max_result_bytes"));
  }
  auto m = array.metadata();
  const int64_t max_elements = static_cast<int64_t>(
      std::min<uint64_t>(limit / ItemSize(m->dtype), std::numeric_limits<int64_t>::max()));
  auto resolved = AdvancedFromWire(selection, m->shape, max_elements);
  if (!resolved.ok()) return resolved.status().WithContext(where);
  if (resolved->num_elements > max_elements) {  // a mask's count is known once it is resolved
    return ResourceExhausted(where + ": the selection's " + std::to_string(resolved->num_elements) +
                             " elements exceed " +
                             (for_input ? "max_request_bytes" : "max_result_bytes"));
  }
  return resolved;
}

Status ZarrdService::GetAdvanced(const Array& array, const pb::GetItemRequest& req,
                                 PrototypeKind prototype, const IoOptions& io,
                                 pb::GetItemResponse* resp) {
  if (prototype == PrototypeKind::kDevice) {
    return InvalidArgument("array '" + req.path() +
                           "': orthogonal, point and mask selections are served as HOST results");
  }
  ZARRD_ASSIGN_OR_RETURN(auto sel, ResolveAdvanced(array, req.path(), req.selection(), false));
  Describe(*array.metadata(), sel, resp->mutable_array());
  resp->mutable_array()->set_prototype(pb::PROTOTYPE_HOST);
  const uint64_t nbytes = resp->array().nbytes();
  if (req.has_host_region()) {
    ZARRD_ASSIGN_OR_RETURN(auto region, host_regions_.Find(req.host_region().region_id()));
    if (req.host_region().nbytes() != nbytes) {
      return InvalidArgument("host_region.nbytes is " + std::to_string(req.host_region().nbytes()) +
                             ", the result has " + std::to_string(nbytes));
    }
    ZARRD_ASSIGN_OR_RETURN(auto view, region->Slice(req.host_region().offset(), nbytes));
    ZARRD_RETURN_IF_ERROR(host_regions_.CheckIntact(*region, true));
    ZARRD_RETURN_IF_ERROR(array.ReadAdvanced(sel, view.data(), view.size(), io));
    ZARRD_RETURN_IF_ERROR(host_regions_.CheckIntact(*region, false));
    metrics_->BytesRead("host", nbytes);
    return OkStatus();
  }
  if (nbytes > config_.max_unary_result_bytes) {
    return UnaryResultTooLarge(nbytes, config_.max_unary_result_bytes);
  }
  std::string* data = resp->mutable_data();
  data->resize(nbytes);
  ZARRD_RETURN_IF_ERROR(array.ReadAdvanced(sel, data->data(), data->size(), io));
  metrics_->BytesRead("host", nbytes);
  return OkStatus();
}

Status ZarrdService::SetAdvanced(Array& array, const pb::SetItemRequest& req, const IoOptions& io,
                                 pb::SetItemResponse* resp) {
  if (req.lease_id() != 0 || req.has_device_region()) {
    return InvalidArgument("array '" + req.path() +
                           "': orthogonal and point selections are written from HOST input");
  }
  ZARRD_ASSIGN_OR_RETURN(auto sel, ResolveAdvanced(array, req.path(), req.selection(), true));
  if (req.has_host_region()) {
    ZARRD_ASSIGN_OR_RETURN(auto region, host_regions_.Find(req.host_region().region_id()));
    ZARRD_ASSIGN_OR_RETURN(auto view,
                           region->Slice(req.host_region().offset(), req.host_region().nbytes()));
    ZARRD_RETURN_IF_ERROR(host_regions_.CheckIntact(*region, true));
    ZARRD_RETURN_IF_ERROR(array.WriteAdvanced(sel, view.data(), view.size(), io));
    ZARRD_RETURN_IF_ERROR(host_regions_.CheckIntact(*region, false));
    resp->set_nbytes_written(view.size());
    metrics_->BytesWritten("host_region", view.size());
    return OkStatus();
  }
  if (req.offset() != 0) return InvalidArgument("offset: only SetItemStream takes pieces");
  ZARRD_RETURN_IF_ERROR(array.WriteAdvanced(sel, req.data().data(), req.data().size(), io));
  resp->set_nbytes_written(req.data().size());
  metrics_->BytesWritten("bytes", req.data().size());
  return OkStatus();
}

}  // namespace zarrd::server

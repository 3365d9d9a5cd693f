#include "server/prepared_request.h"

#include <algorithm>
#include <limits>

#include "common/util/checked.h"
#include "proto/selection_wire.h"
#include "server/string_wire.h"

namespace zarrd::server {
namespace {

std::string ArrayName(const std::string& path) { return "array '" + path + "'"; }

void Describe(const ArrayMetadata& m, const std::vector<int64_t>& shape, int64_t elements,
              pb::ArrayDescriptor* out) {
  out->set_data_type(std::string(V3Name(m.dtype)));
  out->set_numpy_dtype(m.result_typestr());
  for (int64_t s : shape) out->add_shape(s);
  out->set_nbytes(IsStringType(m.dtype)
                      ? FixedStringWireBytes(m, static_cast<uint64_t>(elements))
                      : SaturatingMul(static_cast<uint64_t>(elements), ItemSize(m.dtype)));
}

// The bytes the limits are checked on before reading or writing: for variable-length strings,
// 4 an element (their length), also a bound on the 8-byte handles the engine moves for them.
uint64_t LimitBytes(const ArrayMetadata& m, uint64_t elements, uint64_t nbytes) {
  return IsStringType(m.dtype) ? MinStringWireBytes(m, elements) : nbytes;
}

// An orthogonal, point or mask selection resolved against `limit` bytes of result or input
// (index lists cost the server 8 bytes an index, as the input they write costs its bytes).
Result<ResolvedAdvanced> ResolveAdvanced(const ArrayMetadata& m, const std::string& path,
                                         const pb::Selection& selection, uint64_t limit,
                                         const char* limit_name) {
  if (selection.ByteSizeLong() > limit) {
    return ResourceExhausted(ArrayName(path) + ": the selection's " +
                             std::to_string(selection.ByteSizeLong()) + " bytes exceed " +
                             limit_name);
  }
  const uint64_t per_element = IsStringType(m.dtype) ? MinStringWireBytes(m, 1) : ItemSize(m.dtype);
  const int64_t max_elements = static_cast<int64_t>(std::min<uint64_t>(
      limit / std::max<uint64_t>(per_element, 1), std::numeric_limits<int64_t>::max()));
  auto resolved = AdvancedFromWire(selection, m.shape, max_elements);
  if (!resolved.ok()) return resolved.status().WithContext(ArrayName(path));
  if (resolved->num_elements > max_elements) {  // a mask's count is known once it is resolved
    return ResourceExhausted(ArrayName(path) + ": the selection's " +
                             std::to_string(resolved->num_elements) + " elements exceed " +
                             limit_name);
  }
  return resolved;
}

Result<ResolvedSelection> ResolveBasic(const ArrayMetadata& m, const std::string& path,
                                       const pb::Selection& selection) {
  auto basic = BasicFromWire(selection, m.shape, m.chunk_shape);
  if (!basic.ok()) return basic.status().WithContext(ArrayName(path));
  auto resolved = ResolveSelection(*basic, m.shape);
  if (!resolved.ok()) return resolved.status().WithContext(ArrayName(path));
  return resolved;
}

}  // namespace

Status CheckLimit(const std::string& path, const char* what, uint64_t nbytes, uint64_t limit,
                  const char* limit_name) {
  if (nbytes <= limit) return OkStatus();
  return ResourceExhausted(ArrayName(path) + ": " + what + " of " + std::to_string(nbytes) +
                           " bytes exceeds " + limit_name + " (" + std::to_string(limit) + ")");
}

Result<PrototypeKind> ResolvePrototype(const ServerConfig& config, const pb::GetItemRequest& req,
                                       size_t rank) {
  if (req.prototype() == pb::PROTOTYPE_HOST) {
    if (req.has_device_region()) return InvalidArgument("device_region needs prototype DEVICE");
    return PrototypeKind::kHost;
  }
  if (req.prototype() == pb::PROTOTYPE_DEVICE || req.has_device_region()) {
    if (req.has_host_region()) return InvalidArgument("host_region needs prototype HOST");
    return PrototypeKind::kDevice;
  }
  const ArrayOverride* o = FindOverride(config, req.store(), req.path());
  if (o != nullptr && o->prototype) return *o->prototype;
  if (rank <= 1 || req.has_host_region()) return PrototypeKind::kHost;
  return config.default_prototype;
}

Result<PreparedRead> PrepareRead(const ServerConfig& config, const pb::GetItemRequest& req,
                                 std::shared_ptr<Array> array) {
  PreparedRead read;
  read.metadata = array->metadata();
  read.array = std::move(array);
  const ArrayMetadata& m = *read.metadata;
  ZARRD_ASSIGN_OR_RETURN(read.prototype, ResolvePrototype(config, req, m.rank()));
  if (const ArrayOverride* o = FindOverride(config, req.store(), req.path())) {
    read.gpu_decode = o->gpu_decode;
  }
  if (IsAdvanced(req.selection())) {
    ZARRD_ASSIGN_OR_RETURN(read.advanced,
                           ResolveAdvanced(m, req.path(), req.selection(), config.max_result_bytes,
                                           "max_result_bytes"));
    Describe(m, read.advanced->result_shape, read.advanced->num_elements, &read.descriptor);
  } else {
    ZARRD_ASSIGN_OR_RETURN(read.selection, ResolveBasic(m, req.path(), req.selection()));
    Describe(m, read.selection.result_shape, read.selection.num_elements(), &read.descriptor);
  }
  read.strings_budget = SaturatingAdd(config.max_result_bytes, config.max_chunk_bytes);
  read.descriptor.set_prototype(read.prototype == PrototypeKind::kDevice ? pb::PROTOTYPE_DEVICE
                                                                         : pb::PROTOTYPE_HOST);
  if (read.strings() && read.prototype == PrototypeKind::kDevice) {
    return InvalidArgument(ArrayName(req.path()) + " holds strings (" + m.result_typestr() +
                           "): DEVICE results are numbers; read it with prototype HOST");
  }
  ZARRD_RETURN_IF_ERROR(CheckLimit(req.path(), "result",
                                   LimitBytes(m, read.num_elements(), read.nbytes()),
                                   config.max_result_bytes, "max_result_bytes"));
  return read;
}

uint64_t PreparedRead::num_elements() const {
  return static_cast<uint64_t>(advanced ? advanced->num_elements : selection.num_elements());
}

Status PreparedRead::ReadInto(void* out, size_t n, const IoOptions& io) const {
  return advanced ? array->ReadAdvanced(*advanced, out, n, io)
                  : array->ReadResolved(selection, out, n, io);
}

Result<std::string> PreparedRead::ReadStrings(const IoOptions& io, uint64_t limit,
                                              const std::function<Status(uint64_t)>& too_large) {
  const uint64_t n = num_elements();
  StringArena arena(strings_budget, "max_result_bytes + max_chunk_bytes");
  IoOptions with_strings = io;
  with_strings.strings = &arena;
  Bytes handles(n * kStringHandleSize);  // n is bounded: its least wire size passed the limit
  ZARRD_RETURN_IF_ERROR(ReadInto(handles.data(), handles.size(), with_strings));
  const uint64_t nbytes = StringWireBytes(*metadata, handles.data(), n);
  if (nbytes > limit) return too_large(nbytes);
  std::string wire = StringsToWire(*metadata, handles.data(), n);
  descriptor.set_nbytes(wire.size());
  return wire;
}

Result<PreparedWrite> PrepareWrite(const ServerConfig& config, const pb::Selection& selection,
                                   const std::string& path, std::shared_ptr<Array> array) {
  PreparedWrite write;
  write.strings_budget = SaturatingAdd(config.max_request_bytes, config.max_chunk_bytes);
  auto m = array->metadata();
  write.array = std::move(array);
  if (IsAdvanced(selection)) {
    ZARRD_ASSIGN_OR_RETURN(
        write.advanced,
        ResolveAdvanced(*m, path, selection, config.max_request_bytes, "max_request_bytes"));
    write.nbytes =
        SaturatingMul(static_cast<uint64_t>(write.advanced->num_elements), ItemSize(m->dtype));
  } else {
    ZARRD_ASSIGN_OR_RETURN(write.selection, ResolveBasic(*m, path, selection));
    write.nbytes = write.selection.num_bytes(ItemSize(m->dtype));
  }
  if (IsStringType(m->dtype)) {
    write.nbytes = MinStringWireBytes(*m, write.num_elements());
    write.variable_size = m->string_width == 0;
  }
  ZARRD_RETURN_IF_ERROR(
      CheckLimit(path, "input", write.nbytes, config.max_request_bytes, "max_request_bytes"));
  return write;
}

uint64_t PreparedWrite::num_elements() const {
  return static_cast<uint64_t>(advanced ? advanced->num_elements : selection.num_elements());
}

Status PreparedWrite::WriteFrom(const void* in, size_t n, const IoOptions& io) const {
  auto m = array->metadata();
  if (IsStringType(m->dtype)) {
    StringArena arena(strings_budget, "max_request_bytes + max_chunk_bytes");
    auto handles =
        StringsFromWire(*m, ByteView(static_cast<const uint8_t*>(in), n), num_elements(), arena);
    if (!handles.ok()) return handles.status().WithContext(ArrayName(array->path()));
    IoOptions with_strings = io;
    with_strings.strings = &arena;
    if (advanced)
      return array->WriteAdvanced(*advanced, handles->data(), handles->size(), with_strings);
    HostSource source(handles->data(), handles->size(), kStringHandleSize);
    return array->WriteFromSource(selection, source, with_strings);
  }
  if (advanced) return array->WriteAdvanced(*advanced, in, n, io);
  HostSource source(static_cast<const uint8_t*>(in), n, ItemSize(array->metadata()->dtype));
  return array->WriteFromSource(selection, source, io);
}

}  // namespace zarrd::server

// What every read and write handler does before the engine runs, unary or streamed: the array
// opened, the selection resolved (basic, or orthogonal / points / mask), the prototype chosen,
// the size limits checked, the result described.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/array/array.h"
#include "server/config.h"
#include "zarrd/v1/zarrd.pb.h"

namespace zarrd::server {

namespace pb = ::zarrd::v1;

// The request's prototype, else the array's override, else HOST for arrays of rank 0 or 1
// (coordinates), else the server's default.
Result<PrototypeKind> ResolvePrototype(const ServerConfig& config, const pb::GetItemRequest& req,
                                       size_t rank);

// RESOURCE_EXHAUSTED naming the array at `path` when `what` (the result, the input) of `nbytes`
// passes `limit` (the config key `limit_name`).
Status CheckLimit(const std::string& path, const char* what, uint64_t nbytes, uint64_t limit,
                  const char* limit_name);

struct PreparedRead {
  std::shared_ptr<Array> array;
  std::shared_ptr<const ArrayMetadata> metadata;
  PrototypeKind prototype = PrototypeKind::kHost;
  std::optional<GpuDecodeMode> gpu_decode;   // the array's override of the server's gpu_decode
  ResolvedSelection selection;               // a basic selection, unless
  std::optional<ResolvedAdvanced> advanced;  // an orthogonal, point or mask one
  pb::ArrayDescriptor descriptor;            // the result as the reply describes it
  // The memory a read's strings may take (whole chunks' strings, however few it selects): its
  // result's limit and one chunk more, max_result_bytes + max_chunk_bytes.
  uint64_t strings_budget = 0;

  // The result's bytes; for variable-length strings, 0 until ReadStrings tells.
  uint64_t nbytes() const { return descriptor.nbytes(); }
  uint64_t num_elements() const;
  bool strings() const { return IsStringType(metadata->dtype); }
  // Reads the selection (all of it: `n` is nbytes()) into host memory. Not for string arrays.
  Status ReadInto(void* out, size_t n, const IoOptions& io) const;
  // String arrays: reads the selection and returns its wire form (server/string_wire.h), which
  // the descriptor's nbytes then gives. RESOURCE_EXHAUSTED when the strings of the chunks read
  // pass strings_budget in memory; too_large(wire bytes) when the wire form passes `limit`.
  Result<std::string> ReadStrings(const IoOptions& io, uint64_t limit,
                                  const std::function<Status(uint64_t)>& too_large);
};

// Prepares a GetItem or GetItemStream request of `array` (opened for req.store(), req.path()).
// Errors name the array; a result past max_result_bytes is RESOURCE_EXHAUSTED.
Result<PreparedRead> PrepareRead(const ServerConfig& config, const pb::GetItemRequest& req,
                                 std::shared_ptr<Array> array);

struct PreparedWrite {
  std::shared_ptr<Array> array;
  ResolvedSelection selection;
  std::optional<ResolvedAdvanced> advanced;
  uint64_t nbytes = 0;  // the input the selection takes (the least, for variable-length strings)
  bool variable_size = false;  // variable-length strings: the input's size is what it holds
  // The memory a write's strings may take (the input's and the chunks' it rewrites in part):
  // max_request_bytes + max_chunk_bytes.
  uint64_t strings_budget = 0;

  uint64_t num_elements() const;
  // Writes the input (`n` must be nbytes(), unless variable_size) from host memory.
  Status WriteFrom(const void* in, size_t n, const IoOptions& io) const;
};

// Prepares a SetItem or SetItemStream request's `selection` of `array` (at `path`). An input past
// max_request_bytes is RESOURCE_EXHAUSTED.
Result<PreparedWrite> PrepareWrite(const ServerConfig& config, const pb::Selection& selection,
                                   const std::string& path, std::shared_ptr<Array> array);

}  // namespace zarrd::server

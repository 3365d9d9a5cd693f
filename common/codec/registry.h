// The codecs zarrd knows. Each is declared once, in its own file (codec_<name>.cc), by a
// Register<Name>Codec function that codec_registry.cc calls: its v3 names, its kind, the
// numcodecs ids it reads as a v2 `compressor`, its factory and what can decode it. The v3
// `codecs` parser and the v2 compressor mapping look codecs up here and nowhere else.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/codec/codec.h"

namespace zarrd {

// In the order of CodecDescriptor::make's alternatives.
enum class CodecKind { kArrayToArray, kArrayToBytes, kBytesToBytes };
const char* CodecKindName(CodecKind kind);

// Builds a codec from its configuration (a JSON object) for chunks of `spec` as they reach it in
// the chain.
template <typename Codec>
using CodecFactory = Result<std::unique_ptr<Codec>> (*)(const nlohmann::json& config,
                                                        const ChunkSpec& spec);

using AnyCodec =
    std::variant<std::unique_ptr<ArrayToArrayCodec>, std::unique_ptr<ArrayToBytesCodec>,
                 std::unique_ptr<BytesToBytesCodec>>;

struct CodecDescriptor {
  // Names a v3 `codecs` entry may give; each v2 id also answers to "numcodecs.<id>", the name
  // zarr-python 3 writes for numcodecs' codecs.
  std::vector<std::string> v3_names;
  // numcodecs ids read in v2 `filters` and, for bytes->bytes codecs, as a v2 `compressor`.
  std::vector<std::string> v2_ids;
  std::variant<CodecFactory<ArrayToArrayCodec>, CodecFactory<ArrayToBytesCodec>,
               CodecFactory<BytesToBytesCodec>>
      make;
  // For numcodecs' configuration (v2 ids, "numcodecs.<id>") where it differs from the v3
  // configuration; null: `make`.
  CodecFactory<BytesToBytesCodec> make_numcodecs = nullptr;
  bool host_decode = true;
  // A batched GPU decoder exists (common/decode cores, common/cuda kernels).
  bool device_decode = false;

  CodecKind kind() const { return static_cast<CodecKind>(make.index()); }
  // The first v3 name, else "numcodecs.<first v2 id>".
  std::string name() const;
};

class CodecRegistry {
 public:
  CodecRegistry() = default;
  CodecRegistry(const CodecRegistry&) = delete;
  CodecRegistry& operator=(const CodecRegistry&) = delete;

  // zarrd's codecs, registered on the first call (thread-safe); never destroyed, so decodes
  // still running at exit find it.
  static const CodecRegistry& Builtin();

  // Refuses a codec without a name, a v2 id on an array->bytes codec, and a name or id another
  // codec has.
  Status Register(CodecDescriptor codec);

  const CodecDescriptor* FindV3(std::string_view name) const;
  const CodecDescriptor* FindV2(std::string_view id) const;
  // Sorted; V3Names includes the "numcodecs.<id>" names.
  std::vector<std::string> V3Names() const;
  std::vector<std::string> V2Ids() const;
  const std::deque<CodecDescriptor>& codecs() const { return codecs_; }

  // The codec of a v3 `codecs` entry; an unknown name is INVALID_ARGUMENT listing V3Names().
  Result<AnyCodec> MakeV3(std::string_view name, const nlohmann::json& config,
                          const ChunkSpec& spec) const;
  // A v2 compressor (numcodecs JSON with "id", a bytes->bytes codec); an unknown id is
  // INVALID_ARGUMENT listing V2Ids().
  // `string_width`: the length of the fixed-length strings (dtype kString or kBytes) that
  // numcodecs compresses as items of their numpy size (blosc's typesize).
  Result<std::unique_ptr<BytesToBytesCodec>> MakeV2Compressor(const nlohmann::json& compressor,
                                                              DataType dtype,
                                                              size_t string_width = 0) const;
  // An entry of v2 `filters` (numcodecs JSON with "id") for chunks of `spec` as they reach it:
  // an array->array or a bytes->bytes codec.
  Result<AnyCodec> MakeV2Filter(const nlohmann::json& filter, const ChunkSpec& spec) const;

 private:
  struct V3Entry {
    const CodecDescriptor* codec;
    bool numcodecs;  // named "numcodecs.<id>": numcodecs' configuration
  };

  std::deque<CodecDescriptor> codecs_;  // stable addresses for the maps
  std::map<std::string, V3Entry, std::less<>> v3_;
  std::map<std::string, const CodecDescriptor*, std::less<>> v2_;
};

// CodecRegistry::Builtin().MakeV2Compressor.
Result<std::unique_ptr<BytesToBytesCodec>> MakeV2Compressor(const nlohmann::json& compressor,
                                                            DataType dtype,
                                                            size_t string_width = 0);

// A codec of a kind the caller knows, by its v3 name (e.g. "bytes" for v2 metadata).
template <typename Codec>
Result<std::unique_ptr<Codec>> MakeCodec(std::string_view name, const nlohmann::json& config,
                                         const ChunkSpec& spec) {
  ZARRD_ASSIGN_OR_RETURN(AnyCodec codec, CodecRegistry::Builtin().MakeV3(name, config, spec));
  auto* typed = std::get_if<std::unique_ptr<Codec>>(&codec);
  if (!typed) return Internal("codec \"" + std::string(name) + "\" is of another kind");
  return std::move(*typed);
}

}  // namespace zarrd

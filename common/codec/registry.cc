#include "common/codec/registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace zarrd {

using nlohmann::json;

namespace internal {
// One per codec file. Called from Builtin() rather than from static initializers: the linker
// keeps a static library's object files only when something refers to them.
Status RegisterTransposeCodec(CodecRegistry& registry);
Status RegisterBytesCodec(CodecRegistry& registry);
Status RegisterShardingCodec(CodecRegistry& registry);
Status RegisterZstdCodec(CodecRegistry& registry);
Status RegisterGzipCodecs(CodecRegistry& registry);
Status RegisterBloscCodec(CodecRegistry& registry);
Status RegisterBz2Codec(CodecRegistry& registry);
Status RegisterCrc32cCodec(CodecRegistry& registry);
Status RegisterDeltaCodec(CodecRegistry& registry);
Status RegisterFixedScaleOffsetCodec(CodecRegistry& registry);
Status RegisterQuantizeCodec(CodecRegistry& registry);
Status RegisterBitRoundCodec(CodecRegistry& registry);
Status RegisterAsTypeCodec(CodecRegistry& registry);
Status RegisterShuffleCodec(CodecRegistry& registry);
Status RegisterVLenCodecs(CodecRegistry& registry);
Status RegisterCategorizeCodec(CodecRegistry& registry);
}  // namespace internal

namespace {

constexpr std::string_view kNumcodecsPrefix = "numcodecs.";

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

Result<AnyCodec> Wrap(auto made) {
  if (!made.ok()) return made.status();
  return AnyCodec(std::move(made).value());
}

}  // namespace

const char* CodecKindName(CodecKind kind) {
  switch (kind) {
    case CodecKind::kArrayToArray:
      return "array->array";
    case CodecKind::kArrayToBytes:
      return "array->bytes";
    case CodecKind::kBytesToBytes:
      return "bytes->bytes";
  }
  return "?";
}

std::string CodecDescriptor::name() const {
  if (!v3_names.empty()) return v3_names.front();
  return v2_ids.empty() ? std::string() : std::string(kNumcodecsPrefix) + v2_ids.front();
}

const CodecRegistry& CodecRegistry::Builtin() {
  static const CodecRegistry* registry = [] {
    auto* r = new CodecRegistry;
    for (auto* add : {internal::RegisterTransposeCodec, internal::RegisterBytesCodec,
                      internal::RegisterShardingCodec, internal::RegisterZstdCodec,
                      internal::RegisterGzipCodecs, internal::RegisterBloscCodec,
                      internal::RegisterBz2Codec, internal::RegisterCrc32cCodec,
                      internal::RegisterDeltaCodec, internal::RegisterFixedScaleOffsetCodec,
                      internal::RegisterQuantizeCodec, internal::RegisterBitRoundCodec,
                      internal::RegisterAsTypeCodec, internal::RegisterShuffleCodec,
                      internal::RegisterVLenCodecs, internal::RegisterCategorizeCodec}) {
      Status s = add(*r);
      if (!s.ok()) {
        std::fprintf(stderr, "zarrd: codec registry: %s\n", s.ToString().c_str());
        std::abort();
      }
    }
    return r;
  }();
  return *registry;
}

Status CodecRegistry::Register(CodecDescriptor codec) {
  const std::string name = codec.name();
  if (name.empty()) return InvalidArgument("codec registry: a codec needs a v3 name or a v2 id");
  if (!codec.v2_ids.empty() && codec.kind() == CodecKind::kArrayToBytes) {
    return InvalidArgument("codec registry: \"" + name +
                           "\" is array->bytes; v2 ids name filters and compressors");
  }
  std::vector<std::pair<std::string, bool>> v3;  // name, numcodecs
  for (const auto& n : codec.v3_names) v3.emplace_back(n, false);
  for (const auto& id : codec.v2_ids) v3.emplace_back(std::string(kNumcodecsPrefix) + id, true);
  for (const auto& entry : v3) {
    const std::string& n = entry.first;
    if (v3_.count(n) ||
        std::count_if(v3.begin(), v3.end(), [&](auto& e) { return e.first == n; }) > 1) {
      return AlreadyExists("codec registry: v3 name \"" + n + "\" is registered twice");
    }
  }
  for (const auto& id : codec.v2_ids) {
    if (v2_.count(id) || std::count(codec.v2_ids.begin(), codec.v2_ids.end(), id) > 1) {
      return AlreadyExists("codec registry: v2 id \"" + id + "\" is registered twice");
    }
  }
  if (codec.kind() == CodecKind::kBytesToBytes && !codec.make_numcodecs) {
    codec.make_numcodecs = std::get<CodecFactory<BytesToBytesCodec>>(codec.make);
  }
  const CodecDescriptor* stored = &codecs_.emplace_back(std::move(codec));
  for (const auto& [n, numcodecs] : v3) v3_.emplace(n, V3Entry{stored, numcodecs});
  for (const auto& id : stored->v2_ids) v2_.emplace(id, stored);
  return OkStatus();
}

const CodecDescriptor* CodecRegistry::FindV3(std::string_view name) const {
  auto it = v3_.find(name);
  return it == v3_.end() ? nullptr : it->second.codec;
}

const CodecDescriptor* CodecRegistry::FindV2(std::string_view id) const {
  auto it = v2_.find(id);
  return it == v2_.end() ? nullptr : it->second;
}

std::vector<std::string> CodecRegistry::V3Names() const {
  std::vector<std::string> names;
  for (const auto& [name, entry] : v3_) names.push_back(name);
  return names;  // a std::map: sorted
}

std::vector<std::string> CodecRegistry::V2Ids() const {
  std::vector<std::string> ids;
  for (const auto& [id, codec] : v2_) ids.push_back(id);
  return ids;
}

Result<AnyCodec> CodecRegistry::MakeV3(std::string_view name, const json& config,
                                       const ChunkSpec& spec) const {
  auto it = v3_.find(name);
  if (it == v3_.end()) {
    return InvalidArgument("codecs: unsupported codec \"" + std::string(name) + "\" (zarrd has " +
                           Join(V3Names()) + ")");
  }
  const CodecDescriptor& codec = *it->second.codec;
  if (it->second.numcodecs && codec.make_numcodecs) {
    return Wrap(codec.make_numcodecs(config, spec));
  }
  return std::visit([&](auto make) { return Wrap(make(config, spec)); }, codec.make);
}

Result<std::unique_ptr<BytesToBytesCodec>> CodecRegistry::MakeV2Compressor(
    const json& compressor, DataType dtype, size_t string_width) const {
  if (!compressor.is_object() || !compressor.contains("id") || !compressor["id"].is_string()) {
    return InvalidArgument("compressor: expected null or an object with a string \"id\", got " +
                           compressor.dump());
  }
  const std::string id = compressor["id"].get<std::string>();
  const CodecDescriptor* codec = FindV2(id);
  if (!codec) {
    return InvalidArgument("compressor: unsupported codec \"" + id + "\" (zarrd reads " +
                           Join(V2Ids()) + ")");
  }
  if (codec->kind() != CodecKind::kBytesToBytes) {
    return InvalidArgument("compressor: \"" + id + "\" is an " + CodecKindName(codec->kind()) +
                           " codec, a filter");
  }
  return codec->make_numcodecs(compressor, ChunkSpec{dtype, {}, {}, nullptr, string_width});
}

Result<AnyCodec> CodecRegistry::MakeV2Filter(const json& filter, const ChunkSpec& spec) const {
  if (!filter.is_object() || !filter.contains("id") || !filter["id"].is_string()) {
    return InvalidArgument("filters: expected objects with a string \"id\", got " + filter.dump());
  }
  const std::string id = filter["id"].get<std::string>();
  const CodecDescriptor* codec = FindV2(id);
  if (!codec) {
    return InvalidArgument("filters: unsupported filter \"" + id + "\" (zarrd reads " +
                           Join(V2Ids()) + ")");
  }
  return MakeV3(std::string(kNumcodecsPrefix) + id, filter, spec);
}

Result<std::unique_ptr<BytesToBytesCodec>> MakeV2Compressor(const json& compressor, DataType dtype,
                                                            size_t string_width) {
  return CodecRegistry::Builtin().MakeV2Compressor(compressor, dtype, string_width);
}

}  // namespace zarrd

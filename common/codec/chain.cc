#include <cstring>

#include "common/codec/codec.h"
#include "common/codec/registry.h"

namespace zarrd {

using nlohmann::json;

int64_t ChunkSpec::num_elements() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Status BytesToBytesCodec::DecodeInto(ByteView in, MutableByteView out) const {
  Bytes decoded;
  ZARRD_RETURN_IF_ERROR(Decode(in, &decoded, out.size()));
  if (decoded.size() != out.size()) {
    return DataLoss("decoded " + std::to_string(decoded.size()) + " bytes, expected " +
                    std::to_string(out.size()));
  }
  if (!out.empty()) std::memcpy(out.data(), decoded.data(), out.size());  // null when empty
  return OkStatus();
}

ChunkSpec ArrayToArrayCodec::EncodedSpec(const ChunkSpec& spec) const {
  ChunkSpec out{EncodedDtype(spec.dtype), EncodedShape(spec.shape), spec.fill_value, spec.strings,
                spec.string_width};
  if (out.dtype != spec.dtype) {
    out.fill_value.assign(ItemSize(out.dtype), 0);
    Encode(ChunkSpec{spec.dtype, std::vector<int64_t>(spec.shape.size(), 1), spec.fill_value},
           spec.fill_value.data(), out.fill_value.data());
  }
  return out;
}

namespace internal {
Status ConfigError(const std::string& codec, const std::string& field, const std::string& why) {
  return InvalidArgument("codec \"" + codec + "\": configuration." + field + " " + why);
}
}  // namespace internal

CodecChain::CodecChain(std::vector<std::unique_ptr<ArrayToArrayCodec>> array_codecs,
                       std::unique_ptr<ArrayToBytesCodec> array_to_bytes,
                       std::vector<std::unique_ptr<BytesToBytesCodec>> bytes_codecs)
    : array_codecs_(std::move(array_codecs)),
      array_to_bytes_(std::move(array_to_bytes)),
      bytes_codecs_(std::move(bytes_codecs)) {}

Result<std::shared_ptr<const CodecChain>> CodecChain::FromV3Json(const json& codecs,
                                                                 const ChunkSpec& spec) {
  if (!codecs.is_array() || codecs.empty()) {
    return InvalidArgument("codecs: expected a non-empty list of codecs");
  }
  std::vector<std::unique_ptr<ArrayToArrayCodec>> array_codecs;
  std::unique_ptr<ArrayToBytesCodec> array_to_bytes;
  std::vector<std::unique_ptr<BytesToBytesCodec>> bytes_codecs;
  const CodecRegistry& registry = CodecRegistry::Builtin();
  ChunkSpec current = spec;
  for (const json& entry : codecs) {
    std::string name;
    json config = json::object();
    if (entry.is_string()) {
      name = entry.get<std::string>();
    } else if (entry.is_object() && entry.contains("name") && entry["name"].is_string()) {
      name = entry["name"].get<std::string>();
      if (entry.contains("configuration")) config = entry["configuration"];
      if (!config.is_object()) {
        return InvalidArgument("codecs: configuration of \"" + name + "\" must be an object");
      }
    } else {
      return InvalidArgument("codecs: each entry needs a string \"name\", got " + entry.dump());
    }
    auto order_error = [&](const char* what) {
      return InvalidArgument("codecs: \"" + name + "\" " + what);
    };
    if (const CodecDescriptor* known = registry.FindV3(name)) {
      switch (known->kind()) {
        case CodecKind::kArrayToArray:
          if (array_to_bytes)
            return order_error("(array->array) cannot follow an array->bytes codec");
          break;
        case CodecKind::kArrayToBytes:
          if (array_to_bytes) return order_error("is a second array->bytes codec");
          break;
        case CodecKind::kBytesToBytes:
          if (!array_to_bytes)
            return order_error("(bytes->bytes) needs an array->bytes codec first");
          break;
      }
    }
    ZARRD_ASSIGN_OR_RETURN(AnyCodec codec, registry.MakeV3(name, config, current));
    if (auto* a2a = std::get_if<std::unique_ptr<ArrayToArrayCodec>>(&codec)) {
      current = (*a2a)->EncodedSpec(current);
      array_codecs.push_back(std::move(*a2a));
    } else if (auto* a2b = std::get_if<std::unique_ptr<ArrayToBytesCodec>>(&codec)) {
      array_to_bytes = std::move(*a2b);
    } else {
      bytes_codecs.push_back(std::get<std::unique_ptr<BytesToBytesCodec>>(std::move(codec)));
    }
  }
  if (!array_to_bytes) return InvalidArgument("codecs: no array->bytes codec (bytes)");
  return std::make_shared<const CodecChain>(std::move(array_codecs), std::move(array_to_bytes),
                                            std::move(bytes_codecs));
}

const PartialDecoder* CodecChain::partial_decoder() const {
  if (has_array_codecs() || has_bytes_codecs()) return nullptr;
  return array_to_bytes_->partial_decoder();
}

Status CodecChain::Encode(const ChunkSpec& spec, const uint8_t* in, Bytes* out) const {
  Bytes scratch[2];
  ChunkSpec current = spec;
  const uint8_t* data = in;
  for (size_t i = 0; i < array_codecs_.size(); ++i) {
    Bytes& next = scratch[i % 2];
    ChunkSpec encoded = array_codecs_[i]->EncodedSpec(current);
    next.resize(encoded.num_bytes());
    array_codecs_[i]->Encode(current, data, next.data());
    current = std::move(encoded);
    data = next.data();
  }
  // The last codec writes into `out` (whose capacity the caller reuses); an identity
  // array-to-bytes step (bytes, native order) is a view, not a copy.
  ByteView encoded(data, current.num_bytes());
  Bytes stage[2];
  if (!array_to_bytes_->IsIdentity(current)) {
    Bytes* target = bytes_codecs_.empty() ? out : &stage[0];
    ZARRD_RETURN_IF_ERROR(array_to_bytes_->Encode(current, data, target));
    encoded = *target;
  } else if (bytes_codecs_.empty()) {
    out->assign(encoded.begin(), encoded.end());
    return OkStatus();
  }
  for (size_t i = 0; i < bytes_codecs_.size(); ++i) {
    Bytes* target = i + 1 == bytes_codecs_.size() ? out : &stage[(i + 1) % 2];
    ZARRD_RETURN_IF_ERROR(bytes_codecs_[i]->Encode(encoded, target));
    encoded = *target;
  }
  return OkStatus();
}

Status CodecChain::Decode(const ChunkSpec& spec, ByteView in, uint8_t* out) const {
  const size_t nbytes = spec.num_bytes();
  std::vector<ChunkSpec> specs{spec};  // specs[i]: input of array codec i
  for (const auto& codec : array_codecs_) specs.push_back(codec->EncodedSpec(specs.back()));
  const ChunkSpec& bytes_spec = specs.back();
  // What the array->bytes codec decodes from: exactly this, or at most this for variable-length
  // strings.
  const size_t stored_bytes = array_to_bytes_->EncodedSize(bytes_spec).value_or(kMaxVlenChunkBytes);
  const bool direct = array_codecs_.empty() && array_to_bytes_->IsIdentity(bytes_spec);

  Bytes stage;
  ByteView data = in;
  const size_t slack_bound = stored_bytes + stored_bytes / 2 + (1 << 16);
  for (size_t i = bytes_codecs_.size(); i-- > 0;) {
    if (i == 0 && direct) return bytes_codecs_[0]->DecodeInto(data, MutableByteView(out, nbytes));
    Bytes next;
    ZARRD_RETURN_IF_ERROR(
        bytes_codecs_[i]->Decode(data, &next, i == 0 ? stored_bytes : slack_bound));
    stage = std::move(next);
    data = stage;
  }
  if (array_codecs_.empty()) return array_to_bytes_->Decode(bytes_spec, data, out);
  Bytes current(bytes_spec.num_bytes()), next;
  ZARRD_RETURN_IF_ERROR(array_to_bytes_->Decode(bytes_spec, data, current.data()));
  for (size_t i = array_codecs_.size(); i-- > 0;) {
    if (i > 0) next.resize(specs[i].num_bytes());
    uint8_t* dst = i == 0 ? out : next.data();
    array_codecs_[i]->Decode(specs[i], current.data(), dst);
    std::swap(current, next);
  }
  return OkStatus();
}

json CodecChain::ToJson() const {
  json codecs = json::array();
  for (const auto& c : array_codecs_) codecs.push_back(c->ToJson());
  codecs.push_back(array_to_bytes_->ToJson());
  for (const auto& c : bytes_codecs_) codecs.push_back(c->ToJson());
  return codecs;
}

size_t CodecChain::ArrayCodecsOutputSize(const ChunkSpec& spec) const {
  DataType dtype = spec.dtype;
  for (const auto& c : array_codecs_) dtype = c->EncodedDtype(dtype);  // elements stay as many
  return static_cast<size_t>(spec.num_elements()) * ItemSize(dtype);
}

std::optional<size_t> CodecChain::EncodedSize(const ChunkSpec& spec) const {
  ChunkSpec current = spec;
  for (const auto& c : array_codecs_) current = c->EncodedSpec(current);
  auto size = array_to_bytes_->EncodedSize(current);
  for (const auto& c : bytes_codecs_) {
    if (!size) break;
    size = c->EncodedSize(*size);
  }
  return size;
}

}  // namespace zarrd

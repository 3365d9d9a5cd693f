// Zarr v2 compressors: numcodecs JSON ({"id": ...}) mapped onto the v3 codec classes.
#include "common/codec.h"

namespace zarrd {

namespace internal {
Result<std::unique_ptr<BytesToBytesCodec>> MakeV2BloscCodec(const nlohmann::json& config,
                                                            DataType dtype);
}  // namespace internal

Result<std::unique_ptr<BytesToBytesCodec>> MakeV2Compressor(const nlohmann::json& compressor,
                                                            DataType dtype) {
  if (!compressor.is_object() || !compressor.contains("id") || !compressor["id"].is_string()) {
    return InvalidArgument("compressor: expected null or an object with a string \"id\", got " +
                           compressor.dump());
  }
  const std::string id = compressor["id"].get<std::string>();
  if (id == "zstd") return MakeZstdCodec(compressor);
  if (id == "blosc") return internal::MakeV2BloscCodec(compressor, dtype);
  if (id == "zlib") return MakeZlibCodec(compressor);
  if (id == "gzip") return MakeGzipCodec(compressor);
  if (id == "crc32c") return MakeCrc32cCodec(compressor);
  if (id == "bz2") return MakeBz2Codec(compressor);
  return InvalidArgument("compressor: unsupported codec \"" + id +
                         "\" (zarrd reads zstd, blosc, zlib, gzip, bz2, crc32c)");
}

}  // namespace zarrd

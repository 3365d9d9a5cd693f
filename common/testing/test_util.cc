#include "common/testing/test_util.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

namespace zarrd::testing {

std::string FixturesDir() {
  if (const char* env = std::getenv("ZARRD_FIXTURES")) return env;
  return ZARRD_FIXTURES_DIR;
}

bool ReadFile(const std::string& path, Bytes* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

bool LoadNpy(const std::string& path, NpyArray* out) {
  Bytes raw;
  if (!ReadFile(path, &raw) || raw.size() < 10 || raw[0] != 0x93) return false;
  const int major = raw[6];
  size_t header_len, offset;
  if (major == 1) {
    header_len = raw[8] | (raw[9] << 8);
    offset = 10;
  } else {
    header_len = raw[8] | (raw[9] << 8) | (raw[10] << 16) | (static_cast<size_t>(raw[11]) << 24);
    offset = 12;
  }
  std::string header(raw.begin() + offset, raw.begin() + offset + header_len);
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr': *'([^']*)'"))) return false;
  out->descr = m[1];
  out->fortran_order = header.find("'fortran_order': True") != std::string::npos;
  if (!std::regex_search(header, m, std::regex("'shape': *\\(([^)]*)\\)"))) return false;
  out->shape.clear();
  std::string dims = m[1];
  std::regex num("[0-9]+");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), num); it != std::sregex_iterator();
       ++it) {
    out->shape.push_back(std::stoll(it->str()));
  }
  out->data.assign(raw.begin() + offset + header_len, raw.end());
  return true;
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "zarrd-test-XXXXXX").string();
  path_ = ::mkdtemp(tmpl.data());
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

ArrayMetadata V3Meta(std::vector<int64_t> shape, std::vector<int64_t> chunks,
                     const nlohmann::json& codecs, DataType dtype) {
  ArrayMetadata m;
  m.format = ZarrFormat::kV3;
  m.shape = std::move(shape);
  m.chunk_shape = std::move(chunks);
  m.dtype = dtype;
  m.fill_value = FillValue(ItemSize(dtype), 0);
  m.codecs = codecs;
  return m;
}

std::vector<int32_t> Pattern(int64_t n) {
  std::vector<int32_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>(i * 7 + 1);
  return v;
}

std::vector<int32_t> Reference(const std::vector<int32_t>& values,
                               const std::vector<int64_t>& shape, const ResolvedSelection& sel) {
  std::vector<int32_t> out;
  std::vector<int64_t> k(shape.size(), 0);
  const int64_t total = sel.num_elements();
  for (int64_t n = 0; n < total; ++n) {
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      flat = flat * shape[d] + sel.dims[d].start + k[d] * sel.dims[d].step;
    out.push_back(values[flat]);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++k[d] < sel.dims[d].count) break;
      k[d] = 0;
    }
  }
  return out;
}

}  // namespace zarrd::testing

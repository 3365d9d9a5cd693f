#include "client/npy.h"

#include <fstream>
#include <iterator>
#include <regex>

#include "common/dtype/dtype.h"
#include "common/util/strided_copy.h"

namespace zarrd::client {

Status WriteNpy(const std::string& path, const std::string& descr,
                const std::vector<int64_t>& shape, const uint8_t* data, size_t size) {
  std::string dims;
  for (size_t d = 0; d < shape.size(); ++d) dims += (d ? ", " : "") + std::to_string(shape[d]);
  if (shape.size() == 1) dims += ",";  // numpy's 1-tuple
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) return ErrnoStatus(errno, "cannot write " + path);
  const char magic[] = "\x93NUMPY\x01\x00";
  f.write(magic, 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  f.put(static_cast<char>(len & 0xff));
  f.put(static_cast<char>(len >> 8));
  f << header;
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!f) return ErrnoStatus(errno, "cannot write " + path);
  return OkStatus();
}

Result<NpyFile> ReadNpy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return NotFound("cannot read " + path);
  std::vector<uint8_t> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (raw.size() < 10 || raw[0] != 0x93 ||
      std::string(raw.begin() + 1, raw.begin() + 6) != "NUMPY") {
    return InvalidArgument(path + ": not a .npy file");
  }
  size_t len = 0, offset = 0;
  if (raw[6] == 1) {
    len = raw[8] | (raw[9] << 8);
    offset = 10;
  } else {
    if (raw.size() < 12) return InvalidArgument(path + ": truncated .npy header");
    len = raw[8] | (raw[9] << 8) | (raw[10] << 16) | (static_cast<size_t>(raw[11]) << 24);
    offset = 12;
  }
  if (offset + len > raw.size()) return InvalidArgument(path + ": truncated .npy header");
  std::string header(raw.begin() + offset, raw.begin() + offset + len);
  NpyFile npy;
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr': *'([^']*)'"))) {
    return InvalidArgument(path + ": no descr in the .npy header");
  }
  npy.descr = m[1];
  npy.fortran_order = header.find("'fortran_order': True") != std::string::npos;
  if (!std::regex_search(header, m, std::regex("'shape': *\\(([^)]*)\\)"))) {
    return InvalidArgument(path + ": no shape in the .npy header");
  }
  const std::string dims = m[1];
  const std::regex num("[0-9]+");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), num); it != std::sregex_iterator();
       ++it) {
    npy.shape.push_back(std::stoll(it->str()));
  }
  ZARRD_ASSIGN_OR_RETURN(V2DataType dt, ParseV2DataType(npy.descr));
  const size_t es = ItemSize(dt.dtype);
  size_t count = 1;
  for (int64_t s : npy.shape) count *= static_cast<size_t>(s);
  if (raw.size() - offset - len != count * es) {
    return InvalidArgument(path + ": holds " + std::to_string(raw.size() - offset - len) +
                           " data bytes, its shape needs " + std::to_string(count * es));
  }
  npy.data.assign(raw.begin() + offset + len, raw.end());
  if (dt.endian == Endian::kBig)
    ByteSwap(npy.data.data(), count * (es / SwapUnit(dt.dtype)), SwapUnit(dt.dtype));
  npy.descr = V2Typestr(dt.dtype, Endian::kLittle, dt.time_unit);
  if (npy.fortran_order && npy.shape.size() > 1) {
    std::vector<uint8_t> c(npy.data.size());
    std::vector<int64_t> rev(npy.shape.rbegin(), npy.shape.rend());
    auto f_strides = COrderStrides(rev, es);  // strides of the F-ordered data, reversed dims
    std::vector<int64_t> src(npy.shape.size());
    for (size_t d = 0; d < npy.shape.size(); ++d) src[d] = f_strides[npy.shape.size() - 1 - d];
    auto dst = COrderStrides(npy.shape, es);
    StridedCopy(npy.data.data(), src.data(), c.data(), dst.data(), npy.shape.data(),
                npy.shape.size(), es);
    npy.data = std::move(c);
    npy.fortran_order = false;
  }
  return npy;
}

}  // namespace zarrd::client

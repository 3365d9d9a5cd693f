// zarrd-engine-tool: drives the engine (common/) from the command line, for interop tests that
// compare it with zarr-python and with the peer fixtures. No server involved.
//
//   zarrd-engine-tool info   ROOT PATH
//   zarrd-engine-tool read   ROOT PATH SELECTION OUT_FILE   (C order, little-endian bytes)
//   zarrd-engine-tool write  ROOT PATH SELECTION IN_FILE
//   zarrd-engine-tool create ROOT PATH METADATA_FILE        (a zarr.json or .zarray document)
//
// Errors print "CODE: message" on stderr and exit 1; usage errors exit 2.
#include <fstream>
#include <iostream>
#include <iterator>

#include "common/array/array.h"

namespace {

using nlohmann::json;
using zarrd::Status;

int Fail(const Status& s) {
  std::cerr << s.ToString() << "\n";
  return 1;
}

json Describe(const zarrd::ArrayMetadata& m) {
  return {{"zarr_format", static_cast<int>(m.format)},
          {"data_type", std::string(zarrd::V3Name(m.dtype))},
          {"numpy_dtype", m.result_typestr()},
          {"shape", m.shape},
          {"chunks", m.chunk_shape},
          {"codecs", m.codec_chain->ToJson()},
          {"attributes", m.attributes}};
}

int Run(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: zarrd-engine-tool info|read|write|create ROOT PATH [ARGS]\n";
    return 2;
  }
  const std::string cmd = argv[1], root = argv[2], path = argv[3];
  auto store = zarrd::OpenLocalStore(root);
  if (!store.ok()) return Fail(store.status());

  if (cmd == "create" && argc == 5) {
    std::ifstream f(argv[4]);
    json doc = json::parse(f, nullptr, false);
    if (doc.is_discarded()) return Fail(zarrd::InvalidArgument("metadata file is not JSON"));
    auto m = doc.value("zarr_format", 0) == 2
                 ? zarrd::ParseV2ArrayMetadata(doc, doc.value("attributes", json(nullptr)))
                 : zarrd::ParseV3ArrayMetadata(doc);
    if (!m.ok()) return Fail(m.status());
    auto array = zarrd::Array::Create(zarrd::StoreHandle(*store), path, *m);
    if (!array.ok()) return Fail(array.status());
    std::cout << Describe(*(*array)->metadata()).dump() << "\n";
    return 0;
  }
  auto array = zarrd::Array::Open(zarrd::StoreHandle(*store), path);
  if (!array.ok()) return Fail(array.status());
  auto m = (*array)->metadata();
  if (cmd == "info" && argc == 4) {
    std::cout << Describe(*m).dump() << "\n";
    return 0;
  }
  if ((cmd == "read" || cmd == "write") && argc == 6) {
    auto selection = zarrd::ParseSelection(argv[4]);
    if (!selection.ok()) return Fail(selection.status());
    auto resolved = zarrd::ResolveSelection(*selection, m->shape);
    if (!resolved.ok()) return Fail(resolved.status());
    const size_t nbytes = static_cast<size_t>(resolved->num_elements()) * zarrd::ItemSize(m->dtype);
    if (cmd == "read") {
      std::vector<uint8_t> out(nbytes);
      Status s = (*array)->Read(*selection, out.data(), out.size());
      if (!s.ok()) return Fail(s);
      std::ofstream(argv[5], std::ios::binary)
          .write(reinterpret_cast<const char*>(out.data()),
                 static_cast<std::streamsize>(out.size()));
      std::cout << json{{"data_type", std::string(zarrd::V3Name(m->dtype))},
                        {"numpy_dtype", m->result_typestr()},
                        {"shape", resolved->result_shape}}
                       .dump()
                << "\n";
      return 0;
    }
    std::ifstream f(argv[5], std::ios::binary);
    std::vector<uint8_t> in((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    Status s = (*array)->Write(*selection, in.data(), in.size());
    if (!s.ok()) return Fail(s);
    return 0;
  }
  std::cerr << "usage: zarrd-engine-tool info|read|write|create ROOT PATH [ARGS]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }

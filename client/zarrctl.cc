// zarrctl: a shell client of zarrd.
//
//   zarrctl [--address ADDR] [--prototype host|device] [--tls-ca PEM [--tls-cert PEM --tls-key
//   PEM]]
//           COMMAND ...
//     info [STORE[:PATH]]              server info, or a node's metadata
//     ls STORE[:PATH]                  nodes below a group
//     create STORE:PATH --shape 100,100 --chunks 10,10 --dtype float32
//            [--codec zstd|blosc|gzip|none] [--fill-value V] [--zarr-format 2|3] [--overwrite]
//     create STORE:PATH --metadata FILE   (a zarr.json or .zarray document)
//     mkgroup STORE:PATH [--zarr-format 2|3]
//     get STORE:PATH [SELECTION] -o FILE  (.npy, else raw little-endian bytes)
//            SELECTION: numpy's "1, ::2, ..."; with index lists, orthogonal: "[1,5,-1], :";
//            --points: coordinate lists, one per dimension: "[0,5,9], [3,3,1]";
//            --blocks: chunk indices and slices of them: "1, 0:2"
//     get --prototype device STORE:PATH [SELECTION] [--gpu UUID]
//                                      read into the server's GPU memory, print a checksum
//                                      computed on the GPU (see client/device_checksum.h)
//     put STORE:PATH [SELECTION] -i FILE.npy
//     copy SRC_STORE:PATH DST_STORE:PATH [--overwrite]
//     rm STORE:PATH
//     attrs STORE:PATH [--set JSON]
//     health                           gRPC health check: exit 0 when zarrd is SERVING
//
// ADDR defaults to $ZARRD_ADDRESS, else unix:zarrd.sock. Exit 0 on success, 1 when the server
// refuses (the message says why), 2 on usage errors.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "client/client.h"
#ifdef ZARRD_HAVE_CUDA
#include "client/device_client.h"
#endif
#include "client/npy.h"
#include "common/dtype.h"
#include "common/selection.h"

namespace {

using nlohmann::json;
using zarrd::Status;
namespace pb = zarrd::v1;

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;
  bool has(const std::string& k) const { return options.count(k) > 0; }
  std::string get(const std::string& k, const std::string& d = "") const {
    auto it = options.find(k);
    return it == options.end() ? d : it->second;
  }
};

const std::set<std::string> kFlags = {"--overwrite", "--points", "--blocks"};

int Usage(const std::string& why) {
  std::cerr << "zarrctl: " << why << "\n"
            << "usage: zarrctl [--address ADDR] COMMAND ... (info, ls, create, mkgroup, get, put, "
               "copy, rm, attrs; see the top of client/zarrctl.cc or README)\n";
  return 2;
}

int Fail(const Status& s) {
  std::cerr << "zarrctl: " << s.ToString() << "\n";
  return 1;
}

std::pair<std::string, std::string> SplitNode(const std::string& spec) {
  auto colon = spec.find(':');
  if (colon == std::string::npos) return {spec, ""};
  std::string path = spec.substr(colon + 1);
  while (!path.empty() && path.front() == '/') path.erase(0, 1);
  return {spec.substr(0, colon), path};
}

std::vector<int64_t> ParseList(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::stoll(item));
  return out;
}

std::string Typestr(const std::string& v3_name) {
  auto dtype = zarrd::ParseV3DataType(v3_name);
  return dtype.ok() ? zarrd::V2Typestr(*dtype, zarrd::Endian::kLittle) : "|u1";
}

json BuildMetadata(const Args& a) {
  const auto shape = ParseList(a.get("--shape"));
  const auto chunks = a.has("--chunks") ? ParseList(a.get("--chunks")) : shape;
  const std::string dtype = a.get("--dtype", "float64");
  const std::string codec = a.get("--codec", "zstd");
  const int format = std::stoi(a.get("--zarr-format", "3"));
  json fill = a.has("--fill-value") ? json::parse(a.get("--fill-value"), nullptr, false) : json(0);
  if (fill.is_discarded()) fill = a.get("--fill-value");  // NaN, Infinity, ...
  if (format == 2) {
    json compressor = nullptr;
    if (codec == "zstd") compressor = {{"id", "zstd"}, {"level", 3}};
    if (codec == "blosc")
      compressor = {{"id", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}};
    if (codec == "gzip") compressor = {{"id", "gzip"}, {"level", 5}};
    return {{"zarr_format", 2},
            {"shape", shape},
            {"chunks", chunks},
            {"dtype", Typestr(dtype)},
            {"compressor", compressor},
            {"fill_value", fill},
            {"order", "C"},
            {"filters", nullptr}};
  }
  json codecs = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});
  if (codec == "zstd") codecs.push_back({{"name", "zstd"}, {"configuration", {{"level", 3}}}});
  if (codec == "gzip") codecs.push_back({{"name", "gzip"}, {"configuration", {{"level", 5}}}});
  if (codec == "blosc") {
    codecs.push_back({{"name", "blosc"},
                      {"configuration",
                       {{"cname", "lz4"},
                        {"clevel", 5},
                        {"shuffle", "shuffle"},
                        {"typesize", Typestr(dtype).back() - '0'}}}});
  }
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", shape},
          {"data_type", dtype},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", chunks}}}}},
          {"chunk_key_encoding", {{"name", "default"}}},
          {"fill_value", fill},
          {"codecs", codecs}};
}

void Progress(uint64_t done, uint64_t total) {
  if (!::isatty(STDERR_FILENO)) return;
  const int width = 40;
  const int filled = total ? static_cast<int>(width * done / total) : width;
  std::fprintf(stderr, "\r[%s%s] %5.1f%% %.1f/%.1f MiB", std::string(filled, '#').c_str(),
               std::string(width - filled, ' ').c_str(), total ? 100.0 * done / total : 100.0,
               done / 1048576.0, total / 1048576.0);
  if (done == total) std::fprintf(stderr, "\n");
}

int Copy(zarrd::client::Client& c, const Args& a) {
  auto [src_store, src_path] = SplitNode(a.positional[1]);
  auto [dst_store, dst_path] = SplitNode(a.positional[2]);
  auto src = c.GetNode(src_store, src_path);
  if (!src.ok()) return Fail(src.status());
  if (!src->is_array) return Fail(zarrd::InvalidArgument(a.positional[1] + " is not an array"));
  auto dst =
      c.CreateArray(dst_store, dst_path, src->metadata,
                    src->zarr_format == 2 ? src->attributes : json(nullptr), a.has("--overwrite"));
  if (!dst.ok()) return Fail(dst.status());
  // Copy in bands of whole chunk rows along the first dimension.
  const uint64_t total = src->num_bytes();
  if (src->shape.empty() || total == 0) {
    std::vector<uint8_t> buf(total);
    pb::Selection all;
    Status s = c.Get(src_store, src_path, all, buf.data(), buf.size());
    if (s.ok()) s = c.Set(dst_store, dst_path, all, buf.data(), buf.size());
    return s.ok() ? 0 : Fail(s);
  }
  const uint64_t row = total / src->shape[0];
  int64_t band = src->chunks[0];
  while (band * row < (64u << 20) && band < src->shape[0]) band += src->chunks[0];
  std::vector<uint8_t> buf;
  uint64_t done = 0;
  for (int64_t start = 0; start < src->shape[0]; start += band) {
    const int64_t stop = std::min(src->shape[0], start + band);
    pb::Selection sel;
    auto* s0 = sel.add_items()->mutable_slice();
    s0->set_start(start);
    s0->set_stop(stop);
    buf.resize((stop - start) * row);
    Status s = c.Get(src_store, src_path, sel, buf.data(), buf.size());
    if (s.ok()) s = c.Set(dst_store, dst_path, sel, buf.data(), buf.size());
    if (!s.ok()) return Fail(s);
    done += buf.size();
    Progress(done, total);
  }
  std::cout << "copied " << total << " bytes from " << a.positional[1] << " to " << a.positional[2]
            << "\n";
  return 0;
}

// get --prototype device: the result stays in GPU memory; a checksum computed there is printed.
int GetDevice(zarrd::client::Client& c, const std::string& store, const std::string& path,
              const pb::Selection& selection, const Args& a) {
#ifdef ZARRD_HAVE_CUDA
  zarrd::client::DeviceClient devices(c);
  auto array = devices.Get(store, path, selection, a.get("--gpu", ""));
  if (!array.ok()) return Fail(array.status());
  auto sum =
      zarrd::client::ChecksumOnDevice((*array)->data(), (*array)->nbytes(), (*array)->device());
  if (!sum.ok()) return Fail(sum.status());
  const auto& d = (*array)->descriptor();
  std::cout << "device " << (*array)->buffer().gpu_uuid() << " " << d.data_type() << " "
            << json(std::vector<int64_t>(d.shape().begin(), d.shape().end())).dump() << " "
            << d.nbytes() << " bytes checksum sum=" << sum->sum << " weighted=" << sum->weighted
            << "\n";
  return 0;
#else
  (void)c, (void)store, (void)path, (void)selection, (void)a;
  return Fail(
      zarrd::FailedPrecondition("--prototype device: no CUDA device (this zarrctl was "
                                "built without CUDA)"));
#endif
}

int Run(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) == 0 || arg == "-o" || arg == "-i") {
      if (kFlags.count(arg)) {
        a.options[arg] = "1";
      } else if (i + 1 < argc) {
        a.options[arg] = argv[++i];
      } else {
        return Usage(arg + " needs a value");
      }
    } else {
      a.positional.push_back(arg);
    }
  }
  if (a.positional.empty()) return Usage("no command");
  const std::string cmd = a.positional[0];
  static const std::map<std::string, std::pair<size_t, size_t>> kArity = {
      {"info", {1, 2}},  {"ls", {2, 2}},    {"create", {2, 2}}, {"mkgroup", {2, 2}},
      {"get", {2, 3}},   {"put", {2, 3}},   {"copy", {3, 3}},   {"rm", {2, 2}},
      {"attrs", {2, 2}}, {"health", {1, 1}}};
  auto arity = kArity.find(cmd);
  if (arity == kArity.end()) return Usage("unknown command \"" + cmd + "\"");
  if (a.positional.size() < arity->second.first || a.positional.size() > arity->second.second) {
    return Usage("wrong number of arguments for " + cmd);
  }
  const char* env = std::getenv("ZARRD_ADDRESS");
  const std::string address = a.get("--address", env ? env : "unix:zarrd.sock");
  const std::string prototype = a.get("--prototype", "host");
  if (prototype != "host" && prototype != "device") return Usage("--prototype: host or device");
  if (cmd == "health") {
    auto serving = zarrd::client::CheckHealth(address, std::stod(a.get("--timeout", "5")));
    if (!serving.ok()) return Fail(serving.status());
    std::cout << (*serving ? "SERVING" : "NOT_SERVING") << "\n";
    return *serving ? 0 : 1;
  }
  const zarrd::client::TlsOptions tls{a.get("--tls-ca"), a.get("--tls-cert"), a.get("--tls-key")};
  auto client = zarrd::client::Client::Connect(address, 5, tls);
  if (!client.ok()) return Fail(client.status());
  auto& c = **client;

  if (cmd == "info" && a.positional.size() == 1) {
    const auto& info = c.server_info();
    std::cout << "zarrd " << info.version() << " epoch " << std::hex << info.epoch() << std::dec
              << "\n";
    for (const auto& s : info.stores()) {
      std::cout << "store " << s.name() << ": " << s.kind() << " " << s.root()
                << (s.read_only() ? " (read-only)" : "") << "\n";
    }
    for (const auto& d : info.devices())
      std::cout << "device " << d.uuid() << " " << d.name() << "\n";
    return 0;
  }
  auto [store, path] = SplitNode(a.positional[1]);
  if (cmd == "info") {
    auto node = c.GetNode(store, path);
    if (!node.ok()) return Fail(node.status());
    std::cout << node->metadata.dump(2) << "\n";
    if (node->zarr_format == 2 && !node->attributes.empty()) {
      std::cout << "attributes: " << node->attributes.dump(2) << "\n";
    }
    return 0;
  }
  if (cmd == "ls") {
    auto entries = c.List(store, path);
    if (!entries.ok()) return Fail(entries.status());
    for (const auto& e : *entries) {
      std::cout << (e.kind() == pb::NODE_KIND_ARRAY ? "array " : "group ") << "v" << e.zarr_format()
                << " " << e.name() << "\n";
    }
    return 0;
  }
  if (cmd == "create") {
    json metadata;
    if (a.has("--metadata")) {
      std::ifstream f(a.get("--metadata"));
      metadata = json::parse(f, nullptr, false);
      if (metadata.is_discarded()) return Usage("--metadata: not a JSON file");
    } else {
      if (!a.has("--shape")) return Usage("create needs --shape (or --metadata)");
      metadata = BuildMetadata(a);
    }
    auto node = c.CreateArray(store, path, metadata, nullptr, a.has("--overwrite"));
    if (!node.ok()) return Fail(node.status());
    std::cout << "created " << store << ":" << path << " " << node->data_type << " "
              << json(node->shape).dump() << "\n";
    return 0;
  }
  if (cmd == "mkgroup") {
    auto node = c.CreateGroup(store, path, std::stoi(a.get("--zarr-format", "3")));
    if (!node.ok()) return Fail(node.status());
    return 0;
  }
  if (cmd == "rm") {
    auto n = c.Delete(store, path);
    if (!n.ok()) return Fail(n.status());
    std::cout << "deleted " << *n << " keys\n";
    return 0;
  }
  if (cmd == "attrs") {
    if (a.has("--set")) {
      json attrs = json::parse(a.get("--set"), nullptr, false);
      if (attrs.is_discarded()) return Usage("--set: not valid JSON");
      auto node = c.SetAttributes(store, path, attrs);
      if (!node.ok()) return Fail(node.status());
    }
    auto node = c.GetNode(store, path);
    if (!node.ok()) return Fail(node.status());
    std::cout << node->attributes.dump(2) << "\n";
    return 0;
  }
  if (cmd == "copy") return Copy(c, a);

  if (a.has("--points") && a.has("--blocks")) return Usage("--points or --blocks, not both");
  auto selection =
      zarrd::client::SelectionFromText(a.positional.size() == 3 ? a.positional[2] : "",
                                       a.has("--points")   ? pb::SELECTION_MODE_VECTORIZED
                                       : a.has("--blocks") ? pb::SELECTION_MODE_BLOCK
                                                           : pb::SELECTION_MODE_BASIC);
  if (!selection.ok()) return Fail(selection.status());
  auto node = c.GetNode(store, path);
  if (!node.ok()) return Fail(node.status());
  if (!node->is_array) return Fail(zarrd::InvalidArgument(a.positional[1] + " is a group"));
  if (cmd == "get" && prototype == "device") return GetDevice(c, store, path, *selection, a);
  if (cmd == "get") {
    if (!a.has("-o")) return Usage("get needs -o FILE");
    // The result size comes from the server: a one-element probe of the descriptor would cost a
    // round trip, so resolve the selection here against the shape.
    auto result_shape = zarrd::client::SelectionShape(*selection, node->shape, node->chunks);
    if (!result_shape.ok()) return Fail(result_shape.status());
    int64_t elements = 1;
    for (int64_t s : *result_shape) elements *= s;
    std::vector<uint8_t> buf(elements * node->item_size());
    pb::ArrayDescriptor d;
    Status s = c.Get(store, path, *selection, buf.data(), buf.size(), &d, pb::PROTOTYPE_HOST);
    if (!s.ok()) return Fail(s);
    const std::string out = a.get("-o");
    if (out.size() > 4 && out.substr(out.size() - 4) == ".npy") {
      s = zarrd::client::WriteNpy(out, Typestr(node->data_type), *result_shape, buf.data(),
                                  buf.size());
    } else {
      std::ofstream f(out, std::ios::binary);
      f.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
      if (!f) s = zarrd::ErrnoStatus(errno, "cannot write " + out);
    }
    if (!s.ok()) return Fail(s);
    std::cerr << "wrote " << buf.size() << " bytes, shape " << json(*result_shape).dump() << ", to "
              << out << "\n";
    return 0;
  }
  // put
  if (!a.has("-i")) return Usage("put needs -i FILE.npy");
  auto npy = zarrd::client::ReadNpy(a.get("-i"));
  if (!npy.ok()) return Fail(npy.status());
  if (npy->descr != Typestr(node->data_type)) {
    return Fail(zarrd::InvalidArgument(a.get("-i") + " holds " + npy->descr + ", the array is " +
                                       node->data_type + " (" + Typestr(node->data_type) + ")"));
  }
  Status s = c.Set(store, path, *selection, npy->data.data(), npy->data.size());
  if (!s.ok()) return Fail(s);
  std::cerr << "wrote " << npy->data.size() << " bytes to " << a.positional[1] << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }

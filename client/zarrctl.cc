// zarrctl: a shell client of zarrd. `zarrctl --help` lists the commands, `zarrctl COMMAND
// --help` their options. ADDR defaults to $ZARRD_ADDRESS, else unix:zarrd.sock. Exit 0 on success,
// 1 when the server refuses (the message says why), 2 on usage errors.
#include <google/protobuf/util/json_util.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include "client/client.h"
#ifdef ZARRD_HAVE_CUDA
#include "client/device_client.h"
#endif
#include "client/npy.h"
#include "client/string_result.h"
#include "common/dtype/dtype.h"
#include "common/index/band_plan.h"
#include "common/index/selection.h"
#include "common/util/checked.h"
#include "common/util/version.h"
#include "proto/selection_wire.h"

namespace {

using nlohmann::json;
using zarrd::Status;
namespace pb = zarrd::v1;

// What the command line said: the global options, then those of the one command given.
struct Options {
  std::string address, prototype = "host", tls_ca, tls_cert, tls_key;
  bool json = false;
  std::string node, destination, selection, output, input, metadata_file, set_attributes, gpu;
  std::string shape, chunks, dtype = "float64", codec = "zstd", fill_value;
  bool has_fill_value = false, overwrite = false, points = false, blocks = false;
  int zarr_format = 3;
  double timeout = 5;
};

int Usage(const std::string& why) {
  std::cerr << "zarrctl: " << why << "\nRun with --help for more information.\n";
  return 2;
}

int Fail(const Status& s) {
  std::cerr << "zarrctl: " << s.ToString() << "\n";
  return 1;
}

int PrintJson(const json& j) {
  std::cout << j.dump(2) << "\n";
  return 0;
}

std::pair<std::string, std::string> SplitNode(const std::string& spec) {
  auto colon = spec.find(':');
  if (colon == std::string::npos) return {spec, ""};
  std::string path = spec.substr(colon + 1);
  while (!path.empty() && path.front() == '/') path.erase(0, 1);
  return {spec.substr(0, colon), path};
}

// "37,23,5": non-negative integers, nothing else.
bool ParseList(const std::string& s, std::vector<int64_t>* out) {
  out->clear();
  size_t at = 0;
  while (at <= s.size()) {
    const size_t comma = std::min(s.find(',', at), s.size());
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data() + at, s.data() + comma, v);
    if (ec != std::errc() || end != s.data() + comma || v < 0) return false;
    out->push_back(v);
    at = comma + 1;
  }
  return true;
}

const CLI::Validator kIntList(
    [](std::string& s) -> std::string {
      std::vector<int64_t> v;
      return ParseList(s, &v) ? "" : "\"" + s + "\" is not a list of integers like 100,100";
    },
    "INT,INT,...", "integer list");

const CLI::Validator kSeconds(
    [](std::string& s) -> std::string {
      double v = 0;
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc() && end == s.data() + s.size() && v > 0
                 ? ""
                 : "\"" + s + "\" is not a positive number of seconds";
    },
    "SECONDS", "seconds");

std::vector<int64_t> List(const std::string& s) {
  std::vector<int64_t> v;
  ParseList(s, &v);  // validated by kIntList
  return v;
}

std::string Typestr(const std::string& v3_name) {
  auto dtype = zarrd::ParseV3DataType(v3_name);
  return dtype.ok() ? zarrd::V2Typestr(*dtype, zarrd::Endian::kLittle) : "|u1";
}

// The numpy typestr of an array's results (with a datetime's unit, which data_type lacks).
std::string Typestr(const zarrd::client::NodeInfo& node) {
  return node.numpy_dtype.empty() ? Typestr(node.data_type) : node.numpy_dtype;
}

// The compressor of `codec` as zarr-python writes it by default (v3: zstd level 0 without
// checksum, as zarr-python 3; v2: numcodecs' defaults), the same table as the Python client's
// (client/python/zarrd/metadata.py). Null for "none".
json Compressor(const std::string& codec, int format, size_t item_size) {
  if (format == 2) {
    if (codec == "zstd") return {{"id", "zstd"}, {"level", 0}};
    if (codec == "gzip") return {{"id", "gzip"}, {"level", 1}};
    if (codec == "blosc")
      return {{"id", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}, {"blocksize", 0}};
    return nullptr;
  }
  if (codec == "zstd")
    return {{"name", "zstd"}, {"configuration", {{"level", 0}, {"checksum", false}}}};
  if (codec == "gzip") return {{"name", "gzip"}, {"configuration", {{"level", 1}}}};
  if (codec == "blosc") {
    return {{"name", "blosc"},
            {"configuration",
             {{"cname", "lz4"},
              {"clevel", 5},
              {"shuffle", "shuffle"},
              {"typesize", item_size},
              {"blocksize", 0}}}};
  }
  return nullptr;
}

json BuildMetadata(const Options& o) {
  const auto shape = List(o.shape);
  const auto chunks = o.chunks.empty() ? shape : List(o.chunks);
  auto dtype = zarrd::ParseV3DataType(o.dtype);
  // Strings (--dtype string or bytes) as zarr-python writes them: v3 with the vlen-utf8
  // (vlen-bytes) codec, v2 "|O" with it as the object codec; the fill value is "".
  const bool strings = dtype.ok() && zarrd::IsStringType(*dtype);
  const std::string vlen = o.dtype == "string" ? "vlen-utf8" : "vlen-bytes";
  json fill = o.has_fill_value ? json::parse(o.fill_value, nullptr, false) : json(0);
  if (fill.is_discarded() || (strings && o.has_fill_value)) fill = o.fill_value;  // NaN, text
  if (strings && !o.has_fill_value) fill = "";
  const json compressor =
      Compressor(o.codec, o.zarr_format, dtype.ok() && !strings ? zarrd::ItemSize(*dtype) : 1);
  if (o.zarr_format == 2) {
    return {{"zarr_format", 2},
            {"shape", shape},
            {"chunks", chunks},
            {"dtype", Typestr(o.dtype)},
            {"compressor", compressor},
            {"fill_value", fill},
            {"order", "C"},
            {"filters", strings ? json::array({{{"id", vlen}}}) : json(nullptr)}};
  }
  json codecs = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});
  if (strings) codecs = json::array({{{"name", vlen}, {"configuration", json::object()}}});
  if (!compressor.is_null()) codecs.push_back(compressor);
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", shape},
          {"data_type", o.dtype},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", chunks}}}}},
          {"chunk_key_encoding", {{"name", "default"}}},
          {"fill_value", fill},
          {"codecs", codecs}};
}

json NodeJson(const zarrd::client::NodeInfo& n) {
  json j = {{"store", n.store},
            {"path", n.path},
            {"node_type", n.is_array ? "array" : "group"},
            {"zarr_format", n.zarr_format},
            {"metadata", n.metadata},
            {"attributes", n.attributes}};
  if (n.is_array) {
    j["data_type"] = n.data_type;
    j["shape"] = n.shape;
    j["chunks"] = n.chunks;
  }
  return j;
}

// Chunks and bytes copied so far: a bar redrawn in place on a terminal, else one line a band.
void Progress(uint64_t chunks_done, uint64_t chunks_total, uint64_t done, uint64_t total) {
  const double percent = total ? 100.0 * done / total : 100.0;
  if (!::isatty(STDERR_FILENO)) {
    std::fprintf(stderr, "copy: chunks %llu/%llu, %.1f/%.1f MiB (%.1f%%)\n",
                 static_cast<unsigned long long>(chunks_done),
                 static_cast<unsigned long long>(chunks_total), done / 1048576.0, total / 1048576.0,
                 percent);
    return;
  }
  const int width = 40;
  const int filled = total ? static_cast<int>(width * done / total) : width;
  std::fprintf(stderr, "\r[%s%s] %5.1f%% chunks %llu/%llu %.1f/%.1f MiB",
               std::string(filled, '#').c_str(), std::string(width - filled, ' ').c_str(), percent,
               static_cast<unsigned long long>(chunks_done),
               static_cast<unsigned long long>(chunks_total), done / 1048576.0, total / 1048576.0);
  if (done == total) std::fprintf(stderr, "\n");
}

int Copy(zarrd::client::Client& c, const Options& o) {
  auto [src_store, src_path] = SplitNode(o.node);
  auto [dst_store, dst_path] = SplitNode(o.destination);
  auto src = c.GetNode(src_store, src_path);
  if (!src.ok()) return Fail(src.status());
  if (!src->is_array) return Fail(zarrd::InvalidArgument(o.node + " is not an array"));
  auto dst = c.CreateArray(dst_store, dst_path, src->metadata,
                           src->zarr_format == 2 ? src->attributes : json(nullptr), o.overwrite);
  if (!dst.ok()) return Fail(dst.status());
  auto all = zarrd::ResolveSelection({}, src->shape);
  if (!all.ok()) return Fail(all.status());
  if (src->is_strings()) {  // in one piece: a string result's size is known once it is read
    const pb::Selection sel = zarrd::ToWire(*all);
    auto data = c.GetStrings(*src, sel);
    Status s =
        data.ok() ? c.Set(dst_store, dst_path, sel, data->data(), data->size()) : data.status();
    if (!s.ok()) return Fail(s);
    return PrintJson(
        {{"source", o.node}, {"destination", o.destination}, {"nbytes", data->size()}});
  }
  // Copy in bands of about 64 MiB on chunk edges along the first dimension.
  const uint64_t total = src->num_bytes();
  // Chunks of the grid: those of one chunk row along the first dimension, times the rows.
  uint64_t chunks_per_row = 1;
  for (size_t d = 1; d < src->shape.size(); ++d) {
    chunks_per_row *= static_cast<uint64_t>((src->shape[d] + src->chunks[d] - 1) / src->chunks[d]);
  }
  const auto chunk_rows = [&](int64_t rows) {
    return static_cast<uint64_t>((rows + src->chunks[0] - 1) / src->chunks[0]);
  };
  std::vector<uint8_t> buf;
  uint64_t done = 0;
  for (const zarrd::Band& band :
       zarrd::PlanBands(*all, src->chunks, src->item_size(), {.target_bytes = 64u << 20})) {
    const pb::Selection sel = zarrd::ToWire(band.selection);
    buf.resize(band.nbytes);
    Status s = c.Get(*src, sel, buf.data(), buf.size());
    if (s.ok()) s = c.Set(dst_store, dst_path, sel, buf.data(), buf.size());
    if (!s.ok()) return Fail(s);
    done += buf.size();
    if (src->shape.empty() || total == 0) continue;  // one band, no progress to show
    const zarrd::DimSelection& rows = band.selection.dims[0];
    Progress(chunk_rows(rows.start + rows.count) * chunks_per_row,
             chunk_rows(src->shape[0]) * chunks_per_row, done, total);
  }
  if (o.json)
    return PrintJson({{"source", o.node}, {"destination", o.destination}, {"nbytes", total}});
  std::cout << "copied " << total << " bytes from " << o.node << " to " << o.destination << "\n";
  return 0;
}

// get --prototype device: the result stays in GPU memory; a checksum computed there is printed.
int GetDevice(zarrd::client::Client& c, const std::string& store, const std::string& path,
              const pb::Selection& selection, const Options& o) {
#ifdef ZARRD_HAVE_CUDA
  zarrd::client::DeviceClient devices(c);
  auto array = devices.Get(store, path, selection, o.gpu);
  if (!array.ok()) return Fail(array.status());
  auto sum =
      zarrd::client::ChecksumOnDevice((*array)->data(), (*array)->nbytes(), (*array)->device());
  if (!sum.ok()) return Fail(sum.status());
  const auto& d = (*array)->descriptor();
  const std::vector<int64_t> shape(d.shape().begin(), d.shape().end());
  if (o.json) {
    return PrintJson({{"gpu_uuid", (*array)->buffer().gpu_uuid()},
                      {"data_type", d.data_type()},
                      {"shape", shape},
                      {"nbytes", d.nbytes()},
                      {"checksum", {{"sum", sum->sum}, {"weighted", sum->weighted}}}});
  }
  std::cout << "device " << (*array)->buffer().gpu_uuid() << " " << d.data_type() << " "
            << json(shape).dump() << " " << d.nbytes() << " bytes checksum sum=" << sum->sum
            << " weighted=" << sum->weighted << "\n";
  return 0;
#else
  (void)c, (void)store, (void)path, (void)selection, (void)o;
  return Fail(
      zarrd::FailedPrecondition("--prototype device: no CUDA device (this zarrctl was "
                                "built without CUDA)"));
#endif
}

int ServerInfo(zarrd::client::Client& c, const Options& o) {
  const auto& info = c.server_info();
  if (o.json) {
    google::protobuf::util::JsonPrintOptions options;
    options.add_whitespace = true;
    options.always_print_primitive_fields = true;
    options.preserve_proto_field_names = true;
    std::string text;
    if (!google::protobuf::util::MessageToJsonString(info, &text, options).ok())
      return Fail(zarrd::Internal("the server's info does not convert to JSON"));
    std::cout << text;
    return 0;
  }
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

// Strings: see zarrd::client::WriteStringResult.
int GetStrings(zarrd::client::Client& c, const std::string& store, const std::string& path,
               const pb::Selection& selection, const zarrd::client::NodeInfo& node,
               const std::vector<int64_t>& result_shape, const Options& o) {
  pb::ArrayDescriptor d;
  auto data = c.GetStrings(node, selection, &d);
  if (!data.ok()) return Fail(data.status());
  Status s = zarrd::client::WriteStringResult(node, *data, result_shape, o.output);
  if (!s.ok()) return Fail(s);
  std::cerr << "wrote " << d.nbytes() << " bytes of strings, shape " << json(result_shape).dump()
            << ", to " << o.output << "\n";
  if (o.json) {
    return PrintJson({{"store", store},
                      {"path", path},
                      {"selection", o.selection},
                      {"data_type", d.data_type()},
                      {"shape", result_shape},
                      {"nbytes", d.nbytes()},
                      {"file", o.output}});
  }
  return 0;
}

int Get(zarrd::client::Client& c, const std::string& store, const std::string& path,
        const pb::Selection& selection, const zarrd::client::NodeInfo& node, const Options& o) {
  // The result size comes from the server: a one-element probe of the descriptor would cost a
  // round trip, so resolve the selection here against the shape.
  auto result_shape = zarrd::client::SelectionShape(selection, node.shape, node.chunks);
  if (!result_shape.ok()) return Fail(result_shape.status());
  if (node.is_strings()) return GetStrings(c, store, path, selection, node, *result_shape, o);
  uint64_t nbytes = node.item_size();
  for (int64_t extent : *result_shape) {
    nbytes = zarrd::SaturatingMul(nbytes, static_cast<uint64_t>(extent));
  }
  const uint64_t memory =
      static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(::getpagesize());
  if (nbytes > memory) {
    return Fail(zarrd::ResourceExhausted(
        o.node + ": the result of shape " + json(*result_shape).dump() + " holds " +
        (nbytes == UINT64_MAX ? "more than 2^64" : std::to_string(nbytes)) +
        " bytes, more than this host's " + std::to_string(memory) + " bytes of memory"));
  }
  std::vector<uint8_t> buf(nbytes);
  pb::ArrayDescriptor d;
  Status s = c.Get(node, selection, buf.data(), buf.size(), &d, pb::PROTOTYPE_HOST);
  if (!s.ok()) return Fail(s);
  const std::string& out = o.output;
  if (out.size() > 4 && out.substr(out.size() - 4) == ".npy") {
    s = zarrd::client::WriteNpy(out, Typestr(node), *result_shape, buf.data(), buf.size());
  } else {
    std::ofstream f(out, std::ios::binary);
    f.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
    if (!f) s = zarrd::ErrnoStatus(errno, "cannot write " + out);
  }
  if (!s.ok()) return Fail(s);
  std::cerr << "wrote " << buf.size() << " bytes, shape " << json(*result_shape).dump() << ", to "
            << out << "\n";
  if (o.json) {
    return PrintJson({{"store", store},
                      {"path", path},
                      {"selection", o.selection},
                      {"data_type", d.data_type()},
                      {"shape", std::vector<int64_t>(d.shape().begin(), d.shape().end())},
                      {"nbytes", d.nbytes()},
                      {"file", out}});
  }
  return 0;
}

int Put(zarrd::client::Client& c, const std::string& store, const std::string& path,
        const pb::Selection& selection, const zarrd::client::NodeInfo& node, const Options& o) {
  if (node.numpy_dtype == "|O") {
    return Fail(zarrd::InvalidArgument(
        o.node +
        " holds variable-length strings, which .npy files hold only as pickles: write "
        "them with the Python or C++ client"));
  }
  auto npy = zarrd::client::ReadNpy(o.input);
  if (!npy.ok()) return Fail(npy.status());
  if (npy->descr != Typestr(node)) {
    return Fail(zarrd::InvalidArgument(o.input + " holds " + npy->descr + ", the array is " +
                                       node.data_type + " (" + Typestr(node) + ")"));
  }
  Status s = c.Set(store, path, selection, npy->data.data(), npy->data.size());
  if (!s.ok()) return Fail(s);
  std::cerr << "wrote " << npy->data.size() << " bytes to " << o.node << "\n";
  if (o.json) return PrintJson({{"store", store}, {"path", path}, {"nbytes", npy->data.size()}});
  return 0;
}

// Runs `command` against the server once the command line has parsed.
int Execute(const std::string& command, const Options& o) {
  const zarrd::client::TlsOptions tls{o.tls_ca, o.tls_cert, o.tls_key};
  if (command == "health") {
    auto serving = zarrd::client::CheckHealth(o.address, o.timeout, tls);
    if (!serving.ok()) return Fail(serving.status());
    if (o.json) {
      PrintJson({{"serving", *serving}});
    } else {
      std::cout << (*serving ? "SERVING" : "NOT_SERVING") << "\n";
    }
    return *serving ? 0 : 1;
  }
  auto client = zarrd::client::Client::Connect(o.address, 5, tls);
  if (!client.ok()) return Fail(client.status());
  auto& c = **client;
  if (command == "info" && o.node.empty()) return ServerInfo(c, o);
  auto [store, path] = SplitNode(o.node);
  if (command == "info") {
    auto node = c.GetNode(store, path);
    if (!node.ok()) return Fail(node.status());
    if (o.json) return PrintJson(NodeJson(*node));
    std::cout << node->metadata.dump(2) << "\n";
    if (node->zarr_format == 2 && !node->attributes.empty()) {
      std::cout << "attributes: " << node->attributes.dump(2) << "\n";
    }
    return 0;
  }
  if (command == "ls") {
    auto entries = c.List(store, path);
    if (!entries.ok()) return Fail(entries.status());
    json listing = json::array();
    for (const auto& e : *entries) {
      const char* kind = e.kind() == pb::NODE_KIND_ARRAY ? "array" : "group";
      if (o.json) {
        listing.push_back(
            {{"name", e.name()}, {"node_type", kind}, {"zarr_format", e.zarr_format()}});
      } else {
        std::cout << kind << " v" << e.zarr_format() << " " << e.name() << "\n";
      }
    }
    return o.json ? PrintJson(listing) : 0;
  }
  if (command == "create") {
    json metadata;
    if (!o.metadata_file.empty()) {
      std::ifstream f(o.metadata_file);
      if (!f) return Usage("--metadata: cannot read " + o.metadata_file);
      metadata = json::parse(f, nullptr, false);
      if (metadata.is_discarded()) return Usage("--metadata: " + o.metadata_file + " is not JSON");
    } else {
      metadata = BuildMetadata(o);
    }
    auto node = c.CreateArray(store, path, metadata, nullptr, o.overwrite);
    if (!node.ok()) return Fail(node.status());
    if (o.json) return PrintJson(NodeJson(*node));
    std::cout << "created " << store << ":" << path << " " << node->data_type << " "
              << json(node->shape).dump() << "\n";
    return 0;
  }
  if (command == "mkgroup") {
    auto node = c.CreateGroup(store, path, o.zarr_format);
    if (!node.ok()) return Fail(node.status());
    return o.json ? PrintJson(NodeJson(*node)) : 0;
  }
  if (command == "rm") {
    auto n = c.Delete(store, path);
    if (!n.ok()) return Fail(n.status());
    if (o.json) return PrintJson({{"store", store}, {"path", path}, {"deleted_keys", *n}});
    std::cout << "deleted " << *n << " keys\n";
    return 0;
  }
  if (command == "attrs") {
    if (!o.set_attributes.empty()) {
      json attrs = json::parse(o.set_attributes, nullptr, false);
      if (attrs.is_discarded()) return Usage("--set: not valid JSON");
      auto node = c.SetAttributes(store, path, attrs);
      if (!node.ok()) return Fail(node.status());
    }
    auto node = c.GetNode(store, path);
    if (!node.ok()) return Fail(node.status());
    return PrintJson(node->attributes);
  }
  if (command == "consolidate") {
    auto done = c.Consolidate(store, path);
    if (!done.ok()) return Fail(done.status());
    if (o.json) {
      return PrintJson({{"store", store},
                        {"path", path},
                        {"zarr_format", done->zarr_format()},
                        {"key", done->key()},
                        {"entries", done->entries()}});
    }
    std::cout << "consolidated " << done->entries() << " entries into " << done->key() << "\n";
    return 0;
  }
  if (command == "copy") return Copy(c, o);

  auto selection =
      zarrd::client::SelectionFromText(o.selection, o.points   ? pb::SELECTION_MODE_VECTORIZED
                                                    : o.blocks ? pb::SELECTION_MODE_BLOCK
                                                               : pb::SELECTION_MODE_BASIC);
  if (!selection.ok()) return Fail(selection.status());
  auto node = c.GetNode(store, path);
  if (!node.ok()) return Fail(node.status());
  if (!node->is_array) return Fail(zarrd::InvalidArgument(o.node + " is a group"));
  if (command == "get" && o.prototype == "device") return GetDevice(c, store, path, *selection, o);
  if (command == "get") return Get(c, store, path, *selection, *node, o);
  return Put(c, store, path, *selection, *node, o);
}

CLI::App* Command(CLI::App& app, const std::string& name, const std::string& about,
                  const std::string& example) {
  CLI::App* sub = app.add_subcommand(name, about);
  sub->footer(
      "Global options (zarrctl --help): --address, --json, --prototype, --tls-*.\nExample:\n  " +
      example);
  return sub;
}

int Run(int argc, char** argv) {
  Options o;
  const char* env = std::getenv("ZARRD_ADDRESS");
  o.address = env ? env : "unix:zarrd.sock";
  CLI::App app("zarrctl: a shell client of zarrd (Zarr arrays over gRPC).", "zarrctl");
  app.footer(
      "A node is STORE:PATH (e.g. local:demo/t); a SELECTION is numpy-like text (\"::2, 3, "
      "-5:\").\n"
      "Exit status: 0 ok, 1 the server refused (the message says why), 2 usage error.\n"
      "Example:\n  zarrctl --address unix:/run/zarrd/zarrd.sock get local:demo/t \"::250, -3:\" -o "
      "part.npy");
  app.require_subcommand(0, 1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "zarrctl: " + std::string(e.what()) + "\nRun with --help for more information.\n";
  });
  app.fallthrough();  // the global options may follow the command too
  bool version = false;
  app.add_flag("--version", version, "print zarrctl's version and exit");
  app.add_option(
      "--address", o.address,
      "unix:/path/zarrd.sock or HOST:PORT (default $ZARRD_ADDRESS, else unix:zarrd.sock)");
  app.add_option("--prototype", o.prototype, "where get puts the result")
      ->check(CLI::IsMember({"host", "device"}));
  app.add_option("--tls-ca", o.tls_ca, "TLS to a TCP listener: the CA of the server's certificate")
      ->check(CLI::ExistingFile);
  auto* cert = app.add_option("--tls-cert", o.tls_cert, "mTLS: the client's certificate (PEM)")
                   ->check(CLI::ExistingFile);
  auto* key = app.add_option("--tls-key", o.tls_key, "mTLS: the client's key (PEM)")
                  ->check(CLI::ExistingFile);
  cert->needs(key);
  key->needs(cert);
  app.add_flag("--json", o.json, "print results as JSON");

  auto node_arg = [&](CLI::App* sub, const char* what = "the node, STORE:PATH") {
    sub->add_option("node", o.node, what)->required();
  };
  auto selection_arg = [&](CLI::App* sub) {
    sub->add_option("selection", o.selection,
                    "numpy-like selection (default: everything); index lists make it orthogonal: "
                    "\"[1,5,-1], :\"");
    auto* points = sub->add_flag("--points", o.points,
                                 "the selection is coordinate lists, one per dimension (numpy's "
                                 "points): \"[0,5,9], [3,3,1]\"");
    sub->add_flag("--blocks", o.blocks,
                  "the selection is chunk indices and slices of them: \"1, 0:2\"")
        ->excludes(points);
  };
  auto format_opt = [&](CLI::App* sub) {
    sub->add_option("--zarr-format", o.zarr_format, "2 or 3 (default 3)")
        ->check(CLI::IsMember({2, 3}));
  };

  auto* info = Command(app, "info", "the server's info, or a node's metadata",
                       "zarrctl info local:demo/t --json");
  info->add_option("node", o.node, "STORE[:PATH]; without it, the server's stores and devices");

  node_arg(Command(app, "ls", "the nodes below a group", "zarrctl ls local:demo"));

  auto* create = Command(app, "create", "create an array",
                         "zarrctl create local:demo/t --shape 1000,1000 --chunks 100,100 "
                         "--dtype float32 --codec zstd");
  node_arg(create);
  create->add_option("--shape", o.shape, "the array's shape")->check(kIntList);
  create->add_option("--chunks", o.chunks, "the chunk shape (default: one chunk)")->check(kIntList);
  create->add_option("--dtype", o.dtype,
                     "a Zarr v3 data type name (default float64; string, bytes: variable-length)");
  create
      ->add_option("--codec", o.codec,
                   "the compressor, with zarr-python's default settings (default zstd)")
      ->check(CLI::IsMember({"zstd", "blosc", "gzip", "none"}));
  create->add_option("--fill-value", o.fill_value, "JSON, or NaN/Infinity/-Infinity (default 0)");
  format_opt(create);
  create->add_flag("--overwrite", o.overwrite, "replace whatever is at the path");
  create
      ->add_option("--metadata", o.metadata_file,
                   "a zarr.json or .zarray document instead of the options above")
      ->check(CLI::ExistingFile)
      ->excludes(create->get_option("--shape"))
      ->excludes(create->get_option("--chunks"))
      ->excludes(create->get_option("--codec"));

  auto* mkgroup = Command(app, "mkgroup", "create a group", "zarrctl mkgroup local:demo");
  node_arg(mkgroup);
  format_opt(mkgroup);

  auto* get = Command(app, "get",
                      "read a selection into a file (.npy, else raw little-endian; "
                      "variable-length strings: a line each, JSON text or base64 bytes)",
                      "zarrctl get local:demo/t \"::250, -3:\" -o part.npy");
  node_arg(get);
  selection_arg(get);
  get->add_option("-o,--output", o.output, "the file to write (.npy, else raw bytes)");
  get->add_option("--gpu", o.gpu, "--prototype device: the GPU's UUID (default: the server's)");

  auto* put = Command(app, "put", "write a .npy file into a selection",
                      "zarrctl put local:demo/t \"0:10\" -i rows.npy");
  node_arg(put);
  selection_arg(put);
  put->add_option("-i,--input", o.input, "the .npy file to write")->required();

  auto* copy = Command(app, "copy", "copy an array, to another store or path",
                       "zarrctl copy local:demo/t mem:t");
  node_arg(copy, "the source array, STORE:PATH");
  copy->add_option("destination", o.destination, "the new array, STORE:PATH")->required();
  copy->add_flag("--overwrite", o.overwrite, "replace whatever is at the destination");

  node_arg(Command(app, "rm", "delete a node and everything below it", "zarrctl rm local:demo"));

  auto* attrs = Command(app, "attrs", "print a node's attributes, after setting them with --set",
                        "zarrctl attrs local:demo/t --set '{\"units\": \"m\"}'");
  node_arg(attrs);
  attrs->add_option("--set", o.set_attributes, "a JSON object to store as the attributes");

  node_arg(Command(app, "consolidate",
                   "write a group's consolidated metadata (v3 zarr.json, v2 .zmetadata)",
                   "zarrctl consolidate local:demo"));

  auto* health = Command(app, "health", "gRPC health check: exit 0 when zarrd is SERVING",
                         "zarrctl --address unix:/run/zarrd/zarrd.sock health --timeout 2");
  health->add_option("--timeout", o.timeout, "seconds to wait for an answer (default 5)")
      ->check(kSeconds);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (app.get_subcommands().empty() && !app.remaining().empty()) {
      std::string known;
      for (const CLI::App* sub : app.get_subcommands({})) known += " " + sub->get_name();
      return Usage("unknown command \"" + app.remaining().front() + "\"; the commands:" + known);
    }
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (version) {
    std::cout << "zarrctl " << zarrd::kZarrdVersion << "\n";
    return 0;
  }
  if (app.get_subcommands().empty()) return Usage("no command given");
  o.has_fill_value = create->get_option("--fill-value")->count() > 0;
  const std::string command = app.get_subcommands().front()->get_name();
  if (command == "create" && o.shape.empty() && o.metadata_file.empty()) {
    return Usage("create needs --shape (or --metadata)");
  }
  if (command == "get" && o.output.empty() && o.prototype == "host") {
    return Usage("get needs -o FILE (or --prototype device)");
  }
  return Execute(command, o);
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }

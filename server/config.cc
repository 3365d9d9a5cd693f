#include "server/config.h"

#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "common/metadata/json_document.h"
#include "common/util/file_util.h"

namespace zarrd::server {

using nlohmann::json;

namespace {

Status Field(const std::string& field, const std::string& why) {
  return InvalidArgument("config: " + field + " " + why);
}

Result<PrototypeKind> ParsePrototype(const json& j, const std::string& field) {
  if (j == "host") return PrototypeKind::kHost;
  if (j == "device") return PrototypeKind::kDevice;
  return Field(field, "must be \"host\" or \"device\", got " + j.dump());
}

Result<GpuDecodeMode> ParseGpuDecode(const json& j, const std::string& field) {
  if (!j.is_string()) return Field(field, "must be a string");
  auto mode = ParseGpuDecodeMode(j.get<std::string>());
  if (!mode.ok()) return InvalidArgument("config: " + field + ": " + mode.status().message());
  return *mode;
}

// `where` names the object holding `key` ("" for the top level).
std::string FieldName(const std::string& where, const char* key) {
  return where.empty() ? key : where + "." + key;
}

template <typename T>
Status ReadUnsigned(const json& j, const char* key, T* out, const std::string& where = "") {
  if (!j.contains(key)) return OkStatus();
  if (!j[key].is_number_unsigned()) {
    return Field(FieldName(where, key), "must be a non-negative integer");
  }
  if (j[key].get<uint64_t>() > std::numeric_limits<T>::max()) {
    return Field(FieldName(where, key), "is too large");
  }
  *out = j[key].get<T>();
  return OkStatus();
}

Status ReadBool(const json& j, const char* key, bool* out, const std::string& where = "") {
  if (!j.contains(key)) return OkStatus();
  if (!j[key].is_boolean()) return Field(FieldName(where, key), "must be true or false");
  *out = j[key].get<bool>();
  return OkStatus();
}

// A device named by UUID string or ordinal (number or string).
std::string DeviceKey(const json& j) {
  return j.is_number_unsigned() ? std::to_string(j.get<uint64_t>())
                                : (j.is_string() ? j.get<std::string>() : "");
}

Result<std::vector<DeviceConfig>> ParseDevices(const json& j) {
  if (!j.is_array()) return Field("devices", "must be a list");
  std::vector<DeviceConfig> devices;
  for (const json& d : j) {
    DeviceConfig dc;
    if (!d.is_object() || DeviceKey(d.value("device", json())).empty()) {
      return Field("devices[]", "needs \"device\": a UUID or an ordinal");
    }
    dc.device = DeviceKey(d["device"]);
    ZARRD_RETURN_IF_ERROR(ReadUnsigned(d, "pool_bytes", &dc.pool_bytes, "devices[]"));
    ZARRD_RETURN_IF_ERROR(ReadUnsigned(d, "slab_bytes", &dc.slab_bytes, "devices[]"));
    if (dc.slab_bytes < (2u << 20)) return Field("devices[].slab_bytes", "must be at least 2 MiB");
    devices.push_back(std::move(dc));
  }
  return devices;
}

Status ReadString(const json& j, const char* key, const std::string& where, std::string* out) {
  if (!j.contains(key)) return OkStatus();
  if (!j[key].is_string()) return Field(FieldName(where, key), "must be a string");
  *out = j[key].get<std::string>();
  return OkStatus();
}

// Timeouts and retries of an s3 or http store.
Status ParseHttpOptions(const json& s, const std::string& where, HttpOptions* o) {
  static const std::set<std::string> kKnown = {
      "connect_timeout_ms", "low_speed_bytes", "low_speed_seconds", "max_attempts",
      "backoff_base_ms",    "backoff_max_ms",  "retry_budget"};
  if (!s.contains("http")) return OkStatus();
  const json& h = s["http"];
  const std::string http = where + ".http";
  if (!h.is_object()) return Field(http, "must be an object");
  for (const auto& [key, value] : h.items()) {
    if (!kKnown.count(key)) return Field(http + "." + key, "is not a known setting");
  }
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(h, "connect_timeout_ms", &o->connect_timeout_ms, http));
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(h, "low_speed_bytes", &o->low_speed_bytes, http));
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(h, "low_speed_seconds", &o->low_speed_seconds, http));
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(h, "max_attempts", &o->max_attempts, http));
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(h, "backoff_base_ms", &o->backoff_base_ms, http));
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(h, "backoff_max_ms", &o->backoff_max_ms, http));
  if (h.contains("retry_budget")) {
    if (!h["retry_budget"].is_number() || h["retry_budget"].get<double>() < 0) {
      return Field(http + ".retry_budget", "must be a non-negative number");
    }
    o->retry_budget = h["retry_budget"].get<double>();
  }
  if (o->max_attempts < 1) return Field(where + ".http.max_attempts", "must be at least 1");
  return OkStatus();
}

Status ParseS3(const json& s, const std::string& where, StoreConfig* store) {
  S3StoreOptions& o = store->s3;
  ZARRD_RETURN_IF_ERROR(ReadString(s, "endpoint", where, &o.endpoint));
  ZARRD_RETURN_IF_ERROR(ReadString(s, "bucket", where, &o.bucket));
  ZARRD_RETURN_IF_ERROR(ReadString(s, "prefix", where, &o.prefix));
  ZARRD_RETURN_IF_ERROR(ReadString(s, "region", where, &o.region));
  if (o.bucket.empty()) return Field(where + ".bucket", "is required");
  std::string addressing = "path";
  ZARRD_RETURN_IF_ERROR(ReadString(s, "addressing", where, &addressing));
  if (addressing != "path" && addressing != "virtual") {
    return Field(where + ".addressing", "must be \"path\" or \"virtual\"");
  }
  o.virtual_addressing = addressing == "virtual";
  S3CredentialSettings& c = o.credentials;
  ZARRD_RETURN_IF_ERROR(ReadString(s, "access_key_id", where, &c.access_key_id));
  ZARRD_RETURN_IF_ERROR(ReadString(s, "secret_access_key", where, &c.secret_access_key));
  ZARRD_RETURN_IF_ERROR(ReadString(s, "session_token", where, &c.session_token));
  ZARRD_RETURN_IF_ERROR(ReadString(s, "profile", where, &c.profile));
  ZARRD_RETURN_IF_ERROR(ReadBool(s, "anonymous", &c.anonymous, where));
  return OkStatus();
}

}  // namespace

std::string MetricsAddress(const std::string& given) { return given == "off" ? "" : given; }

ServerConfig DefaultConfig() {
  ServerConfig c;
  c.stores.push_back({"local", "local", std::filesystem::absolute("zarrd-data").string()});
  return c;
}

namespace {

Result<ServerConfig> ParseConfigFields(const json& j, const std::string& base_dir) {
  static const std::set<std::string> kKnown = {"stores",
                                               "listen",
                                               "socket_mode",
                                               "worker_threads",
                                               "inline_requests",
                                               "max_request_bytes",
                                               "max_result_bytes",
                                               "max_chunk_bytes",
                                               "max_unary_result_bytes",
                                               "stream_piece_bytes",
                                               "default_prototype",
                                               "arrays",
                                               "shutdown_grace_seconds",
                                               "log_level",
                                               "stream_decode_threads",
                                               "stream_buffer_bytes",
                                               "devices",
                                               "gpu_decode",
                                               "gpu_decode_min_chunks",
                                               "gpu_decode_prewarm",
                                               "lease_ttl_seconds",
                                               "lease_quota_bytes",
                                               "metrics_listen",
                                               "enable_stream_bytes",
                                               "stream_bytes_max_bytes",
                                               "socket_group",
                                               "tls"};
  for (const auto& [key, value] : j.items()) {
    if (!kKnown.count(key)) return Field(key, "is not a known setting");
  }
  ServerConfig c;
  if (!j.contains("stores") || !j["stores"].is_array() || j["stores"].empty()) {
    return Field("stores", "must be a non-empty list");
  }
  std::set<std::string> names;
  for (const json& s : j["stores"]) {
    StoreConfig store;
    if (!s.is_object() || !s.contains("name") || !s["name"].is_string()) {
      return Field("stores[]", "needs a string \"name\"");
    }
    store.name = s["name"];
    const std::string where = "stores[" + store.name + "]";
    if (!names.insert(store.name).second) return Field(where, "is named twice");
    store.kind = "local";
    ZARRD_RETURN_IF_ERROR(ReadString(s, "kind", where, &store.kind));
    if (store.kind != "local" && store.kind != "memory" && store.kind != "gpu" &&
        store.kind != "s3" && store.kind != "http") {
      return Field(where + ".kind", "must be \"local\", \"memory\", \"gpu\", \"s3\" or \"http\"");
    }
    if (store.kind == "s3") ZARRD_RETURN_IF_ERROR(ParseS3(s, where, &store));
    if (store.kind == "http") {
      ZARRD_RETURN_IF_ERROR(ReadString(s, "url", where, &store.http.base_url));
      if (store.http.base_url.empty()) return Field(where + ".url", "is required");
    }
    if (store.kind == "s3" || store.kind == "http") {
      ZARRD_RETURN_IF_ERROR(
          ParseHttpOptions(s, where, store.kind == "s3" ? &store.s3.http : &store.http.http));
    }
    if (store.kind == "gpu") {
      store.device = DeviceKey(s.value("device", json("0")));
      if (store.device.empty()) return Field(where + ".device", "must be a UUID or an ordinal");
      ZARRD_RETURN_IF_ERROR(ReadUnsigned(s, "capacity_bytes", &store.capacity_bytes, where));
    }
    if (store.kind == "local") {
      if (!s.contains("root") || !s["root"].is_string())
        return Field(where + ".root", "is required");
      std::filesystem::path root = s["root"].get<std::string>();
      if (root.is_relative()) root = std::filesystem::path(base_dir) / root;
      store.root = root.lexically_normal().string();
    }
    ZARRD_RETURN_IF_ERROR(ReadBool(s, "read_only", &store.read_only, where));
    store.read_only = store.read_only || store.kind == "http";
    ZARRD_RETURN_IF_ERROR(ReadBool(s, "fsync", &store.fsync, where));
    c.stores.push_back(std::move(store));
  }
  if (j.contains("listen")) {
    c.listen.clear();
    const json& l = j["listen"];
    if (l.is_string()) {
      c.listen.push_back(l);
    } else if (l.is_array()) {
      for (const json& a : l) {
        if (!a.is_string()) return Field("listen", "must hold strings");
        c.listen.push_back(a);
      }
    } else {
      return Field("listen", "must be an address or a list of them");
    }
  }
  for (auto& address : c.listen) {
    if (address.rfind("unix:", 0) == 0 && address.size() > 5 && address[5] != '/') {
      address = "unix:" + (std::filesystem::path(base_dir) / address.substr(5)).string();
    }
  }
  if (j.contains("socket_mode")) {
    const json& m = j["socket_mode"];
    const std::string octal = m.is_string() ? m.get<std::string>() : "";
    if (m.is_number_unsigned() && m.get<uint64_t>() <= 0777) {
      c.socket_mode = m.get<uint32_t>();
    } else if (!octal.empty() && octal.size() <= 4 &&
               octal.find_first_not_of("01234567") == std::string::npos) {
      c.socket_mode = static_cast<uint32_t>(std::stoul(octal, nullptr, 8));
    } else {
      return Field("socket_mode", "must be an octal string such as \"0660\"");
    }
  }
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(j, "worker_threads", &c.worker_threads));
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(j, "inline_requests", &c.inline_requests));
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(j, "stream_decode_threads", &c.stream_decode_threads));
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(j, "stream_buffer_bytes", &c.stream_buffer_bytes));
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(j, "max_request_bytes", &c.max_request_bytes));
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(j, "max_result_bytes", &c.max_result_bytes));
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(j, "max_chunk_bytes", &c.max_chunk_bytes));
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(j, "max_unary_result_bytes", &c.max_unary_result_bytes));
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(j, "stream_piece_bytes", &c.stream_piece_bytes));
  if (c.stream_piece_bytes < 4096 || c.stream_piece_bytes > (64u << 20)) {
    return Field("stream_piece_bytes", "must be in 4 KiB..64 MiB");
  }
  if (j.contains("default_prototype")) {
    ZARRD_ASSIGN_OR_RETURN(c.default_prototype,
                           ParsePrototype(j["default_prototype"], "default_prototype"));
  }
  if (j.contains("arrays")) {
    if (!j["arrays"].is_array()) return Field("arrays", "must be a list");
    for (const json& a : j["arrays"]) {
      if (!a.is_object() || !a.contains("store") || !a.contains("path") ||
          !a["store"].is_string() || !a["path"].is_string()) {
        return Field("arrays[]", "needs \"store\" and \"path\" strings");
      }
      for (const auto& [key, value] : a.items()) {
        if (key != "store" && key != "path" && key != "prototype" && key != "gpu_decode") {
          return Field("arrays[]." + key,
                       "is not a known setting (store, path, prototype, gpu_decode)");
        }
      }
      ArrayOverride o{a["store"], a["path"]};
      if (a.contains("prototype")) {
        ZARRD_ASSIGN_OR_RETURN(o.prototype, ParsePrototype(a["prototype"], "arrays[].prototype"));
      }
      if (a.contains("gpu_decode")) {
        ZARRD_ASSIGN_OR_RETURN(o.gpu_decode,
                               ParseGpuDecode(a["gpu_decode"], "arrays[].gpu_decode"));
      }
      c.overrides.push_back(std::move(o));
    }
  }
  if (j.contains("devices")) {
    ZARRD_ASSIGN_OR_RETURN(c.devices, ParseDevices(j["devices"]));
  }
  if (j.contains("gpu_decode")) {
    ZARRD_ASSIGN_OR_RETURN(c.gpu_decode, ParseGpuDecode(j["gpu_decode"], "gpu_decode"));
  }
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(j, "gpu_decode_min_chunks", &c.gpu_decode_min_chunks));
  ZARRD_RETURN_IF_ERROR(ReadBool(j, "gpu_decode_prewarm", &c.gpu_decode_prewarm));
  if (j.contains("lease_ttl_seconds")) {
    if (!j["lease_ttl_seconds"].is_number() || j["lease_ttl_seconds"].get<double>() <= 0)
      return Field("lease_ttl_seconds", "must be a positive number");
    c.lease_ttl_seconds = j["lease_ttl_seconds"];
  }
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(j, "lease_quota_bytes", &c.lease_quota_bytes));
  ZARRD_RETURN_IF_ERROR(ReadBool(j, "enable_stream_bytes", &c.enable_stream_bytes));
  ZARRD_RETURN_IF_ERROR(ReadUnsigned(j, "stream_bytes_max_bytes", &c.stream_bytes_max_bytes));
  if (j.contains("shutdown_grace_seconds")) {
    if (!j["shutdown_grace_seconds"].is_number())
      return Field("shutdown_grace_seconds", "must be a number");
    c.shutdown_grace_seconds = j["shutdown_grace_seconds"];
  }
  ZARRD_RETURN_IF_ERROR(ReadString(j, "log_level", "", &c.log_level));
  if (j.contains("socket_group")) {
    if (!j["socket_group"].is_string()) return Field("socket_group", "must be a group name");
    c.socket_group = j["socket_group"];
  }
  if (j.contains("tls")) {
    const json& t = j["tls"];
    auto file = [&](const char* key, bool required, std::string* out) -> Status {
      if (!t.contains(key))
        return required ? Field(std::string("tls.") + key, "is required") : OkStatus();
      if (!t[key].is_string()) return Field(std::string("tls.") + key, "must be a file name");
      std::filesystem::path p = t[key].get<std::string>();
      *out =
          (p.is_relative() ? std::filesystem::path(base_dir) / p : p).lexically_normal().string();
      return OkStatus();
    };
    if (!t.is_object()) return Field("tls", "must be an object");
    TlsConfig tls;
    ZARRD_RETURN_IF_ERROR(file("cert_file", true, &tls.cert_file));
    ZARRD_RETURN_IF_ERROR(file("key_file", true, &tls.key_file));
    ZARRD_RETURN_IF_ERROR(file("client_ca_file", false, &tls.client_ca_file));
    c.tls = tls;
  }
  if (j.contains("metrics_listen")) {
    if (!j["metrics_listen"].is_string()) return Field("metrics_listen", "must be a string");
    c.metrics_listen = MetricsAddress(j["metrics_listen"]);
  }
  return c;
}

}  // namespace

Result<ServerConfig> ParseConfig(const json& j, const std::string& base_dir) {
  if (!j.is_object()) return InvalidArgument("config: expected a JSON object");
  // Every field is checked before it is read; this catches what a check missed, so that a bad
  // file given to SIGHUP's reload is refused like one given at start.
  try {
    return ParseConfigFields(j, base_dir);
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("config: ") + e.what());
  }
}

Result<ServerConfig> LoadConfig(const std::string& path) {
  ZARRD_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path, kMaxJsonDocumentBytes));
  ZARRD_ASSIGN_OR_RETURN(json j, ParseJsonDocument(text, "config file " + path));
  auto base = std::filesystem::absolute(path).parent_path().string();
  auto c = ParseConfig(j, base);
  if (!c.ok()) return c.status().WithContext(path);
  return c;
}

const ArrayOverride* FindOverride(const ServerConfig& config, const std::string& store,
                                  const std::string& path) {
  for (const ArrayOverride& o : config.overrides) {
    if (o.store == store && o.path == path) return &o;
  }
  return nullptr;
}

}  // namespace zarrd::server

#include "client/client.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <limits>
#include <random>
#include <thread>

#include "client/piece_reader.h"
#include "common/dtype/dtype.h"
#include "common/index/band_plan.h"
#include "common/index/selection.h"
#include "common/util/checked.h"
#include "common/util/file_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "proto/error_detail.h"
#include "proto/selection_wire.h"

namespace zarrd::client {

using nlohmann::json;

Result<pb::Selection> SelectionFromText(const std::string& text, pb::SelectionMode mode) {
  // Items are split at commas outside brackets; each is a list or one basic item.
  std::vector<std::string> items;
  int depth = 0;
  std::string item;
  for (char c : text) {
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    if (depth < 0 || depth > 1) return InvalidArgument("selection: unbalanced '[' in " + text);
    if (c == ',' && depth == 0) {
      items.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  if (depth != 0) return InvalidArgument("selection: unbalanced '[' in " + text);
  items.push_back(item);
  pb::Selection out;
  int64_t points = -1;
  for (const std::string& raw : items) {
    const size_t open = raw.find('[');
    if (open == std::string::npos) {
      ZARRD_ASSIGN_OR_RETURN(Selection one, ParseSelection(raw));
      if (one.size() > 1) return InvalidArgument("selection: bad item \"" + raw + "\"");
      if (!one.empty()) *out.add_items() = ToWire(one).items(0);
      continue;
    }
    const size_t close = raw.find(']');
    if (raw.find_first_not_of(" \t", close + 1) != std::string::npos ||
        raw.find_first_not_of(" \t") != open) {
      return InvalidArgument("selection: bad item \"" + raw + "\"");
    }
    auto* list = out.add_items()->mutable_indices();
    std::string inner = raw.substr(open + 1, close - open - 1);
    if (inner.find_first_not_of(" \t") != std::string::npos) {
      ZARRD_ASSIGN_OR_RETURN(Selection values, ParseSelection(inner));
      for (const auto& v : values) {
        if (v.kind != SelectionItem::Kind::kIndex) {
          return InvalidArgument("selection: a list holds integers: \"" + raw + "\"");
        }
        list->add_values(v.index);
      }
    }
    if (points >= 0 && points != list->values_size() && mode == pb::SELECTION_MODE_VECTORIZED) {
      return InvalidArgument("selection: point coordinate lists differ in length");
    }
    points = list->values_size();
  }
  if (mode == pb::SELECTION_MODE_BASIC && points >= 0) mode = pb::SELECTION_MODE_ORTHOGONAL;
  if (mode == pb::SELECTION_MODE_VECTORIZED) out.add_point_shape(std::max<int64_t>(points, 0));
  if (mode == pb::SELECTION_MODE_BLOCK && points >= 0) {
    return InvalidArgument("selection: blocks take integers and slices");
  }
  out.set_mode(mode);
  return out;
}

Result<std::vector<int64_t>> SelectionShape(const pb::Selection& selection,
                                            const std::vector<int64_t>& shape,
                                            const std::vector<int64_t>& chunks) {
  if (IsAdvanced(selection)) {
    ZARRD_ASSIGN_OR_RETURN(ResolvedAdvanced sel,
                           AdvancedFromWire(selection, shape, std::numeric_limits<int64_t>::max()));
    return sel.result_shape;
  }
  ZARRD_ASSIGN_OR_RETURN(Selection basic, BasicFromWire(selection, shape, chunks));
  ZARRD_ASSIGN_OR_RETURN(ResolvedSelection sel, ResolveSelection(basic, shape));
  return sel.result_shape;
}

size_t NodeInfo::item_size() const {
  if (is_strings()) {
    auto typestr = ParseV2DataType(numpy_dtype);
    if (!typestr.ok()) return 0;
    return typestr->dtype == DataType::kString ? 4 * typestr->string_width : typestr->string_width;
  }
  auto dtype = ParseV3DataType(data_type);
  return dtype.ok() ? ItemSize(*dtype) : 0;
}

uint64_t NodeInfo::num_bytes() const {
  auto n = CheckedProduct(shape, item_size(), "shape");
  return n.ok() ? *n : UINT64_MAX;
}

namespace {

NodeInfo ToNodeInfo(const pb::NodeInfo& p) {
  NodeInfo n;
  n.store = p.store();
  n.path = p.path();
  n.is_array = p.kind() == pb::NODE_KIND_ARRAY;
  n.zarr_format = p.zarr_format();
  n.data_type = p.data_type();
  n.numpy_dtype = p.numpy_dtype();
  n.shape.assign(p.shape().begin(), p.shape().end());
  n.chunks.assign(p.chunks().begin(), p.chunks().end());
  n.metadata = json::parse(p.metadata_json(), nullptr, false);
  n.attributes = json::parse(p.attributes_json(), nullptr, false);
  return n;
}

}  // namespace

namespace {

Result<std::shared_ptr<grpc::ChannelCredentials>> Credentials(const TlsOptions& tls) {
  if (tls.ca_file.empty()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  ZARRD_ASSIGN_OR_RETURN(options.pem_root_certs, ReadTextFile(tls.ca_file));
  if (!tls.cert_file.empty()) {
    ZARRD_ASSIGN_OR_RETURN(options.pem_cert_chain, ReadTextFile(tls.cert_file));
    ZARRD_ASSIGN_OR_RETURN(options.pem_private_key, ReadTextFile(tls.key_file));
  }
  return grpc::SslCredentials(options);
}

// The whole result's descriptor from its bands': the first band's, with the full first
// dimension and `size` bytes.
pb::ArrayDescriptor WholeDescriptor(const std::vector<pb::ArrayDescriptor>& bands, size_t size) {
  pb::ArrayDescriptor whole = bands[0];
  uint64_t rows = 0;
  for (const auto& b : bands) rows += b.shape_size() ? b.shape(0) : 0;
  if (whole.shape_size()) whole.set_shape(0, rows);
  whole.set_nbytes(size);
  return whole;
}

}  // namespace

constexpr int kFrameBytes = 4 << 20, kWindowBytes = 64 << 20;

Result<std::unique_ptr<Client>> Client::Connect(
    const std::string& address, double timeout_s, const TlsOptions& tls,
    const std::vector<std::pair<std::string, int>>& channel_args) {
  auto client = std::unique_ptr<Client>(new Client());
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  // Large HTTP/2 frames and receive window: the client receives the big results, and these
  // raised both bare streams and zarrd's in bench/serve_read.
  args.SetInt("grpc.http2.max_frame_size", kFrameBytes);
  args.SetInt("grpc.http2.lookahead_bytes", kWindowBytes);
  for (const auto& [name, value] : channel_args) args.SetInt(name, value);
  ZARRD_ASSIGN_OR_RETURN(auto credentials, Credentials(tls));
  client->channel_ = grpc::CreateCustomChannel(address, credentials, args);
  client->address_ = address;
  client->credentials_ = credentials;
  client->channel_args_ = args;
  auto deadline = std::chrono::system_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  if (!client->channel_->WaitForConnected(deadline)) {
    return Unavailable("cannot connect to zarrd at " + address + " within " +
                       std::to_string(timeout_s) + " s (is it running?)");
  }
  client->stub_ = pb::Zarrd::NewStub(client->channel_);
  client->use_shared_memory_ = address.rfind("unix:", 0) == 0;
  ZARRD_ASSIGN_OR_RETURN(client->info_, client->RefreshServerInfo());
  return client;
}

Result<pb::ServerInfoResponse> Client::RefreshServerInfo() {
  grpc::ClientContext ctx;
  pb::ServerInfoResponse resp;
  ZARRD_RETURN_IF_ERROR(
      wire::FromGrpcStatus(stub_->ServerInfo(&ctx, pb::ServerInfoRequest(), &resp)));
  info_ = resp;
  return resp;
}

Result<NodeInfo> Client::GetNode(const std::string& store, const std::string& path) {
  grpc::ClientContext ctx;
  pb::NodeRequest req;
  req.set_store(store);
  req.set_path(path);
  pb::NodeInfo resp;
  ZARRD_RETURN_IF_ERROR(wire::FromGrpcStatus(stub_->GetNode(&ctx, req, &resp)));
  return ToNodeInfo(resp);
}

Result<NodeInfo> Client::CreateArray(const std::string& store, const std::string& path,
                                     const json& metadata, const json& attributes, bool overwrite) {
  grpc::ClientContext ctx;
  pb::CreateNodeRequest req;
  req.set_store(store);
  req.set_path(path);
  req.set_kind(pb::NODE_KIND_ARRAY);
  req.set_metadata_json(metadata.dump());
  if (!attributes.is_null()) req.set_attributes_json(attributes.dump());
  req.set_overwrite(overwrite);
  pb::NodeInfo resp;
  ZARRD_RETURN_IF_ERROR(wire::FromGrpcStatus(stub_->CreateNode(&ctx, req, &resp)));
  return ToNodeInfo(resp);
}

Result<NodeInfo> Client::CreateGroup(const std::string& store, const std::string& path,
                                     int zarr_format, const json& attributes) {
  grpc::ClientContext ctx;
  pb::CreateNodeRequest req;
  req.set_store(store);
  req.set_path(path);
  req.set_kind(pb::NODE_KIND_GROUP);
  req.set_metadata_json(zarr_format == 2 ? json{{"zarr_format", 2}}.dump()
                                         : json{{"zarr_format", 3}, {"node_type", "group"}}.dump());
  req.set_attributes_json(attributes.dump());
  pb::NodeInfo resp;
  ZARRD_RETURN_IF_ERROR(wire::FromGrpcStatus(stub_->CreateNode(&ctx, req, &resp)));
  return ToNodeInfo(resp);
}

Result<std::vector<pb::ListNodesResponse::Entry>> Client::List(const std::string& store,
                                                               const std::string& path) {
  grpc::ClientContext ctx;
  pb::NodeRequest req;
  req.set_store(store);
  req.set_path(path);
  pb::ListNodesResponse resp;
  ZARRD_RETURN_IF_ERROR(wire::FromGrpcStatus(stub_->ListNodes(&ctx, req, &resp)));
  return std::vector<pb::ListNodesResponse::Entry>(resp.nodes().begin(), resp.nodes().end());
}

Result<uint64_t> Client::Delete(const std::string& store, const std::string& path) {
  grpc::ClientContext ctx;
  pb::NodeRequest req;
  req.set_store(store);
  req.set_path(path);
  pb::DeleteNodeResponse resp;
  ZARRD_RETURN_IF_ERROR(wire::FromGrpcStatus(stub_->DeleteNode(&ctx, req, &resp)));
  return resp.keys_deleted();
}

Result<pb::ConsolidateResponse> Client::Consolidate(const std::string& store,
                                                    const std::string& path) {
  grpc::ClientContext ctx;
  pb::ConsolidateRequest req;
  req.set_store(store);
  req.set_path(path);
  pb::ConsolidateResponse resp;
  ZARRD_RETURN_IF_ERROR(wire::FromGrpcStatus(stub_->Consolidate(&ctx, req, &resp)));
  return resp;
}

Result<NodeInfo> Client::SetAttributes(const std::string& store, const std::string& path,
                                       const json& attributes) {
  grpc::ClientContext ctx;
  pb::SetAttributesRequest req;
  req.set_store(store);
  req.set_path(path);
  req.set_attributes_json(attributes.dump());
  pb::NodeInfo resp;
  ZARRD_RETURN_IF_ERROR(wire::FromGrpcStatus(stub_->SetAttributes(&ctx, req, &resp)));
  return ToNodeInfo(resp);
}

Result<NodeInfo> Client::Resize(const std::string& store, const std::string& path,
                                const std::vector<int64_t>& shape) {
  grpc::ClientContext ctx;
  pb::ResizeRequest req;
  req.set_store(store);
  req.set_path(path);
  for (int64_t s : shape) req.add_shape(s);
  pb::NodeInfo resp;
  ZARRD_RETURN_IF_ERROR(wire::FromGrpcStatus(stub_->Resize(&ctx, req, &resp)));
  return ToNodeInfo(resp);
}

Status Client::Get(const std::string& store, const std::string& path,
                   const pb::Selection& selection, void* out, size_t size,
                   pb::ArrayDescriptor* descriptor, pb::Prototype prototype) {
  return GetWithNode(store, path, nullptr, selection, out, size, descriptor, prototype);
}

Status Client::Get(const NodeInfo& node, const pb::Selection& selection, void* out, size_t size,
                   pb::ArrayDescriptor* descriptor, pb::Prototype prototype) {
  return GetWithNode(node.store, node.path, &node, selection, out, size, descriptor, prototype);
}

Status Client::GetWithNode(const std::string& store, const std::string& path, const NodeInfo* node,
                           const pb::Selection& selection, void* out, size_t size,
                           pb::ArrayDescriptor* descriptor, pb::Prototype prototype) {
  pb::GetItemRequest req;
  req.set_store(store);
  req.set_path(path);
  *req.mutable_selection() = selection;
  req.set_prototype(prototype);
  auto mismatch = [&](uint64_t nbytes) {
    return InvalidArgument("the result of " + store + ":" + path + " has " +
                           std::to_string(nbytes) + " bytes, the buffer " + std::to_string(size));
  };
  // Over the Unix socket, results past 64 KiB are decoded by the server into reused shared
  // memory: one copy here instead of protobuf bytes through the socket.
  constexpr size_t kScratchMin = 64 << 10;
  if (use_shared_memory_ && prototype != pb::PROTOTYPE_DEVICE && size > kScratchMin) {
    if (size <= scratch_max_bytes_) {
      ZARRD_ASSIGN_OR_RETURN(bool done,
                             GetThroughScratch(store, path, selection, out, size, descriptor));
      if (done) return OkStatus();
    } else {
      auto bands =
          Bands(store, path, node, selection,
                {.target_bytes = scratch_band_bytes_, .max_bytes = scratch_max_bytes_}, size);
      if (bands.ok() && bands->size() > 1) {
        ZARRD_ASSIGN_OR_RETURN(bool done,
                               GetScratchBands(store, path, *bands, out, size, descriptor));
        if (done) return OkStatus();
      }
    }
  }
  if (size <= info_.max_unary_result_bytes()) {
    grpc::ClientContext ctx;
    pb::GetItemResponse resp;
    ZARRD_RETURN_IF_ERROR(wire::FromGrpcStatus(stub_->GetItem(&ctx, req, &resp)));
    if (resp.data().size() != size) return mismatch(resp.data().size());
    std::memcpy(out, resp.data().data(), size);
    if (descriptor) *descriptor = resp.array();
    return OkStatus();
  }
  if (prototype != pb::PROTOTYPE_DEVICE && read_streams_ > 1 && size / min_band_bytes_ > 1) {
    auto bands = Bands(store, path, node, selection,
                       {.target_bytes = min_band_bytes_, .max_bands = read_streams_}, size);
    if (bands.ok() && bands->size() > 1)
      return GetBands(store, path, *bands, out, size, descriptor);
  }
  grpc::ClientContext ctx;
  ZARRD_ASSIGN_OR_RETURN(auto got, ReadPieces(channel_.get(), "/zarrd.v1.Zarrd/GetItemStream", req,
                                              &ctx, static_cast<uint8_t*>(out), size,
                                              [&](const pb::ArrayDescriptor& array) -> Status {
                                                if (array.nbytes() != size)
                                                  return mismatch(array.nbytes());
                                                if (descriptor) *descriptor = array;
                                                return OkStatus();
                                              }));
  if (got.bytes != size) {
    return DataLoss("stream ended after " + std::to_string(got.bytes) + " of " +
                    std::to_string(size) + " bytes");
  }
  return OkStatus();
}

Result<bool> Client::GetThroughScratch(const std::string& store, const std::string& path,
                                       const pb::Selection& selection, void* out, size_t size,
                                       pb::ArrayDescriptor* descriptor) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto region = TakeScratch(size);
    if (!region.ok()) {
      // No room in /dev/shm: bytes this time. Otherwise the server cannot map this process's
      // shared memory (another host, another /dev/shm): bytes from now on.
      if (region.status().code() != StatusCode::kResourceExhausted) use_shared_memory_ = false;
      return false;
    }
    Status s = GetInto(store, path, selection, **region, 0, size, descriptor);
    if (s.reason() == reason::kHostRegionNotRegistered && attempt == 0) {
      // zarrd restarted since the region was registered, and its regions went with it.
      (*region)->stub_ = nullptr;
      ForgetScratch();
      continue;
    }
    if (s.ok()) std::memcpy(out, (*region)->data(), size);
    ReturnScratch(std::move(*region));
    ZARRD_RETURN_IF_ERROR(s);
    return true;
  }
  return false;
}

Result<bool> Client::GetScratchBands(const std::string& store, const std::string& path,
                                     const std::vector<Band>& bands, void* out, size_t size,
                                     pb::ArrayDescriptor* descriptor) {
  std::vector<Status> status(bands.size());
  std::vector<char> done(bands.size(), 0);
  std::vector<pb::ArrayDescriptor> first(bands.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < std::min(kScratchBandsInFlight, bands.size()); ++t) {
    threads.emplace_back([&] {
      for (size_t b; (b = next.fetch_add(1)) < bands.size();) {
        auto got = GetThroughScratch(store, path, bands[b].selection,
                                     static_cast<uint8_t*>(out) + bands[b].offset, bands[b].nbytes,
                                     &first[b]);
        if (!got.ok()) status[b] = got.status();
        done[b] = got.ok() && *got;
        if (!done[b]) next = bands.size();  // the rest would fail alike
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& s : status) ZARRD_RETURN_IF_ERROR(s);
  if (std::find(done.begin(), done.end(), 0) != done.end()) return false;
  if (descriptor) *descriptor = WholeDescriptor(first, size);
  return true;
}

Result<std::unique_ptr<HostRegion>> Client::TakeScratch(size_t size) {
  {
    std::lock_guard lock(scratch_mutex_);
    for (auto it = scratch_.begin(); it != scratch_.end(); ++it) {
      if ((*it)->size() >= size) {
        auto region = std::move(*it);
        scratch_.erase(it);
        return region;
      }
    }
  }
  return CreateHostRegion(std::max<size_t>(size, 1 << 20));
}

void Client::ForgetScratch() {
  std::lock_guard lock(scratch_mutex_);
  for (auto& region : scratch_) region->stub_ = nullptr;  // unmapped, not unregistered
  scratch_.clear();
}

void Client::ReturnScratch(std::unique_ptr<HostRegion> region) {
  constexpr size_t kKept = 4;
  std::lock_guard lock(scratch_mutex_);
  scratch_.push_back(std::move(region));
  if (scratch_.size() > kKept) {
    // Drop the smallest: the kept ones serve the sizes this process reads.
    auto smallest =
        std::min_element(scratch_.begin(), scratch_.end(),
                         [](const auto& a, const auto& b) { return a->size() < b->size(); });
    scratch_.erase(smallest);
  }
}

grpc::ChannelInterface* Client::BandChannel(size_t b) {
  if (b == 0) return channel_.get();
  std::lock_guard lock(band_mutex_);
  while (band_channels_.size() < b) {
    grpc::ChannelArguments args = channel_args_;
    // Channels with equal arguments share one connection from gRPC's global pool.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    band_channels_.push_back(grpc::CreateCustomChannel(address_, credentials_, args));
  }
  return band_channels_[b - 1].get();
}

Result<std::vector<Client::Band>> Client::Bands(const std::string& store, const std::string& path,
                                                const NodeInfo* node,
                                                const pb::Selection& selection,
                                                const BandLimits& limits, uint64_t size) {
  if (selection.mode() != pb::SELECTION_MODE_BASIC) return std::vector<Band>{};  // one request
  NodeInfo fetched;
  if (!node) {
    ZARRD_ASSIGN_OR_RETURN(fetched, GetNode(store, path));
    node = &fetched;
  }
  ZARRD_ASSIGN_OR_RETURN(ResolvedSelection sel, ResolveSelection(FromWire(selection), node->shape));
  // A node other than the caller's result size: one request, which says what differs.
  if (sel.num_bytes(node->item_size()) != size) return std::vector<Band>{};
  std::vector<Band> bands;
  for (const zarrd::Band& band : PlanBands(sel, node->chunks, node->item_size(), limits)) {
    bands.push_back({ToWire(band.selection), band.offset, band.nbytes});
  }
  return bands;
}

Status Client::GetBands(const std::string& store, const std::string& path,
                        const std::vector<Band>& bands, void* out, size_t size,
                        pb::ArrayDescriptor* descriptor) {
  std::vector<Status> status(bands.size());
  std::vector<pb::ArrayDescriptor> first(bands.size());
  std::vector<std::thread> threads;
  std::vector<grpc::ChannelInterface*> channels;
  for (size_t b = 0; b < bands.size(); ++b) channels.push_back(BandChannel(b));
  for (size_t b = 0; b < bands.size(); ++b) {
    threads.emplace_back([&, b] {
      pb::GetItemRequest req;
      req.set_store(store);
      req.set_path(path);
      *req.mutable_selection() = bands[b].selection;
      req.set_prototype(pb::PROTOTYPE_HOST);
      grpc::ClientContext ctx;
      auto got = ReadPieces(channels[b], "/zarrd.v1.Zarrd/GetItemStream", req, &ctx,
                            static_cast<uint8_t*>(out) + bands[b].offset, bands[b].nbytes);
      if (!got.ok()) {
        status[b] = got.status();
      } else if (got->bytes != bands[b].nbytes) {
        status[b] = DataLoss("stream ended after " + std::to_string(got->bytes) + " of " +
                             std::to_string(bands[b].nbytes) + " bytes");
      } else {
        first[b] = got->array;
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& s : status) ZARRD_RETURN_IF_ERROR(s);
  if (descriptor) *descriptor = WholeDescriptor(first, size);
  return OkStatus();
}

Status Client::Set(const std::string& store, const std::string& path,
                   const pb::Selection& selection, const void* in, size_t size) {
  const auto* bytes = static_cast<const char*>(in);
  const size_t piece = info_.stream_piece_bytes() ? info_.stream_piece_bytes() : (4u << 20);
  if (size <= piece) {
    grpc::ClientContext ctx;
    pb::SetItemRequest req;
    req.set_store(store);
    req.set_path(path);
    *req.mutable_selection() = selection;
    req.set_data(bytes, size);
    pb::SetItemResponse resp;
    return wire::FromGrpcStatus(stub_->SetItem(&ctx, req, &resp));
  }
  grpc::ClientContext ctx;
  pb::SetItemResponse resp;
  auto writer = stub_->SetItemStream(&ctx, &resp);
  for (size_t at = 0; at < size || at == 0; at += piece) {
    pb::SetItemRequest req;
    if (at == 0) {
      req.set_store(store);
      req.set_path(path);
      *req.mutable_selection() = selection;
    }
    req.set_offset(at);
    req.set_data(bytes + at, std::min(piece, size - at));
    if (!writer->Write(req)) break;  // the server ended the call: Finish says why
  }
  writer->WritesDone();
  return wire::FromGrpcStatus(writer->Finish());
}

HostRegion::~HostRegion() {
  if (stub_ && !id_.empty()) {
    grpc::ClientContext ctx;
    pb::UnregisterHostRegionRequest req;
    req.set_region_id(id_);
    pb::UnregisterHostRegionResponse resp;
    (void)stub_->UnregisterHostRegion(&ctx, req, &resp);
  }
  if (data_) ::munmap(data_, size_);
}

Result<std::unique_ptr<HostRegion>> Client::CreateHostRegion(size_t size) {
  grpc::ClientContext ctx;
  pb::RegisterHostRegionRequest req;
  req.set_nbytes(size);
  req.set_client_pid(::getpid());
  pb::RegisterHostRegionResponse resp;
  ZARRD_RETURN_IF_ERROR(wire::FromGrpcStatus(stub_->RegisterHostRegion(&ctx, req, &resp)));
  std::unique_ptr<HostRegion> region(new HostRegion());
  region->id_ = resp.region_id();
  region->stub_ = stub_.get();  // unregistered by the destructor from here on
  region->shm_name_ = resp.shm_name();
  // zarrd created the object; its name goes as soon as this process has it mapped.
  int fd = ::shm_open(resp.shm_name().c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0);
  const int open_error = errno;
  ::shm_unlink(resp.shm_name().c_str());
  if (fd < 0) return ErrnoStatus(open_error, "shm_open " + resp.shm_name());
  struct stat st;
  if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) < resp.nbytes()) {
    ::close(fd);
    return FailedPrecondition("shared memory " + resp.shm_name() + " is not the region zarrd made");
  }
  void* data = ::mmap(nullptr, resp.nbytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int map_error = errno;
  ::close(fd);
  if (data == MAP_FAILED) return ErrnoStatus(map_error, "mmap " + resp.shm_name());
  region->data_ = static_cast<uint8_t*>(data);
  region->size_ = resp.nbytes();
  return region;
}

Status Client::GetInto(const std::string& store, const std::string& path,
                       const pb::Selection& selection, const HostRegion& region, uint64_t offset,
                       uint64_t nbytes, pb::ArrayDescriptor* descriptor) {
  grpc::ClientContext ctx;
  pb::GetItemRequest req;
  req.set_store(store);
  req.set_path(path);
  *req.mutable_selection() = selection;
  req.set_prototype(pb::PROTOTYPE_HOST);
  auto* target = req.mutable_host_region();
  target->set_region_id(region.id());
  target->set_offset(offset);
  target->set_nbytes(nbytes);
  pb::GetItemResponse resp;
  ZARRD_RETURN_IF_ERROR(wire::FromGrpcStatus(stub_->GetItem(&ctx, req, &resp)));
  if (descriptor) *descriptor = resp.array();
  return OkStatus();
}

Status Client::SetFrom(const std::string& store, const std::string& path,
                       const pb::Selection& selection, const HostRegion& region, uint64_t offset,
                       uint64_t nbytes) {
  grpc::ClientContext ctx;
  pb::SetItemRequest req;
  req.set_store(store);
  req.set_path(path);
  *req.mutable_selection() = selection;
  auto* source = req.mutable_host_region();
  source->set_region_id(region.id());
  source->set_offset(offset);
  source->set_nbytes(nbytes);
  pb::SetItemResponse resp;
  return wire::FromGrpcStatus(stub_->SetItem(&ctx, req, &resp));
}

Result<bool> CheckHealth(const std::string& address, double timeout_s, const TlsOptions& tls) {
  ZARRD_ASSIGN_OR_RETURN(auto credentials, Credentials(tls));
  auto stub = grpc::health::v1::Health::NewStub(grpc::CreateChannel(address, credentials));
  grpc::ClientContext ctx;
  ctx.set_wait_for_ready(true);
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
  grpc::health::v1::HealthCheckRequest request;  // service "": the whole server
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = stub->Check(&ctx, request, &response);
  if (!status.ok()) {
    return Unavailable("health check of " + address + ": " + status.error_message());
  }
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
}

}  // namespace zarrd::client

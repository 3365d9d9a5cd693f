// The C++ client against a real zarrd started with fork + exec, on a Unix socket and over TCP.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "client/client.h"
#include "common/testing/test_util.h"

extern char** environ;

namespace zarrd::client {
namespace {

using nlohmann::json;

class ClientE2E : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    std::ofstream(dir_.path() + "/zarrd.json") << json{
        {"stores", {{{"name", "local"}, {"root", "data"}}, {{"name", "mem"}, {"kind", "memory"}}}},
        {"listen", {"unix:zarrd.sock", "127.0.0.1:0"}},
        {"metrics_listen", ""},
        {"max_unary_result_bytes", 1 << 16},
        {"stream_piece_bytes", 1 << 16}}.dump();
    const std::string address = StartServer();
    ASSERT_FALSE(address.empty());
    auto c = Client::Connect(address, 10);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    client_ = std::move(*c);
  }
  // Starts zarrd on the test's config; returns the address of the parameter's transport, empty
  // when it did not start.
  std::string StartServer() {
    const std::string log = dir_.path() + "/zarrd.log";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const std::string config = dir_.path() + "/zarrd.json";
    const char* argv[] = {ZARRD_BIN, "--config", config.c_str(), nullptr};
    const int spawned =
        posix_spawn(&pid_, ZARRD_BIN, &actions, nullptr, const_cast<char**>(argv), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) return "";
    std::string text;
    for (int i = 0; i < 400 && text.find("ready") == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
      std::ifstream f(log);
      text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    std::smatch m;
    if (!std::regex_search(text, m, std::regex("listening on (127\\.0\\.0\\.1:[0-9]+)"))) {
      ADD_FAILURE() << text;
      return "";
    }
    return GetParam() == std::string("tcp") ? m[1].str() : "unix:" + dir_.path() + "/zarrd.sock";
  }
  // SIGTERM; true when zarrd exited 0.
  bool StopServer() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  void TearDown() override {
    client_.reset();
    EXPECT_TRUE(StopServer());
  }
  zarrd::testing::TempDir dir_;
  pid_t pid_ = 0;
  std::unique_ptr<Client> client_;
};

json Meta(std::vector<int64_t> shape, std::vector<int64_t> chunks) {
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", shape},
          {"data_type", "int32"},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", chunks}}}}},
          {"chunk_key_encoding", {{"name", "default"}}},
          {"fill_value", -1},
          {"codecs", json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}},
                                     {"name":"zstd","configuration":{"level":1}}])")}};
}

TEST_P(ClientE2E, UnaryStreamedAndSharedMemoryReadsAgree) {
  for (const char* store : {"local", "mem"}) {
    SCOPED_TRACE(store);
    auto node = client_->CreateArray(store, "g/a", Meta({300, 100}, {64, 64}));
    ASSERT_TRUE(node.ok()) << node.status().ToString();
    EXPECT_EQ(node->shape, (std::vector<int64_t>{300, 100}));
    std::vector<int32_t> values(300 * 100);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i * 3 + 1);
    // 120 KB: over the 64 KiB unary limit, so both directions stream.
    ASSERT_TRUE(client_->Set(store, "g/a", pb::Selection(), values.data(), values.size() * 4).ok());
    std::vector<int32_t> all(values.size());
    ASSERT_TRUE(client_->Get(store, "g/a", pb::Selection(), all.data(), all.size() * 4).ok());
    EXPECT_EQ(all, values);
    // A small stepped read goes unary; compare with the element-wise definition.
    auto sel = *SelectionFromText("290:3:-37, 7");
    std::vector<int32_t> part(8);
    pb::ArrayDescriptor d;
    ASSERT_TRUE(client_->Get(store, "g/a", sel, part.data(), part.size() * 4, &d).ok());
    EXPECT_EQ(d.shape_size(), 1);
    for (int k = 0; k < 8; ++k) EXPECT_EQ(part[k], values[(290 - 37 * k) * 100 + 7]);
    // Shared memory: the same bytes, decoded in place.
    auto region = client_->CreateHostRegion(values.size() * 4 + 64);
    ASSERT_TRUE(region.ok()) << region.status().ToString();
    ASSERT_TRUE(
        client_->GetInto(store, "g/a", pb::Selection(), **region, 64, values.size() * 4).ok());
    EXPECT_EQ(std::memcmp((*region)->data() + 64, values.data(), values.size() * 4), 0);
    EXPECT_EQ(
        client_->GetInto(store, "g/a", pb::Selection(), **region, 128, values.size() * 4).code(),
        StatusCode::kInvalidArgument);
    // A wrong destination size is refused, and nothing is written by a wrong input size.
    EXPECT_EQ(client_->Get(store, "g/a", sel, part.data(), 4).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(client_->Set(store, "g/a", sel, part.data(), 12).code(),
              StatusCode::kInvalidArgument);
    ASSERT_TRUE(client_->Get(store, "g/a", pb::Selection(), all.data(), all.size() * 4).ok());
    EXPECT_EQ(all, values);
  }
}

// Client::Get of `text` from int32 array local:`path` against numpy's result of the values,
// with the descriptor of the whole result; by store and path, and with the node GetNode gave.
void ExpectGetMatchesTheReference(Client& client, const std::string& path,
                                  const std::vector<int64_t>& shape,
                                  const std::vector<int32_t>& values, const char* text) {
  SCOPED_TRACE(text);
  const auto sel = ResolveSelection(*ParseSelection(text), shape);
  ASSERT_TRUE(sel.ok());
  const auto expected = zarrd::testing::Reference(values, shape, *sel);
  const auto node = client.GetNode("local", path);
  ASSERT_TRUE(node.ok());
  for (bool with_node : {false, true}) {
    std::vector<int32_t> got(expected.size());
    pb::ArrayDescriptor d;
    const auto wire = *SelectionFromText(text);
    auto s = with_node ? client.Get(*node, wire, got.data(), got.size() * 4, &d)
                       : client.Get("local", path, wire, got.data(), got.size() * 4, &d);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(got, expected);
    EXPECT_EQ(std::vector<int64_t>(d.shape().begin(), d.shape().end()), sel->result_shape);
    EXPECT_EQ(d.nbytes(), got.size() * 4);
  }
}

// The C++ client's scratch shared-memory regions: zarrd's objects mapped here (their names are
// unlinked once mapped).
int ScratchRegionsOfThisProcess() {
  std::ifstream maps("/proc/self/maps");
  int regions = 0;
  for (std::string line; std::getline(maps, line);) {
    regions += line.find("/dev/shm/zarrd-") != std::string::npos;
  }
  return regions;
}

// Large reads split into parallel streams, one band of the first selected dimension each.
TEST_P(ClientE2E, BandedStreamedReadsMatchTheReference) {
  const std::vector<int64_t> shape = {300, 100};
  ASSERT_TRUE(client_->CreateArray("local", "banded", Meta(shape, {64, 64})).ok());
  const auto values = zarrd::testing::Pattern(300 * 100);
  ASSERT_TRUE(
      client_->Set("local", "banded", pb::Selection(), values.data(), values.size() * 4).ok());
  // Sockets of this process: each band past the first streams on a connection of its own.
  auto sockets = [] {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
      std::error_code ec;
      n += std::filesystem::read_symlink(e.path(), ec).string().rfind("socket:", 0) == 0;
    }
    return n;
  };
  const int sockets_before = sockets();
  client_->set_read_streams(4, 16 << 10);
  client_->set_use_shared_memory(false);  // the bytes transport, banded
  for (const char* text : {"", "::-1", "290:3:-1, ::2", "..., 3:97", "5:, ::-1",
                           "-1:-301:-1, 99:0:-1", "::2, 1:100", "1:300:3", "::-7", "299:0:-65"}) {
    ExpectGetMatchesTheReference(*client_, "banded", shape, values, text);
  }
  EXPECT_GE(sockets() - sockets_before, 3);
  client_->set_read_streams(4);
  client_->set_use_shared_memory(GetParam() == std::string("unix"));
}

TEST_P(ClientE2E, MidSizeReadsOverTheSocketGoThroughReusedScratchSharedMemory) {
  if (GetParam() != std::string("unix")) GTEST_SKIP() << "shared memory needs the Unix socket";
  ASSERT_TRUE(client_->use_shared_memory());
  const std::vector<int64_t> shape = {300, 100};
  ASSERT_TRUE(client_->CreateArray("local", "scratch", Meta(shape, {64, 64})).ok());
  const auto values = zarrd::testing::Pattern(300 * 100);
  ASSERT_TRUE(
      client_->Set("local", "scratch", pb::Selection(), values.data(), values.size() * 4).ok());
  for (int i = 0; i < 20; ++i) {
    const std::string text = std::to_string(i) + ":" + std::to_string(300 - i) + ", ::-1";
    const auto sel = ResolveSelection(*ParseSelection(text), shape);
    const auto expected = zarrd::testing::Reference(values, shape, *sel);
    std::vector<int32_t> got(expected.size());
    ASSERT_TRUE(
        client_->Get("local", "scratch", *SelectionFromText(text), got.data(), got.size() * 4)
            .ok());
    ASSERT_EQ(got, expected) << text;
  }
  const int regions = ScratchRegionsOfThisProcess();
  EXPECT_GE(regions, 1);
  EXPECT_LE(regions, 4);  // reused, not one per read
}

// Results larger than a scratch region: bands cut on chunk edges, each through a region.
TEST_P(ClientE2E, LargeReadsOverTheSocketGoThroughScratchBands) {
  if (GetParam() != std::string("unix")) GTEST_SKIP() << "shared memory needs the Unix socket";
  const std::vector<int64_t> shape = {700, 1000};
  ASSERT_TRUE(client_->CreateArray("local", "scratch_bands", Meta(shape, {16, 250})).ok());
  const auto values = zarrd::testing::Pattern(700 * 1000);
  ASSERT_TRUE(
      client_->Set("local", "scratch_bands", pb::Selection(), values.data(), values.size() * 4)
          .ok());
  client_->set_scratch_sizes(256 << 10, 96 << 10);
  for (const char* text : {"", "::-1", "650:2:-3", "..., 500:", "5:, ::-1", "17:600, 3", "1:700:3",
                           "::7, ::-2", "::-5, 1:", "699:0:-17"}) {
    ExpectGetMatchesTheReference(*client_, "scratch_bands", shape, values, text);
  }
  client_->set_scratch_sizes(64 << 20, 32 << 20);
  const int regions = ScratchRegionsOfThisProcess();
  EXPECT_GE(regions, 1);  // the reads went through shared memory
  EXPECT_LE(regions, 4);  // and its regions were reused
}

TEST_P(ClientE2E, ScratchSharedMemoryReadsCarryOnAcrossARestartOfZarrd) {
  if (GetParam() != std::string("unix")) GTEST_SKIP() << "shared memory needs the Unix socket";
  const std::vector<int64_t> shape = {300, 100};
  ASSERT_TRUE(client_->CreateArray("local", "restart", Meta(shape, {64, 64})).ok());
  const auto values = zarrd::testing::Pattern(300 * 100);
  ASSERT_TRUE(
      client_->Set("local", "restart", pb::Selection(), values.data(), values.size() * 4).ok());
  auto read = [&](const std::string& text) {
    const auto expected =
        zarrd::testing::Reference(values, shape, *ResolveSelection(*ParseSelection(text), shape));
    std::vector<int32_t> got(expected.size());
    Status s =
        client_->Get("local", "restart", *SelectionFromText(text), got.data(), got.size() * 4);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(got, expected) << text;
  };
  read("10:290, ::-1");  // registers a scratch region
  ASSERT_TRUE(StopServer());
  ASSERT_FALSE(StartServer().empty());  // the same socket; the region's id means nothing now
  Result<pb::ServerInfoResponse> info = Unavailable("not asked");
  for (int i = 0; i < 100 && !info.ok(); ++i) {  // the channel reconnects after its backoff
    info = client_->RefreshServerInfo();
    if (!info.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  read("5:, 7:");
  EXPECT_TRUE(client_->use_shared_memory());
}

TEST_P(ClientE2E, MetadataResizeAttributesAndDelete) {
  ASSERT_TRUE(client_->CreateGroup("local", "grp", 2, {{"title", "t"}}).ok());
  ASSERT_TRUE(client_->CreateArray("local", "grp/r", Meta({10}, {4})).ok());
  std::vector<int32_t> v = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  ASSERT_TRUE(client_->Set("local", "grp/r", pb::Selection(), v.data(), 40).ok());
  auto resized = client_->Resize("local", "grp/r", {5});
  ASSERT_TRUE(resized.ok()) << resized.status().ToString();
  ASSERT_TRUE(client_->Resize("local", "grp/r", {8}).ok());
  std::vector<int32_t> out(8);
  ASSERT_TRUE(client_->Get("local", "grp/r", pb::Selection(), out.data(), 32).ok());
  EXPECT_EQ(out, (std::vector<int32_t>{0, 1, 2, 3, 4, -1, -1, -1}));  // cut-off part is fill
  auto attrs = client_->SetAttributes("local", "grp/r", {{"units", "K"}});
  ASSERT_TRUE(attrs.ok());
  EXPECT_EQ(client_->GetNode("local", "grp/r")->attributes["units"], "K");
  EXPECT_EQ(client_->GetNode("local", "grp")->attributes["title"], "t");
  auto listing = client_->List("local", "grp");
  ASSERT_TRUE(listing.ok());
  ASSERT_EQ(listing->size(), 1u);
  EXPECT_EQ((*listing)[0].name(), "r");
  EXPECT_GT(*client_->Delete("local", "grp"), 0u);
  EXPECT_EQ(client_->GetNode("local", "grp/r").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(client_->GetNode("nostore", "x").status().code(), StatusCode::kNotFound);
}

TEST_P(ClientE2E, ConcurrentClientsShareOneChunk) {
  ASSERT_TRUE(client_->CreateArray("local", "c", Meta({8, 64}, {8, 64})).ok());
  const std::string address = "unix:" + dir_.path() + "/zarrd.sock";
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto c = Client::Connect(address);
      ASSERT_TRUE(c.ok());
      std::vector<int32_t> col(8, t + 100);
      auto sel = *SelectionFromText(":, " + std::to_string(t) + "::8");
      std::vector<int32_t> block(8 * 8, t + 100);
      EXPECT_TRUE((*c)->Set("local", "c", sel, block.data(), block.size() * 4).ok());
    });
  }
  for (auto& th : threads) th.join();
  std::vector<int32_t> out(8 * 64);
  ASSERT_TRUE(client_->Get("local", "c", pb::Selection(), out.data(), out.size() * 4).ok());
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 64; ++c) ASSERT_EQ(out[r * 64 + c], c % 8 + 100);
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientE2E, ::testing::Values("unix", "tcp"));

}  // namespace
}  // namespace zarrd::client

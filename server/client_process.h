// Clients name their process ID so that what they hold (leases, registered regions) ends when
// they exit; the server must see the client's PID namespace.
#pragma once

#include <signal.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>

namespace zarrd::server {

// True when `pid` (> 0) names no process any more.
inline bool ClientExited(int pid) { return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH; }

// A client process: its pid and its start time, which tells it from a later process that got
// the same pid.
struct ClientIdentity {
  int pid = 0;
  uint64_t start_ticks = 0;  // clock ticks after boot (/proc/<pid>/stat, field 22)
  bool operator<(const ClientIdentity& o) const {
    return std::tie(pid, start_ticks) < std::tie(o.pid, o.start_ticks);
  }
  bool operator==(const ClientIdentity& o) const = default;
};

// The live process `pid` (> 0), or nullopt when there is none.
inline std::optional<ClientIdentity> IdentifyClient(int pid) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t comm_end = stat.rfind(')');  // the command name may hold spaces and ')'
  if (comm_end == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(comm_end + 1));
  std::string field;
  for (int n = 3; n <= 22 && fields >> field; ++n) {
    if (n == 22) return ClientIdentity{pid, std::stoull(field)};
  }
  return std::nullopt;
}

// True when the process has exited, or its pid names another process now.
inline bool ClientExited(const ClientIdentity& client) {
  auto now = IdentifyClient(client.pid);
  return !now || !(*now == client);
}

}  // namespace zarrd::server

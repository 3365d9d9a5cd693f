// Clients name their process ID so that what they hold (leases, registered regions) ends when
// they exit; the server must see the client's PID namespace.
#pragma once

#include <signal.h>

#include <cerrno>

namespace zarrd::server {

// True when `pid` (> 0) names no process any more.
inline bool ClientExited(int pid) { return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace zarrd::server

// systemd's readiness protocol without libsystemd: a datagram to $NOTIFY_SOCKET (Type=notify).
#pragma once

#include <string>

namespace zarrd::server {

// Sends `state` ("READY=1", "STOPPING=1") when started by systemd; a no-op otherwise.
void SdNotify(const std::string& state);

}  // namespace zarrd::server

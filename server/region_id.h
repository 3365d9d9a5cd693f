// Ids of registered regions. An id names memory that any caller who knows it may write into,
// so it is random: not guessable from one's own, and one kept across a restart of zarrd cannot
// name a region another client registered since (it is NOT_FOUND instead).
#pragma once

#include <cstdio>
#include <random>
#include <string>

namespace zarrd::server {

// `prefix` and 128 random bits in hex.
inline std::string NewRegionId(const char* prefix) {
  std::random_device random;  // /dev/urandom
  char hex[33];
  std::snprintf(hex, sizeof hex, "%08x%08x%08x%08x", random(), random(), random(), random());
  return std::string(prefix) + hex;
}

}  // namespace zarrd::server

// Ids of registered regions and leases. An id names memory that any caller who knows it may
// write into or free, so it is random: not guessable from one's own, and one kept across a
// restart of zarrd cannot name what another client registered since (it is NOT_FOUND instead).
#pragma once

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>

namespace zarrd::server {

// 64 random bits (std::random_device reads /dev/urandom).
inline uint64_t RandomBits64() {
  std::random_device random;
  return uint64_t{random()} << 32 | random();
}

// `prefix` and 128 random bits in hex.
inline std::string NewRegionId(const char* prefix) {
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(RandomBits64()),
                static_cast<unsigned long long>(RandomBits64()));
  return std::string(prefix) + hex;
}

}  // namespace zarrd::server

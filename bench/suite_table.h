// The suite's table: a row a measurement, printed as markdown.
#pragma once

#include <cstdio>
#include <string>

namespace zarrd::bench {

struct Row {
  std::string work, zarrd, peer, limit, ratios;
};

inline std::string Fmt(const char* format, double v) {
  char s[64];
  std::snprintf(s, sizeof s, format, v);
  return s;
}

// a / b as "1.23", or "n/a" without b.
inline std::string Ratio(double a, double b) { return b > 0 ? Fmt("%.2f", a / b) : "n/a"; }

}  // namespace zarrd::bench

#include "common/file_util.h"

#include <fstream>
#include <sstream>

namespace zarrd {

Result<std::string> ReadTextFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return NotFound("cannot read " + path);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

}  // namespace zarrd

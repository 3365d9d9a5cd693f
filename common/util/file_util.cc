#include "common/util/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace zarrd {

Result<std::string> ReadTextFile(const std::string& path, uint64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return NotFound("cannot read " + path + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoStatus(errno, path);
  if (!S_ISREG(st.st_mode)) return InvalidArgument(path + " is not a regular file");
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return InvalidArgument(path + " holds " + std::to_string(st.st_size) + " bytes, more than " +
                           std::to_string(max_bytes));
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, path);
    if (n == 0) break;  // shrank meanwhile
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}

}  // namespace zarrd

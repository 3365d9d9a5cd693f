// A store over a local directory. Every path is resolved beneath the root's descriptor
// (openat2 RESOLVE_BENEATH), so neither ".." nor a symlink can lead outside it.
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string_view>

#include "common/kvstore/store.h"

namespace zarrd {
namespace {

// A write goes to "<name>.zarrd-tmp-<pid>-<token>-<n>" first, <token> 16 hex digits drawn once per
// process: a temporary is this process's when pid and token are, and a leftover of a process
// that is gone when that pid is not running or is ours with another token (a restarted zarrd in a
// container gets the same pid). Names of any other form are not temporaries.
constexpr std::string_view kTempMarker = ".zarrd-tmp-";

const std::string& ProcessToken() {
  static const std::string token = [] {
    std::random_device rd;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%08x%08x", rd(), rd());
    return std::string(hex);
  }();
  return token;
}

struct TempName {
  pid_t pid;
  std::string_view token;
};

// The pid and token of a temporary's file name; nullopt for any other name.
std::optional<TempName> ParseTempName(std::string_view name) {
  const size_t at = name.rfind(kTempMarker);
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  std::string_view rest = name.substr(at + kTempMarker.size());
  const auto digits = [](std::string_view s, bool hex) {
    size_t n = 0;
    while (n < s.size() && (std::isdigit(static_cast<unsigned char>(s[n])) ||
                            (hex && s[n] >= 'a' && s[n] <= 'f'))) {
      ++n;
    }
    return n;
  };
  const size_t pid_digits = digits(rest, false);
  if (pid_digits == 0 || pid_digits > 9 || pid_digits >= rest.size() || rest[pid_digits] != '-') {
    return std::nullopt;
  }
  const pid_t pid = static_cast<pid_t>(std::stol(std::string(rest.substr(0, pid_digits))));
  rest.remove_prefix(pid_digits + 1);
  if (digits(rest, true) != 16 || rest.size() < 18 || rest[16] != '-') return std::nullopt;
  const std::string_view token = rest.substr(0, 16);
  rest.remove_prefix(17);
  if (rest.empty() || rest.size() > 20 || digits(rest, false) != rest.size()) return std::nullopt;
  if (pid <= 0) return std::nullopt;
  return TempName{pid, token};
}

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

// Puts `temp` in place of `base` in `dir`, atomically for readers. A rename over an existing
// file makes ext4 start writing the new file out at once (auto_da_alloc, its guard against
// empty files after a power loss), a flush per replaced chunk in the writer's thread; exchanging
// the two names and unlinking the old file (now under the temporary name) is as atomic and
// leaves writeback to the kernel. A crash between the two leaves a temporary that
// RemoveStaleTemporaries removes. Filesystems without renameat2 flags get a plain rename.
int ReplaceFile(int dir, const char* temp, const char* base) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (::renameat2(dir, temp, dir, base, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EEXIST) break;
    if (::renameat2(dir, temp, dir, base, RENAME_EXCHANGE) == 0) {
      if (::unlinkat(dir, temp, 0) == 0) return 0;
      const int err = errno;  // `base` was not a file (a directory): put it back
      ::renameat2(dir, temp, dir, base, RENAME_EXCHANGE);
      errno = err;
      return -1;
    }
    if (errno != ENOENT) break;  // ENOENT: removed meanwhile, try again
  }
  return ::renameat(dir, temp, dir, base);
}

class LocalStore : public Store {
 public:
  LocalStore(std::string root, Fd root_fd, LocalStoreOptions options)
      : root_(std::move(root)), root_fd_(std::move(root_fd)), options_(options) {}

  Result<bool> Get(const std::string& key, Bytes* out) override {
    return GetBounded(key, std::numeric_limits<uint64_t>::max(), out);
  }

  Result<bool> GetBounded(const std::string& key, uint64_t max_bytes, Bytes* out) override {
    ZARRD_ASSIGN_OR_RETURN(auto value, OpenValue(key));
    if (!value) return false;
    if (value->size > max_bytes) return OversizedValue(Where(key), value->size, max_bytes);
    out->resize(static_cast<size_t>(value->size));
    ZARRD_RETURN_IF_ERROR(ReadAt(value->file.get(), 0, out->data(), out->size(), key));
    return true;
  }

  Result<std::optional<uint64_t>> GetExact(const std::string& key, MutableByteView dst) override {
    ZARRD_ASSIGN_OR_RETURN(auto value, OpenValue(key));
    if (!value) return std::optional<uint64_t>();
    if (value->size == dst.size()) {
      ZARRD_RETURN_IF_ERROR(ReadAt(value->file.get(), 0, dst.data(), dst.size(), key));
    }
    return std::optional<uint64_t>(value->size);
  }

  Result<bool> GetRange(const std::string& key, ByteRange range, Bytes* out) override {
    ZARRD_ASSIGN_OR_RETURN(auto value, OpenValue(key));
    if (!value) return false;
    ZARRD_ASSIGN_OR_RETURN(uint64_t offset, RangeOffset(range, value->size, Where(key)));
    out->resize(range.length);
    ZARRD_RETURN_IF_ERROR(ReadAt(value->file.get(), offset, out->data(), out->size(), key));
    return true;
  }

  Status Set(const std::string& key, ByteView value) override {
    ZARRD_RETURN_IF_ERROR(ValidateKey(key));
    size_t slash = key.rfind('/');
    std::string base = slash == std::string::npos ? key : key.substr(slash + 1);
    ZARRD_ASSIGN_OR_RETURN(Fd dir, MakeParents(key, slash));
    static std::atomic<uint64_t> counter{0};
    std::string temp = base + std::string(kTempMarker) + std::to_string(::getpid()) + "-" +
                       ProcessToken() + "-" + std::to_string(counter.fetch_add(1));
    int fd = ::openat(dir.get(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoStatus(errno, Where(key));
    Fd file(fd);
    Status status = WriteAll(fd, value, key);
    if (status.ok() && options_.fsync && ::fsync(fd) != 0) status = ErrnoStatus(errno, Where(key));
    if (status.ok()) {
      auto rename = [&] {
        return options_.fsync  // the data is on disk already: a plain rename
                   ? ::renameat(dir.get(), temp.c_str(), dir.get(), base.c_str())
                   : ReplaceFile(dir.get(), temp.c_str(), base.c_str());
      };
      int renamed = rename();
      // An empty directory left where the key goes (the chunk keys of a deleted array of higher
      // rank, "c/2/0" before "c/2"): removed, and the value goes there.
      if (renamed != 0 && errno == EISDIR &&
          ::unlinkat(dir.get(), base.c_str(), AT_REMOVEDIR) == 0) {
        renamed = rename();
      }
      if (renamed != 0) status = ErrnoStatus(errno, Where(key));
    }
    if (!status.ok()) {
      ::unlinkat(dir.get(), temp.c_str(), 0);
      return status;
    }
    if (options_.fsync) {
      Fd sync(::openat(dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));  // O_PATH cannot fsync
      if (sync.get() < 0 || ::fsync(sync.get()) != 0) return ErrnoStatus(errno, Where(key));
    }
    return OkStatus();
  }

  Status Delete(const std::string& key) override {
    ZARRD_RETURN_IF_ERROR(ValidateKey(key));
    size_t slash = key.rfind('/');
    int dirfd = slash == std::string::npos
                    ? ::fcntl(root_fd_.get(), F_DUPFD_CLOEXEC, 0)
                    : OpenBeneath(key.substr(0, slash), O_DIRECTORY | O_PATH);
    if (dirfd < 0) {
      if (errno == ENOENT || errno == ENOTDIR) return OkStatus();
      return Escape(errno, key);
    }
    Fd dir(dirfd);
    std::string base = slash == std::string::npos ? key : key.substr(slash + 1);
    if (::unlinkat(dir.get(), base.c_str(), 0) == 0 || errno == ENOENT) return OkStatus();
    // A directory is no value: an empty one (the keys "c/2/0"... of a deleted array of higher
    // rank) is removed, one that holds keys stays.
    if (errno == EISDIR || errno == EPERM) {
      struct stat st;
      if (::fstatat(dir.get(), base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISDIR(st.st_mode)) {
        if (::unlinkat(dir.get(), base.c_str(), AT_REMOVEDIR) == 0 || errno == ENOTEMPTY ||
            errno == EEXIST || errno == ENOENT) {
          return OkStatus();
        }
      }
    }
    return ErrnoStatus(errno, Where(key));
  }

  Result<std::vector<std::string>> List(const std::string& prefix) override {
    size_t slash = prefix.rfind('/');
    std::string dir = slash == std::string::npos ? "" : prefix.substr(0, slash);
    if (!dir.empty()) ZARRD_RETURN_IF_ERROR(ValidateKey(dir));
    std::vector<std::string> keys;
    int fd = dir.empty() ? ::openat(root_fd_.get(), ".", O_DIRECTORY | O_RDONLY | O_CLOEXEC)
                         : OpenBeneath(dir, O_DIRECTORY | O_RDONLY);
    if (fd < 0) {
      if (errno == ENOENT || errno == ENOTDIR) return keys;
      return Escape(errno, dir);
    }
    ZARRD_RETURN_IF_ERROR(Walk(fd, dir.empty() ? "" : dir + "/", prefix, &keys, nullptr));
    std::sort(keys.begin(), keys.end());
    return keys;
  }

  Result<size_t> RemoveStaleTemporaries() override {
    std::vector<std::string> keys, temps;
    int fd = ::openat(root_fd_.get(), ".", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus(errno, root_);
    ZARRD_RETURN_IF_ERROR(Walk(fd, "", "", &keys, &temps));
    size_t removed = 0;
    for (const std::string& temp : temps) {
      const std::optional<TempName> t = ParseTempName(temp);  // Walk found it, so it parses
      if (t->pid == ::getpid()) {
        if (t->token == ProcessToken()) continue;  // a write of ours in progress
      } else if (::kill(t->pid, 0) == 0 || errno != ESRCH) {
        continue;  // its writer may still be running
      }
      ZARRD_RETURN_IF_ERROR(Delete(temp));
      ++removed;
    }
    return removed;
  }

  std::string Describe() const override { return "local store " + root_; }

 private:
  std::string Where(const std::string& key) const {
    return "\"" + (key.size() > kMaxKeyShown ? key.substr(0, kMaxKeyShown) + "..." : key) +
           "\" in " + root_;
  }

  struct OpenedValue {
    Fd file;
    uint64_t size;
  };
  // The value's file, open for reading; nullopt when the key is absent or a directory. O_NONBLOCK:
  // opening a FIFO someone put in the store must not wait for a writer; anything but a regular
  // file (FIFO, socket, device) is DATA_LOSS.
  Result<std::optional<OpenedValue>> OpenValue(const std::string& key) const {
    ZARRD_RETURN_IF_ERROR(ValidateKey(key));
    Fd file(OpenBeneath(key, O_RDONLY | O_NONBLOCK | O_NOCTTY));
    if (file.get() < 0) {
      Result<bool> missing = Missing(errno, key);  // false, or an error
      if (!missing.ok()) return missing.status();
      return std::optional<OpenedValue>();
    }
    struct stat st;
    if (::fstat(file.get(), &st) != 0) return ErrnoStatus(errno, Where(key));
    if (S_ISDIR(st.st_mode)) return std::optional<OpenedValue>();
    if (!S_ISREG(st.st_mode)) return DataLoss(Where(key) + " is not a regular file");
    return std::optional<OpenedValue>(
        OpenedValue{std::move(file), static_cast<uint64_t>(st.st_size)});
  }

  Result<bool> Missing(int err, const std::string& key) const {
    if (err == ENOENT || err == ENOTDIR) return false;
    if (err == ENXIO) return DataLoss(Where(key) + " is not a regular file");  // a socket
    return Escape(err, key);
  }

  Status Escape(int err, const std::string& key) const {
    if (err == EXDEV || err == ELOOP) {
      return PermissionDenied("store key \"" + key + "\" leads outside " + root_);
    }
    return ErrnoStatus(err, Where(key));
  }

  int OpenBeneath(const std::string& path, int flags) const {
    struct open_how how {};
    how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    int fd =
        static_cast<int>(::syscall(SYS_openat2, root_fd_.get(), path.c_str(), &how, sizeof how));
    if (fd >= 0 || errno != ENOSYS) return fd;
    return OpenWalking(path, flags);
  }

  // For kernels without openat2: walk the components, following no symlink at all.
  int OpenWalking(const std::string& path, int flags) const {
    Fd dir(::fcntl(root_fd_.get(), F_DUPFD_CLOEXEC, 0));
    size_t start = 0;
    while (true) {
      size_t slash = path.find('/', start);
      std::string part =
          path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
      if (slash == std::string::npos) {
        return ::openat(dir.get(), part.c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
      }
      int next = ::openat(dir.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0) return -1;
      dir = Fd(next);
      start = slash + 1;
    }
  }

  Result<Fd> MakeParents(const std::string& key, size_t slash) const {
    if (slash == std::string::npos) return Fd(::fcntl(root_fd_.get(), F_DUPFD_CLOEXEC, 0));
    std::string parents = key.substr(0, slash);
    int fd = OpenBeneath(parents, O_DIRECTORY | O_PATH);
    if (fd >= 0) return Fd(fd);
    if (errno != ENOENT) return Escape(errno, key);
    size_t pos = 0;
    while (pos != std::string::npos) {
      pos = parents.find('/', pos + 1);
      std::string partial = parents.substr(0, pos);
      int d = OpenBeneath(partial, O_DIRECTORY | O_PATH);
      if (d >= 0) {
        ::close(d);
        continue;
      }
      if (errno != ENOENT) return Escape(errno, key);
      size_t up = partial.rfind('/');
      Fd parent(up == std::string::npos ? ::fcntl(root_fd_.get(), F_DUPFD_CLOEXEC, 0)
                                        : OpenBeneath(partial.substr(0, up), O_DIRECTORY | O_PATH));
      if (parent.get() < 0) return Escape(errno, key);
      std::string name = up == std::string::npos ? partial : partial.substr(up + 1);
      if (::mkdirat(parent.get(), name.c_str(), 0755) != 0 && errno != EEXIST) {
        return ErrnoStatus(errno, Where(key));
      }
    }
    fd = OpenBeneath(parents, O_DIRECTORY | O_PATH);
    if (fd < 0) return Escape(errno, key);
    return Fd(fd);
  }

  Status ReadAt(int fd, uint64_t offset, uint8_t* data, size_t size, const std::string& key) {
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::pread(fd, data + done, size - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoStatus(errno, Where(key));
      if (n == 0) return DataLoss(Where(key) + ": shorter than expected (changed while read)");
      done += static_cast<size_t>(n);
    }
    return OkStatus();
  }

  Status WriteAll(int fd, ByteView value, const std::string& key) {
    size_t done = 0;
    while (done < value.size()) {
      ssize_t n = ::write(fd, value.data() + done, value.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoStatus(errno, Where(key));
      done += static_cast<size_t>(n);
    }
    return OkStatus();
  }

  // Collects regular files below `fd` (whose key prefix is `base`) that start with `prefix`.
  // Temporaries of unfinished writes go to `temps` when it is given. Iterative: a tree thousands
  // of directories deep costs heap, not stack. A directory stays open while subdirectories of it
  // wait, so descriptors are bounded by the depth of the walk, not by the width of the tree.
  Status Walk(int fd, const std::string& base, const std::string& prefix,
              std::vector<std::string>* keys, std::vector<std::string>* temps) {
    struct Pending {
      std::shared_ptr<Fd> parent;  // null: `name` is unused and `opened` is the directory
      std::string name, base;
      int opened = -1;
    };
    std::vector<Pending> todo;
    todo.push_back({nullptr, "", base, fd});
    while (!todo.empty()) {
      Pending next = std::move(todo.back());
      todo.pop_back();
      const int dir_fd = next.parent ? ::openat(next.parent->get(), next.name.c_str(),
                                                O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
                                     : next.opened;
      next.parent.reset();
      if (dir_fd < 0) continue;  // gone (or replaced by a symlink) since it was listed
      DIR* d = ::fdopendir(dir_fd);
      if (!d) {
        ::close(dir_fd);
        return ErrnoStatus(errno, Where(next.base));
      }
      std::unique_ptr<DIR, int (*)(DIR*)> guard(d, ::closedir);
      std::shared_ptr<Fd> self;
      while (dirent* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        std::string key = next.base + name;
        const size_t n = std::min(key.size(), prefix.size());
        if (key.compare(0, n, prefix, 0, n) != 0) continue;
        unsigned char type = e->d_type;
        if (type == DT_UNKNOWN) {
          struct stat st;
          if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
          type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
        }
        if (type == DT_DIR) {
          if (!self) self = std::make_shared<Fd>(::fcntl(::dirfd(d), F_DUPFD_CLOEXEC, 0));
          todo.push_back({self, name, key + "/"});
        } else if (type == DT_REG && key.size() >= prefix.size()) {
          if (!ParseTempName(name)) {
            keys->push_back(std::move(key));
          } else if (temps) {
            temps->push_back(std::move(key));
          }
        }
      }
    }
    return OkStatus();
  }

  std::string root_;
  Fd root_fd_;
  LocalStoreOptions options_;
};

}  // namespace

Result<std::shared_ptr<Store>> OpenLocalStore(const std::string& root, LocalStoreOptions options) {
  if (root.empty()) return InvalidArgument("local store: root path is empty");
  if (::mkdir(root.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, "local store root " + root);
  }
  int fd = ::open(root.c_str(), O_DIRECTORY | O_PATH | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "local store root " + root);
  return std::shared_ptr<Store>(new LocalStore(root, Fd(fd), options));
}

}  // namespace zarrd

#include "roofline/report/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>
#include <ostream>
#include <random>
#include <streambuf>
#include <string>

#include "roofline/core/error.hpp"
#include "roofline/core/input_file.hpp"

namespace roofline {

namespace {

// An output stream buffer over a file descriptor: std::ofstream cannot create a file exclusively
// (O_EXCL) nor fsync it before the rename.
class DescriptorBuffer : public std::streambuf {
 public:
  explicit DescriptorBuffer(int fd) : fd_(fd) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  DescriptorBuffer(const DescriptorBuffer&) = delete;
  DescriptorBuffer& operator=(const DescriptorBuffer&) = delete;
  ~DescriptorBuffer() override = default;

  // errno of the first failed write, 0 when every write succeeded.
  [[nodiscard]] int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const char* next = pbase();
    while (next < pptr() && error_ == 0) {
      const ssize_t written = ::write(fd_, next, static_cast<std::size_t>(pptr() - next));
      if (written < 0) {
        if (errno != EINTR) error_ = errno;
      } else {
        next += written;
      }
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return error_ == 0;
  }

  int fd_;
  int error_ = 0;
  std::array<char, 1 << 16> buffer_{};
};

std::string reason(int error) {
  return std::strerror(error);
}

// The temporary files being written, for the signal handler to remove: fixed storage, so that the
// handler touches nothing but these bytes and unlink(2), both async-signal-safe. A slot is in use
// while its flag is set; the path is written before the flag, and the flag cleared before the
// slot is reused.
struct TemporarySlot {
  std::atomic<bool> in_use{false};
  std::array<char, 4096> path{};
};
std::array<TemporarySlot, 8> temporary_slots;
static_assert(std::atomic<bool>::is_always_lock_free);

// The signals that end a process whose user gave up on it (Ctrl-C, kill, a closed terminal, a
// closed pipe); each removes the temporary files, then takes its default action, so that the
// process ends exactly as it would have. A signal the parent set to be ignored stays ignored.
constexpr std::array<int, 4> cleanup_signals{SIGINT, SIGTERM, SIGHUP, SIGPIPE};

extern "C" void remove_temporaries_and_reraise(int signal_number) {
  for (TemporarySlot& slot : temporary_slots) {
    if (slot.in_use.load()) ::unlink(slot.path.data());
  }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

void install_cleanup_handlers() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    for (const int signal_number : cleanup_signals) {
      struct sigaction previous {};
      if (::sigaction(signal_number, nullptr, &previous) != 0 || previous.sa_handler != SIG_DFL) continue;
      struct sigaction action {};
      action.sa_handler = remove_temporaries_and_reraise;
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESTART;
      ::sigaction(signal_number, &action, nullptr);
    }
  });
}

// Registers a temporary file for the handler while it exists. The handlers are installed, and the
// name registered, before the file is created: a signal between open(2) and the registration would
// otherwise end the process by its default action and leave the file (a CI run once caught SIGINT
// in that window).
class TemporaryGuard {
 public:
  TemporaryGuard() { install_cleanup_handlers(); }
  TemporaryGuard(const TemporaryGuard&) = delete;
  TemporaryGuard& operator=(const TemporaryGuard&) = delete;
  // Registers `path` (in place of what was registered before); a path too long for a slot, or no
  // slot free, leaves the file unguarded.
  void watch(const std::filesystem::path& path) {
    release();
    const std::string& text = path.native();
    if (text.size() >= TemporarySlot{}.path.size()) return;
    const std::lock_guard lock(mutex());
    for (TemporarySlot& slot : temporary_slots) {
      if (!slot.in_use.load()) {
        std::memcpy(slot.path.data(), text.c_str(), text.size() + 1);
        slot.in_use.store(true);
        slot_ = &slot;
        return;
      }
    }
  }
  void release() {
    if (slot_ != nullptr) slot_->in_use.store(false);
    slot_ = nullptr;
  }
  ~TemporaryGuard() { release(); }

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  TemporarySlot* slot_ = nullptr;
};

// The file a chain of links ends at, even when it does not exist yet: the link stays and its
// target is written (std::filesystem::weakly_canonical stops at a dangling link and would replace
// the link itself).
std::filesystem::path follow_links(const std::filesystem::path& requested, std::string_view flag) {
  std::filesystem::path path = requested;
  std::error_code ec;
  // 40: the kernel's own limit on links followed in one lookup (MAXSYMLINKS).
  for (int hops = 0; std::filesystem::is_symlink(path, ec); ++hops) {
    if (hops == 40) throw InputError(fmt::format("{} {}: too many levels of links", flag, requested.string()));
    const std::filesystem::path target = std::filesystem::read_symlink(path, ec);
    if (ec) throw InputError(fmt::format("{} {}: cannot be written ({})", flag, requested.string(), ec.message()));
    path = target.is_absolute() ? target : path.parent_path() / target;
  }
  return path;
}

// An output must never replace a file this run read (calibrate --measured run.json -o run.json).
void refuse_an_input(const struct stat& status, std::string_view flag, const std::filesystem::path& requested) {
  if (const auto input =
          input_file_at(static_cast<std::uint64_t>(status.st_dev), static_cast<std::uint64_t>(status.st_ino))) {
    throw InputError(fmt::format("{} {}: is an input of this run ({}); write the report to another file", flag,
                                 requested.string(), *input));
  }
}

// Creates the temporary file beside `path` (O_EXCL: never someone else's file, nor a link), watched
// by `guard` from before it exists.
int create_temporary(const std::filesystem::path& path, std::string_view flag, std::filesystem::path& temporary,
                     TemporaryGuard& guard) {
  std::random_device random;
  int error = 0;
  for (int attempt = 0; attempt < 16; ++attempt) {
    temporary = path.parent_path() /
                fmt::format(".{}.roofline-{}-{}.tmp", path.filename().string(), ::getpid(), random() % 1000000);
    guard.watch(temporary);
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    error = errno;
    guard.release();  // the name is someone else's file (or none was made)
    if (error != EEXIST) break;
  }
  throw InputError(fmt::format("{} {}: cannot be written ({})", flag, path.string(), reason(error)));
}

// Runs `write` into `fd` through a checked buffer; the first failed write stops `write` and
// throws InputError "<what>: write failed (reason)". `fd` stays open.
void write_through(int fd, const std::function<void(std::ostream&)>& write, std::string_view what) {
  DescriptorBuffer buffer(fd);
  std::ostream out(&buffer);
  // The first failed write throws, so that a streamed sweep stops there instead of computing
  // every remaining row into a full disk.
  out.exceptions(std::ios::badbit);
  try {
    write(out);
    out.flush();
  } catch (const std::ios_base::failure&) {
    if (buffer.error() == 0) throw;
  }
  if (buffer.error() != 0 || !out) {
    throw InputError(fmt::format("{}: write failed ({})", what, reason(buffer.error() != 0 ? buffer.error() : EIO)));
  }
}

// Runs `write` into `fd`, flushes it to the disk (where `sync`) and closes it; throws InputError
// on the first failure, with `fd` closed.
void write_and_close(int fd, const std::function<void(std::ostream&)>& write, bool sync, std::string_view flag,
                     const std::filesystem::path& path) {
  const std::string what = fmt::format("{} {}", flag, path.string());
  bool is_open = true;
  try {
    write_through(fd, write, what);
    if (sync && ::fsync(fd) != 0) throw InputError(fmt::format("{}: write failed ({})", what, reason(errno)));
    is_open = false;
    if (::close(fd) != 0) throw InputError(fmt::format("{}: write failed ({})", what, reason(errno)));
  } catch (...) {
    if (is_open) ::close(fd);
    throw;
  }
}

}  // namespace

void write_file_atomically(const std::filesystem::path& requested, const std::function<void(std::ostream&)>& write,
                           std::string_view flag) {
  if (requested.empty()) throw InputError(fmt::format("{}: the file name is empty", flag));
  if (requested == "-") {
    write_to_stdout(write);
    return;
  }
  // A link is followed, so that its target is replaced and the link stays.
  const std::filesystem::path path = follow_links(requested, flag);
  struct stat status {};
  const bool exists = ::stat(path.c_str(), &status) == 0;
  if (exists && S_ISDIR(status.st_mode)) {
    throw InputError(fmt::format("{} {}: is a directory", flag, requested.string()));
  }
  if (exists) refuse_an_input(status, flag, requested);
  // A device or a pipe (/dev/null, /dev/stdout, a FIFO) is written in place: there is nothing to
  // replace, and a rename would put a plain file where the device was.
  if (exists && !S_ISREG(status.st_mode)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(fmt::format("{} {}: cannot be written ({})", flag, requested.string(), reason(errno)));
    write_and_close(fd, write, false, flag, requested);
    return;
  }
  std::filesystem::path temporary;
  TemporaryGuard guard;
  const int fd = create_temporary(path, flag, temporary, guard);
  std::error_code ec;
  try {
    // A file replaced keeps its permissions (a chmod 600 report stays private).
    if (exists && ::fchmod(fd, status.st_mode & 07777) != 0) {
      const int error = errno;
      ::close(fd);
      throw InputError(fmt::format("{} {}: cannot be written ({})", flag, requested.string(), reason(error)));
    }
    write_and_close(fd, write, true, flag, requested);
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
      throw InputError(fmt::format("{} {}: cannot be written ({})", flag, requested.string(), reason(errno)));
    }
  } catch (...) {
    std::filesystem::remove(temporary, ec);
    throw;
  }
}

void write_to_stdout(const std::function<void(std::ostream&)>& write) {
  // What went through std::cout or stdio before comes first.
  std::cout.flush();
  std::fflush(stdout);
  write_through(STDOUT_FILENO, write, "stdout");
}

void write_to_stdout(std::string_view contents) {
  write_to_stdout(
      [&](std::ostream& out) { out.write(contents.data(), static_cast<std::streamsize>(contents.size())); });
}

void guard_standard_streams() {
  // A closed descriptor 0, 1 or 2 would be the next file opened (a report's temporary file), and
  // what goes to stdout or stderr would land in it. Descriptor 1 is opened read-only, so that a
  // report written to a closed stdout fails ("stdout: write failed") rather than vanishing;
  // diagnostics written to a closed stderr are dropped.
  constexpr std::array<int, 3> modes{O_RDONLY, O_RDONLY, O_WRONLY};
  for (int fd = 0; fd < 3; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int opened = ::open("/dev/null", modes[static_cast<std::size_t>(fd)]);
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view contents, std::string_view flag) {
  write_file_atomically(
      path, [&](std::ostream& out) { out.write(contents.data(), static_cast<std::streamsize>(contents.size())); },
      flag);
}

}  // namespace roofline

#include "roofline/report/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <random>
#include <streambuf>
#include <string>

#include "roofline/core/error.hpp"

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

// Creates the temporary file beside `path` (O_EXCL: never someone else's file, nor a link).
int create_temporary(const std::filesystem::path& path, std::string_view flag, std::filesystem::path& temporary) {
  std::random_device random;
  int error = 0;
  for (int attempt = 0; attempt < 16; ++attempt) {
    temporary = path.parent_path() /
                fmt::format(".{}.roofline-{}-{}.tmp", path.filename().string(), ::getpid(), random() % 1000000);
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    error = errno;
    if (error != EEXIST) break;
  }
  throw InputError(fmt::format("{} {}: cannot be written ({})", flag, path.string(), reason(error)));
}

// Runs `write` into `fd`, flushes it to the disk (where `sync`) and closes it; throws InputError
// on the first failure, with `fd` closed.
void write_and_close(int fd, const std::function<void(std::ostream&)>& write, bool sync, std::string_view flag,
                     const std::filesystem::path& path) {
  bool is_open = true;
  try {
    DescriptorBuffer buffer(fd);
    std::ostream out(&buffer);
    write(out);
    out.flush();
    if (buffer.error() != 0 || !out) {
      throw InputError(fmt::format("{} {}: write failed ({})", flag, path.string(),
                                   reason(buffer.error() != 0 ? buffer.error() : EIO)));
    }
    if (sync && ::fsync(fd) != 0) {
      throw InputError(fmt::format("{} {}: write failed ({})", flag, path.string(), reason(errno)));
    }
    is_open = false;
    if (::close(fd) != 0) throw InputError(fmt::format("{} {}: write failed ({})", flag, path.string(), reason(errno)));
  } catch (...) {
    if (is_open) ::close(fd);
    throw;
  }
}

}  // namespace

void write_file_atomically(const std::filesystem::path& requested, const std::function<void(std::ostream&)>& write,
                           std::string_view flag) {
  if (requested.empty()) throw InputError(fmt::format("{}: the file name is empty", flag));
  std::error_code ec;
  // A link is followed, so that its target is replaced and the link stays.
  const std::filesystem::path path =
      std::filesystem::is_symlink(requested, ec) ? std::filesystem::weakly_canonical(requested, ec) : requested;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status)) {
    throw InputError(fmt::format("{} {}: is a directory", flag, requested.string()));
  }
  // A device or a pipe (/dev/null, /dev/stdout, a FIFO) is written in place: there is nothing to
  // replace, and a rename would put a plain file where the device was.
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(fmt::format("{} {}: cannot be written ({})", flag, requested.string(), reason(errno)));
    write_and_close(fd, write, false, flag, requested);
    return;
  }
  std::filesystem::path temporary;
  const int fd = create_temporary(path, flag, temporary);
  try {
    write_and_close(fd, write, true, flag, requested);
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
      throw InputError(fmt::format("{} {}: cannot be written ({})", flag, requested.string(), reason(errno)));
    }
  } catch (...) {
    std::filesystem::remove(temporary, ec);
    throw;
  }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view contents, std::string_view flag) {
  write_file_atomically(
      path, [&](std::ostream& out) { out.write(contents.data(), static_cast<std::streamsize>(contents.size())); },
      flag);
}

}  // namespace roofline

#include "roofline/core/input_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/core/json_schema.hpp"

namespace roofline {

namespace {

struct InputIdentity {
  std::uint64_t device;
  std::uint64_t inode;
  std::string name;
};

std::mutex& inputs_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Every file this process has read, so that an output file can refuse to replace one.
std::vector<InputIdentity>& inputs() {
  static std::vector<InputIdentity> read;
  return read;
}

void remember_input(const struct stat& status, const std::string& name) {
  const std::lock_guard lock(inputs_mutex());
  for (const InputIdentity& input : inputs()) {
    if (input.device == status.st_dev && input.inode == status.st_ino) return;
  }
  inputs().push_back({static_cast<std::uint64_t>(status.st_dev), static_cast<std::uint64_t>(status.st_ino), name});
}

std::string_view file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

std::string size_text(std::uintmax_t bytes) {
  if (bytes >= (std::uintmax_t{1} << 30)) return fmt::format("{} GiB", bytes >> 30);
  return fmt::format("{} MiB", bytes >> 20);
}

}  // namespace

std::string read_input_file(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  const std::string name = path.string();
  // O_NONBLOCK: opening a FIFO must not wait for a writer. Only regular files are read: a FIFO or
  // a device where a file is expected would block forever or never end.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) throw InputError(fmt::format("{}: no such file", name));
    throw InputError(fmt::format("{}: cannot be read ({})", name, std::strerror(error)));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat status {};
  if (::fstat(fd, &status) != 0) throw InputError(fmt::format("{}: cannot be read ({})", name, std::strerror(errno)));
  if (S_ISDIR(status.st_mode)) throw InputError(fmt::format("{}: is a directory, not a file", name));
  if (!S_ISREG(status.st_mode)) {
    throw InputError(fmt::format("{}: is {}, not a regular file", name, file_kind(status.st_mode)));
  }
  const auto size = static_cast<std::uintmax_t>(status.st_size);
  if (size > max_bytes) {
    throw InputError(
        fmt::format("{}: {} bytes, more than the {} an input file may have", name, size, size_text(max_bytes)));
  }
  remember_input(status, name);
  std::string text;
  text.reserve(static_cast<std::size_t>(size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw InputError(fmt::format("{}: cannot be read ({})", name, std::strerror(errno)));
    }
    if (got == 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
    // The file may grow while it is read.
    if (text.size() > max_bytes) {
      throw InputError(fmt::format("{}: more than the {} an input file may have", name, size_text(max_bytes)));
    }
  }
  return text;
}

std::optional<std::string> input_file_at(std::uint64_t device, std::uint64_t inode) {
  const std::lock_guard lock(inputs_mutex());
  for (const InputIdentity& input : inputs()) {
    if (input.device == device && input.inode == inode) return input.name;
  }
  return std::nullopt;
}

void forget_inputs() {
  const std::lock_guard lock(inputs_mutex());
  inputs().clear();
}

void check_json_depth(std::string_view text, const std::string& origin) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_json_depth) {
        throw InputError(fmt::format("{}: JSON nested deeper than {} levels", origin, max_json_depth));
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

DuplicateKeyError::DuplicateKeyError(const std::string& origin, std::string pointer_, std::string key_)
    : InputError(fmt::format("{}: {}: key '{}' is given twice (the last one would win without a word)", origin,
                             pointer_.empty() ? "/" : pointer_, key_)),
      pointer(std::move(pointer_)),
      key(std::move(key_)) {}

nlohmann::json parse_json_unique(std::string_view text, const std::string& origin) {
  // Where the parser is: one frame per open object or array, with the keys an object has named and
  // the member or index being parsed. The pointer of the innermost object is the path through
  // the frames around it.
  struct Frame {
    bool object = false;
    std::set<std::string, std::less<>> keys;
    std::string key;
    std::size_t index = 0;
  };
  std::vector<Frame> frames;
  const auto pointer = [&] {
    std::string out;
    for (const Frame& frame : frames) {
      if (&frame == &frames.back()) break;
      out += '/';
      out += frame.object ? json_pointer_token(frame.key) : std::to_string(frame.index);
    }
    return out;
  };
  const auto value_done = [&] {
    if (!frames.empty() && !frames.back().object) ++frames.back().index;
  };
  using Event = nlohmann::json::parse_event_t;
  const nlohmann::json::parser_callback_t check = [&](int, Event event, nlohmann::json& parsed) {
    switch (event) {
      case Event::object_start:
        frames.emplace_back();
        frames.back().object = true;
        break;
      case Event::array_start: frames.emplace_back(); break;
      case Event::key: {
        Frame& frame = frames.back();
        const auto& key = parsed.get_ref<const std::string&>();
        if (!frame.keys.insert(key).second) throw DuplicateKeyError(origin, pointer(), key);
        frame.key = key;
        break;
      }
      case Event::object_end:
      case Event::array_end:
        frames.pop_back();
        value_done();
        break;
      case Event::value: value_done(); break;
    }
    return true;
  };
  return nlohmann::json::parse(text, check);
}

nlohmann::json parse_json_document(std::string_view text, const std::string& origin) {
  check_json_depth(text, origin);
  try {
    return parse_json_unique(text, origin);
  } catch (const nlohmann::json::exception& e) {
    // nlohmann's messages start with "[json.exception.parse_error.101] "; the rest is for people.
    std::string what = e.what();
    if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    throw InputError(fmt::format("{}: malformed JSON: {}", origin, what));
  }
}

}  // namespace roofline

#include "roofline/core/input_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "roofline/core/error.hpp"

namespace roofline {

namespace {

std::string size_text(std::uintmax_t bytes) {
  if (bytes >= (std::uintmax_t{1} << 30)) return fmt::format("{} GiB", bytes >> 30);
  return fmt::format("{} MiB", bytes >> 20);
}

}  // namespace

std::string read_input_file(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  const std::string name = path.string();
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) throw InputError(fmt::format("{}: no such file", name));
  if (ec) throw InputError(fmt::format("{}: cannot be read ({})", name, ec.message()));
  if (std::filesystem::is_directory(status)) throw InputError(fmt::format("{}: is a directory, not a file", name));
  // Regular files are checked before reading; a pipe or a character device is read up to the cap.
  if (std::filesystem::is_regular_file(status)) {
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > max_bytes) {
      throw InputError(
          fmt::format("{}: {} bytes, more than the {} an input file may have", name, size, size_text(max_bytes)));
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot be read ({})", name, std::strerror(errno)));
  std::string text;
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      throw InputError(fmt::format("{}: more than the {} an input file may have", name, size_text(max_bytes)));
    }
  }
  if (in.bad()) throw InputError(fmt::format("{}: cannot be read (read error)", name));
  return text;
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

nlohmann::json parse_json_document(std::string_view text, const std::string& origin) {
  check_json_depth(text, origin);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // nlohmann's messages start with "[json.exception.parse_error.101] "; the rest is for people.
    std::string what = e.what();
    if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    throw InputError(fmt::format("{}: malformed JSON: {}", origin, what));
  }
}

}  // namespace roofline

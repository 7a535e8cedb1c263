#include "roofline/output_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "roofline/error.hpp"

namespace roofline {

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(fmt::format("-o {}: is a directory", path.string()));
  }
  const std::filesystem::path temporary = path.string() + fmt::format(".tmp-{}", ::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(fmt::format("-o {}: cannot be written ({})", path.string(), std::strerror(errno)));
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) {
      const std::string reason = std::strerror(errno);
      out.close();
      std::filesystem::remove(temporary, ec);
      throw InputError(fmt::format("-o {}: write failed ({})", path.string(), reason));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::filesystem::remove(temporary, ec);
    throw InputError(fmt::format("-o {}: cannot be written ({})", path.string(), reason));
  }
}

}  // namespace roofline

#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

// Files as the tests make and read them: scratch folders, file contents, folder listings. Reading
// goes around read_input_file, which would make the file an input of the test process (one that
// write_file_atomically then refuses to replace).

// An empty folder of the system's temporary directory, private to this test process.
inline std::filesystem::path scratch(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("roofline-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// An executable file (a stand-in program: a fake ncu, a program to profile).
inline void write_script(const std::filesystem::path& path, const std::string& text) {
  write_file(path, text);
  ::chmod(path.c_str(), 0755);
}

// The names in `dir`, hidden ones (a temporary file of the atomic writer) included, sorted.
inline std::vector<std::string> entries(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

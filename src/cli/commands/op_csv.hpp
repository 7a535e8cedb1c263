#pragma once

// Internal to the op subcommands: CSV rows streamed as a sweep produces them, without holding
// them.

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "op_cell.hpp"

namespace roofline::cli::op_detail {

// Writes CSV rows through a buffer that is flushed in large chunks. Cells come out exactly as
// the report's CSV printer writes them (write_csv_cell); numbers take a faster path with the same
// output (format_csv_number), and a column whose value repeats one of its two most recent values
// reuses its text (a GPU's peak and bandwidth, a data type, a slowly swept size).
class CsvStream {
 public:
  explicit CsvStream(std::ostream& out) : out_(out), storage_(new char[capacity]), end_(storage_.get()) {}
  CsvStream(const CsvStream&) = delete;
  CsvStream& operator=(const CsvStream&) = delete;
  ~CsvStream() = default;

  template <class Row>
  void header(const std::vector<const OpColumn<Row>*>& columns) {
    std::string text;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (i > 0) text += ',';
      write_csv_cell(text, Cell{std::string(columns[i]->column.key)});
    }
    text += '\n';
    put(text.data(), text.size());
    memo_.assign(columns.size(), Memo{});
  }
  template <class Row>
  void row(const std::vector<const OpColumn<Row>*>& columns, const Row& row) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (room() < cell_room) flush();
      if (i > 0) *end_++ = ',';
      const OpCell cell = columns[i]->value(row);
      Memo& memo = memo_[i];
      if (!memo.off) {
        if (const Seen* seen = memo.find(cell)) {
          std::memcpy(end_, seen->text.data(), seen->size);
          end_ += seen->size;
          ++memo.hits;
          continue;
        }
      }
      append(memo, cell);
    }
    if (room() < cell_room) flush();
    *end_++ = '\n';
    ++rows_;
  }
  // Writes what is buffered; call once at the end (a destructor must not throw).
  void flush();
  [[nodiscard]] std::uint64_t rows() const { return rows_; }

 private:
  // A column's two most recent distinct cells and their texts (kept only when short): sweeps
  // repeat a GPU's figures on every row, and attention's standard and flash rows alternate. A
  // column whose values repeat less than once in three rows stops being remembered: comparing and
  // copying would only cost time.
  struct Seen {
    OpCell cell;
    std::array<char, 48> text{};
    std::size_t size = 0;
    bool valid = false;
  };
  struct Memo {
    std::array<Seen, 2> seen{};
    std::size_t next = 0;  // the slot the next new text replaces
    bool off = false;
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
    [[nodiscard]] const Seen* find(const OpCell& cell) const {
      for (const Seen& s : seen) {
        if (s.valid && same(s.cell, cell)) return &s;
      }
      return nullptr;
    }
    // Equal cells write equal texts: numbers compare by their bits (0.0 and -0.0 differ in text).
    [[nodiscard]] static bool same(const OpCell& a, const OpCell& b) {
      const double* x = std::get_if<double>(&a);
      const double* y = std::get_if<double>(&b);
      if (x != nullptr && y != nullptr) return std::bit_cast<std::uint64_t>(*x) == std::bit_cast<std::uint64_t>(*y);
      return a == b;
    }
  };
  void append(Memo& memo, const OpCell& cell);
  void put(const char* data, std::size_t size);  // any length
  [[nodiscard]] std::size_t room() const { return capacity - static_cast<std::size_t>(end_ - storage_.get()); }

  static constexpr std::size_t capacity = 1 << 17;
  static constexpr std::size_t cell_room = 64;  // a number, a separator or a remembered text fits
  std::ostream& out_;
  std::unique_ptr<char[]> storage_;
  char* end_;
  std::vector<Memo> memo_;
  std::uint64_t rows_ = 0;
  std::uint64_t flushes_ = 0;
};

// Writes a number as write_csv_cell does (fmt's shortest round-trip "{}") to `out` (room for 32
// characters) and returns the end, faster: whole numbers below 1e15 (byte and FLOP counts) as
// integers, others through a compiled format.
char* format_csv_number(char* out, double value);

}  // namespace roofline::cli::op_detail

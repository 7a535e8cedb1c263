#include "op_csv.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace roofline::cli::op_detail {

char* format_csv_number(char* out, double value) {
  // fmt writes a whole number below 1e16 in fixed notation with no fraction, like an integer.
  if (value > 0 && value < 1e15 && value == std::floor(value)) {
    return std::to_chars(out, out + 32, static_cast<std::int64_t>(value)).ptr;
  }
  return fmt::format_to(out, FMT_COMPILE("{}"), value);
}

// Writes a cell row() found no remembered text for, and remembers it.
void CsvStream::append(Memo& memo, const OpCell& cell) {
  // The cell was not among those remembered (row() looked).
  ++memo.misses;
  memo.off = memo.off || (memo.misses >= 4 && memo.misses > 2 * memo.hits);
  char* const start = end_;
  const std::uint64_t flushes = flushes_;
  if (const double* number = std::get_if<double>(&cell)) {
    end_ = format_csv_number(end_, *number);
  } else if (const std::int64_t* integer = std::get_if<std::int64_t>(&cell)) {
    end_ = std::to_chars(end_, end_ + 32, *integer).ptr;
  } else if (std::holds_alternative<std::monostate>(cell)) {
    // empty, as write_csv_cell leaves it
  } else if (const bool* flag = std::get_if<bool>(&cell)) {
    const std::string_view text = *flag ? "true" : "false";
    end_ = std::copy(text.begin(), text.end(), end_);
  } else if (const std::string_view* text = std::get_if<std::string_view>(&cell);
             text != nullptr && text->find_first_of(",\"\n\r") == std::string_view::npos) {
    put(text->data(), text->size());  // what write_csv_cell does with text needing no quotes
  } else {
    std::string quoted;
    write_csv_cell(quoted, to_cell(cell));
    put(quoted.data(), quoted.size());
  }
  // A long text may have flushed the buffer; only a short one written in place is remembered.
  const auto size = static_cast<std::size_t>(end_ - start);
  Seen& slot = memo.seen[memo.next];
  if (!memo.off && flushes == flushes_ && size <= slot.text.size()) {
    std::memcpy(slot.text.data(), start, size);
    slot.size = size;
    slot.cell = cell;
    slot.valid = true;
    memo.next ^= 1;
  }
}

void CsvStream::put(const char* data, std::size_t size) {
  if (size > room()) {
    flush();
    if (size > room()) {
      out_.write(data, static_cast<std::streamsize>(size));
      return;
    }
  }
  std::memcpy(end_, data, size);
  end_ += size;
}

void CsvStream::flush() {
  out_.write(storage_.get(), end_ - storage_.get());
  end_ = storage_.get();
  ++flushes_;
}

}  // namespace roofline::cli::op_detail

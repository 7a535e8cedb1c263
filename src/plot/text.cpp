// Text of the chart: widths from the font's metrics, and escaping for XML.
#include <algorithm>
#include <array>
#include <cstdint>

#include "roofline/plot/plot.hpp"

namespace roofline::plot {
namespace {

constexpr char32_t replacement = 0xFFFD;

// Advance widths of Liberation Sans Regular 1.07 (hmtx table, 2048 units per em), which match
// Arial's: U+0020..U+007E, then U+00A0..U+00FF.
constexpr double units_per_em = 2048;
constexpr std::array<std::uint16_t, 95> ascii_widths{
    569,  569,  727,  1139, 1139, 1821, 1366, 391,  682,  682,  797,  1196, 569,  682,  569,  569,  1139, 1139, 1139,
    1139, 1139, 1139, 1139, 1139, 1139, 1139, 569,  569,  1196, 1196, 1196, 1139, 2079, 1366, 1366, 1479, 1479, 1366,
    1251, 1593, 1479, 569,  1024, 1366, 1139, 1706, 1479, 1593, 1366, 1593, 1479, 1366, 1251, 1479, 1366, 1933, 1366,
    1366, 1251, 569,  569,  569,  961,  1139, 682,  1139, 1139, 1024, 1139, 1139, 569,  1139, 1139, 455,  455,  1024,
    455,  1706, 1139, 1139, 1139, 1139, 682,  1024, 569,  1139, 1024, 1479, 1024, 1024, 1024, 684,  532,  684,  1196};
constexpr std::array<std::uint16_t, 96> latin1_widths{
    569,  682,  1139, 1139, 1139, 1139, 532,  1139, 682,  1509, 758,  1139, 1196, 682,  1509, 1131,
    819,  1124, 682,  682,  682,  1180, 1100, 569,  682,  682,  748,  1139, 1708, 1708, 1708, 1251,
    1366, 1366, 1366, 1366, 1366, 1366, 2048, 1479, 1366, 1366, 1366, 1366, 569,  569,  569,  569,
    1479, 1479, 1593, 1593, 1593, 1593, 1593, 1196, 1593, 1479, 1479, 1479, 1479, 1366, 1366, 1251,
    1139, 1139, 1139, 1139, 1139, 1139, 1821, 1024, 1139, 1139, 1139, 1139, 569,  569,  569,  569,
    1139, 1139, 1139, 1139, 1139, 1139, 1139, 1124, 1251, 1139, 1139, 1139, 1139, 1024, 1139, 1024};
// A few more that labels use: dashes, ellipsis, minus, bullet, arrow, approx, less/greater-equal.
constexpr std::array<std::pair<char32_t, std::uint16_t>, 9> other_widths{{
    {0x2013, 1139},
    {0x2014, 2048},
    {0x2022, 717},
    {0x2026, 2048},
    {0x2192, 2048},
    {0x2212, 1196},
    {0x2248, 1124},
    {0x2264, 1124},
    {0x2265, 1124},
}};

// Decodes one UTF-8 sequence at `pos` and advances past it; a malformed, overlong or surrogate
// sequence yields U+FFFD and advances one byte.
char32_t next_code_point(std::string_view text, std::size_t& pos) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) {
    ++pos;
    return lead;
  }
  std::size_t length = 0;
  char32_t code = 0;
  char32_t smallest = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2;
    code = lead & 0x1Fu;
    smallest = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    code = lead & 0x0Fu;
    smallest = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    code = lead & 0x07u;
    smallest = 0x10000;
  } else {
    ++pos;
    return replacement;
  }
  if (pos + length > text.size()) {
    ++pos;
    return replacement;
  }
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(pos + i) & 0xC0) != 0x80) {
      ++pos;
      return replacement;
    }
    code = (code << 6) | (byte(pos + i) & 0x3Fu);
  }
  if (code < smallest || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
    ++pos;
    return replacement;
  }
  pos += length;
  return code;
}

bool allowed_in_xml(char32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
         (c >= 0x10000 && c <= 0x10FFFF);
}

double advance_units(char32_t c) {
  if (c >= 0x20 && c <= 0x7E) return ascii_widths[c - 0x20];
  if (c >= 0xA0 && c <= 0xFF) return latin1_widths[c - 0xA0];
  if (c == 0x9 || c == 0xA || c == 0xD) return ascii_widths[0];  // rendered as a space
  for (const auto& [code, width] : other_widths) {
    if (code == c) return width;
  }
  return units_per_em;
}

// The ink extent of a character above and below the baseline, in font units (glyph bounds of
// Liberation Sans): most of ASCII and Latin-1 stay within '$' and '|'; accented letters reach
// higher; for a character outside the tables (drawn from a fallback font) a full em is assumed.
struct Extent {
  double ascent = 0;
  double descent = 0;
};

Extent ink_units(char32_t c) {
  constexpr Extent common{1546, 434};
  if (c < 0xC0) return common;
  if (c <= 0xDE) return {1798, 434};  // accented capitals
  if (c <= 0xFF) return {1651, 434};  // accented small letters
  for (const auto& [code, width] : other_widths) {
    if (code == c) return common;
  }
  return {units_per_em, units_per_em / 4};
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

}  // namespace

double text_width(std::string_view text, double font_size) {
  double units = 0;
  for (std::size_t pos = 0; pos < text.size();) units += advance_units(next_code_point(text, pos));
  return units / units_per_em * font_size;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    const char32_t c = next_code_point(text, pos);
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: append_utf8(out, allowed_in_xml(c) ? c : replacement);
    }
  }
  return out;
}

Box text_box(std::string_view text, Vec2 at, TextAnchor anchor, double font_size, bool vertical) {
  const double width = text_width(text, font_size);
  double start = 0;  // offset of the text's start from `at` along its direction
  switch (anchor) {
    case TextAnchor::start: start = 0; break;
    case TextAnchor::middle: start = -width / 2; break;
    case TextAnchor::end: start = -width; break;
  }
  Extent units{font_ascent * units_per_em, font_descent * units_per_em};
  for (std::size_t pos = 0; pos < text.size();) {
    const Extent ink = ink_units(next_code_point(text, pos));
    units = {std::max(units.ascent, ink.ascent), std::max(units.descent, ink.descent)};
  }
  const double ascent = units.ascent / units_per_em * font_size;
  const double descent = units.descent / units_per_em * font_size;
  if (!vertical) return {at.x + start, at.y - ascent, width, ascent + descent};
  // Rotated -90 degrees: the text runs upwards and its ascent points to the left.
  return {at.x - ascent, at.y - start - width, ascent + descent, width};
}

}  // namespace roofline::plot

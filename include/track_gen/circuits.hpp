#pragma once
/// @file
/// Real circuits: read and write closed centrelines with per-point road half-widths, turn them
/// into `user_tracks`, and export any generated track to the same files. Host only, C++17,
/// header-only; not included by track_gen.hpp (it does file I/O): include it yourself.
///
/// Formats (docs/circuits.md has examples):
/// - **TUM CSV** (github.com/TUMFTM/racetrack-database): a header comment
///   `# x_m,y_m,w_tr_right_m,w_tr_left_m`, then one `x, y, w_right, w_left` row per point [m].
///   Columns are found by their names in the header (any order; extra columns ignored); without
///   a named header the four columns are taken in that standard order. No z (z = 0).
/// - **plain CSV**: `x, y[, z]` rows [m] (z = 0 when absent; every row has the same count), an
///   optional header line (a first non-comment line that does not start with a number, e.g.
///   `x,y,z`), no widths.
/// - **JSON**: `{"points": [[x, y, z], ...], "half_widths": [[left, right], ...], "closed": true}`.
///   `points` is required ([x, y] rows allowed: z = 0); `half_widths` is optional (one
///   [left, right] pair per point); `closed` is optional and must be true (open centrelines are
///   not supported); other keys are ignored. Needs nlohmann/json (Debian: nlohmann-json3-dev):
///   the JSON reader exists when <nlohmann/json.hpp> is on the include path
///   (TRACK_GEN_CIRCUITS_JSON is then 1; define it to 0 to leave it out). Writing JSON needs
///   no library.
///
/// In every format `#` starts a comment line (CSV), fields are comma separated with optional
/// spaces or tabs around them, blank lines are skipped, lines end with LF, CRLF or a lone CR
/// (old Mac OS), and a leading UTF-8 byte order mark is accepted. Files are UTF-8: a byte that
/// is not (a latin-1 comment) is refused, naming its line and offset. JSON nested deeper than
/// detail::circuits::max_json_depth (64) levels is refused before parsing. A number must round
/// to a finite float32 (magnitude below 2^128 - 2^103; the largest float32 is 3.40282347e+38);
/// one too small for float32's subnormals reads as +-0. The points are a closed loop: the first need not be
/// repeated at the end (user_tracks drops a repeat). Writers print every float with
/// max_digits10 (9) significant digits, and readers parse straight to float (std::from_chars),
/// so a circuit written and read back is equal bit for bit. Half-widths: x = left, y = right of
/// the direction of travel, as the track batch's `half_widths` field.
///
/// **Widths and the generated track.** The track pipeline stores one half-width per batch
/// (track_params::half_width, written to every sample's `half_widths`), and user_tracks carry
/// points only, so per-point widths cannot reach a generated track today. They are loaded and
/// exported faithfully; for generation, `narrowest_half_width` gives the smallest half-width of
/// the circuits (over points and both sides) to put in track_params::half_width: a conservative
/// road that lies inside the real one everywhere. Nothing sets it for you.
///
/// Errors: std::invalid_argument for bad content, naming the file (the `name` argument for
/// streams), the line (CSV; for JSON the line of a syntax error, else the JSON path such as
/// `points[4][1]`) and what is wrong (a missing column, a non-number, a non-finite value, a
/// negative width, fewer than 3 points); std::runtime_error when a file cannot be opened, read
/// or written.

#include <track_gen/detail/config.hpp>
#include <track_gen/snapshot.hpp>
#include <track_gen/user_tracks.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#ifndef TRACK_GEN_CIRCUITS_JSON
#if __has_include(<nlohmann/json.hpp>)
#define TRACK_GEN_CIRCUITS_JSON 1
#else
#define TRACK_GEN_CIRCUITS_JSON 0
#endif
#endif
#if TRACK_GEN_CIRCUITS_JSON
#include <nlohmann/json.hpp>
#endif

namespace track_gen {

/// A closed centreline. Host memory, metres.
struct circuit {
  std::vector<float3> points;       ///< [P], P >= 3, finite
  std::vector<float2> half_widths;  ///< [P] (x left, y right, >= 0, finite) or empty: no widths
};

/// The three file formats (see the file comment).
enum class circuit_format { tum_csv, plain_csv, json };

namespace detail::circuits {

[[noreturn]] inline void fail(const std::string& name, std::size_t line, const std::string& what) {
  throw std::invalid_argument("track_gen: " + name + (line ? ":" + std::to_string(line) : std::string()) + ": " + what);
}

/// JSON nested deeper than this is refused before parsing (brackets outside strings): a circuit
/// needs 3 levels (the object, `points`, a point), and deeper input would make nlohmann's dump()
/// (in messages) and Python's json module recurse once per level. python/track_gen/circuits.py
/// has the same limit (its test checks they agree).
inline constexpr int max_json_depth = 64;

/// The line (from 1) of byte `at`: lines end at LF, CRLF or a lone CR.
inline std::size_t line_of(const std::string& text, std::size_t at) {
  std::size_t line = 1;
  for (std::size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'))) ++line;
  }
  return line;
}

/// The next line of `text` from `at` without its end (LF, CRLF or a lone CR); false at the end.
inline bool next_line(const std::string& text, std::size_t& at, std::string& line) {
  if (at >= text.size()) return false;
  std::size_t end = at;
  while (end < text.size() && text[end] != '\n' && text[end] != '\r') ++end;  // find_first_of is slower
  line.assign(text, at, end - at);
  at = end + (end + 1 < text.size() && text[end] == '\r' && text[end + 1] == '\n' ? 2 : 1);
  return true;
}

/// The offset of the first byte that does not begin a well-formed UTF-8 sequence (Unicode 15,
/// table 3-7: no overlong forms, surrogates or code points above U+10FFFF; what Python's strict
/// "utf-8" codec accepts), or npos.
inline std::size_t invalid_utf8(const std::string& s) {
  const auto* u = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size();) {
    const unsigned b = u[i];
    std::size_t len = 1;
    unsigned lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (b < 0x80) {
      ++i;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
    } else {
      return i;
    }
    if (s.size() - i < len) return i;
    for (std::size_t k = 1; k < len; ++k) {
      if (u[i + k] < (k == 1 ? lo : 0x80u) || u[i + k] > (k == 1 ? hi : 0xBFu)) return i;
    }
    i += len;
  }
  return std::string::npos;
}

/// Refuses text that is not UTF-8 (naming the line and offset of the first bad byte) and returns
/// where the content starts: after a UTF-8 byte order mark (some editors write one), else 0.
inline std::size_t content_start(const std::string& text, const std::string& name) {
  const std::size_t bad = invalid_utf8(text);
  if (bad != std::string::npos) {
    const unsigned b = static_cast<unsigned char>(text[bad]);
    fail(name, line_of(text, bad), "byte " + std::to_string(bad) + " (0x" + "0123456789abcdef"[b >> 4] +
                                       "0123456789abcdef"[b & 15] + ") is not UTF-8: circuit files are UTF-8 text");
  }
  return text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
}

inline std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

inline std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (;;) {
    const std::size_t comma = line.find(',', at);
    out.push_back(trim(line.substr(at, comma == std::string::npos ? std::string::npos : comma - at)));
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

/// Whether a number that from_chars matched in full in [b, e) (digits, an optional point and
/// exponent, no '+') is below 1 in magnitude: found out of float's range, it rounds to zero.
inline bool below_one(const char* b, const char* e) {
  if (*b == '-') ++b;
  long lead = 0;  // the power of ten of the first nonzero digit, before the exponent
  bool point = false, nonzero = false;
  for (; b != e && *b != 'e' && *b != 'E'; ++b) {
    if (*b == '.') {
      point = true;
    } else if (!nonzero) {
      if (point) --lead;
      nonzero = *b != '0';
    } else if (!point) {
      ++lead;
    }
  }
  long exp = 0;  // saturates: beyond the digits' count only its sign matters
  bool negative = false;
  if (b != e) {  // 'e' or 'E', an optional sign, digits (from_chars matched them all)
    negative = *++b == '-';
    if (*b == '-' || *b == '+') ++b;
  }
  for (; b != e; ++b) exp = std::min(exp * 10 + (*b - '0'), 1L << 40);
  return lead + (negative ? -exp : exp) < 0;
}

/// The message for a number that rounds to +-infinity as a float32: the same words in Python.
inline std::string beyond_float32(const std::string& value) {
  return value + " is outside float32's range (it rounds to infinity; the largest float32 is 3.40282347e+38)";
}

/// Parses a whole field as a float (from_chars: locale-independent, correctly rounded); a number
/// below float's smallest subnormal reads as +-0 (as the JSON reader's conversion gives).
inline float number(const std::string& field, const std::string& name, std::size_t line, const std::string& column) {
  const char* b = field.data();
  const char* e = b + field.size();
  if (b != e && *b == '+' && !(e - b > 1 && b[1] == '-')) ++b;  // from_chars takes no '+'; "+-1" stays refused
  float v = 0.0f;
  const auto r = std::from_chars(b, e, v);
  if (b == e || r.ptr != e || (r.ec == std::errc() && !std::isfinite(v))) {
    fail(name, line, "column " + column + ": '" + field + "' is not a finite number");
  }
  if (r.ec == std::errc::result_out_of_range) {
    if (!below_one(b, e)) fail(name, line, "column " + column + ": " + beyond_float32(field));
    v = *b == '-' ? -0.0f : 0.0f;
  }
  return v;
}

inline float width(const std::string& field, const std::string& name, std::size_t line, const std::string& column) {
  const float w = number(field, name, line, column);
  if (w < 0.0f) fail(name, line, "column " + column + ": negative half-width " + field + " (must be >= 0 m)");
  return w;
}

/// A line that holds data: neither blank nor a comment.
inline bool is_data(const std::string& t) { return !t.empty() && t[0] != '#'; }

inline void check_count(const circuit& c, const std::string& name) {
  if (c.points.size() < 3) {
    fail(name, 0, std::to_string(c.points.size()) + " points; a closed circuit needs at least 3");
  }
}

/// Writes `v` with max_digits10 significant digits (exact round trip through from_chars).
inline void put(std::string& out, float v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general,
                               std::numeric_limits<float>::max_digits10);
  out.append(buf, r.ptr);
}

/// Refuses to write a circuit that could not be read back.
inline void check_writable(const circuit& c, const std::string& name) {
  check_count(c, name);
  if (!c.half_widths.empty() && c.half_widths.size() != c.points.size()) {
    fail(name, 0, std::to_string(c.half_widths.size()) + " half-widths for " + std::to_string(c.points.size()) +
                      " points (give one [left, right] pair per point, or none)");
  }
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    const float3 p = c.points[i];
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) {
      fail(name, 0, "points[" + std::to_string(i) + "] is not finite");
    }
  }
  for (std::size_t i = 0; i < c.half_widths.size(); ++i) {
    const float2 w = c.half_widths[i];
    if (!(w.x >= 0.0f) || !(w.y >= 0.0f) || !std::isfinite(w.x) || !std::isfinite(w.y)) {
      fail(name, 0, "half_widths[" + std::to_string(i) + "] is negative or not finite (must be finite, >= 0 m)");
    }
  }
}

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("track_gen: cannot open circuit file " + path + " for reading");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("track_gen: error reading circuit file " + path);
  return text;
}

/// Refuses JSON nested deeper than max_json_depth (brackets outside strings), naming the line.
inline void check_json_depth(const std::string& text, const std::string& name) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      if (ch == '\\') ++i;  // an escape: the next character does not end the string
      else if (ch == '"') in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      if (++depth > max_json_depth) {
        fail(name, line_of(text, i), "JSON nested deeper than " + std::to_string(max_json_depth) +
                                         " levels (a circuit needs 3: the object, \"points\", a point)");
      }
    } else if (ch == ']' || ch == '}') {
      --depth;
    }
  }
}

inline std::string extension(const std::string& path) {
  const auto slash = path.find_last_of("/\\");
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return {};
  std::string ext = path.substr(dot + 1);
  for (char& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return ext;
}

}  // namespace detail::circuits

/// Reads a TUM racetrack-database CSV from `text`; `name` (the file name) goes into the errors.
/// @throws std::invalid_argument bytes that are not UTF-8, a missing column, a non-number or one
///         beyond float32's range, a negative width, < 3 points.
inline circuit parse_tum_csv(const std::string& text, const std::string& name = "<tum csv>") {
  namespace c = detail::circuits;
  static const char* const wanted[4] = {"x_m", "y_m", "w_tr_right_m", "w_tr_left_m"};
  int col[4] = {0, 1, 2, 3};  // standard order unless a header names them
  std::size_t needed = 4;
  circuit out;
  std::size_t at = c::content_start(text, name);
  std::string raw;
  bool seen_data = false;
  for (std::size_t line = 1; c::next_line(text, at, raw); ++line) {
    const std::string t = c::trim(raw);
    if (t.empty()) continue;
    if (t[0] == '#') {
      std::vector<std::string> names = c::split(c::trim(t.substr(1)));
      if (seen_data || std::find(names.begin(), names.end(), "x_m") == names.end()) continue;  // a plain comment
      needed = 0;
      for (int k = 0; k < 4; ++k) {
        const auto it = std::find(names.begin(), names.end(), wanted[k]);
        if (it == names.end()) c::fail(name, line, std::string("column ") + wanted[k] + " missing from the header '" + t + "'");
        col[k] = static_cast<int>(it - names.begin());
        needed = std::max(needed, static_cast<std::size_t>(col[k]) + 1);
      }
      continue;
    }
    seen_data = true;
    const std::vector<std::string> f = c::split(t);
    if (f.size() < needed) {
      c::fail(name, line, std::to_string(f.size()) + " columns, expected " + std::to_string(needed) +
                              " (x_m, y_m, w_tr_right_m, w_tr_left_m)");
    }
    const float x = c::number(f[col[0]], name, line, wanted[0]);
    const float y = c::number(f[col[1]], name, line, wanted[1]);
    const float right = c::width(f[col[2]], name, line, wanted[2]);
    const float left = c::width(f[col[3]], name, line, wanted[3]);
    out.points.push_back(float3{x, y, 0.0f});
    out.half_widths.push_back(float2{left, right});
  }
  c::check_count(out, name);
  return out;
}

/// Reads a plain `x, y[, z]` CSV from `text` (no widths); `name` goes into the errors.
/// @throws std::invalid_argument bytes that are not UTF-8, a row of other than 2 or 3 columns or
///         of another count than the first row, a non-number or one beyond float32's range, < 3
///         points.
inline circuit parse_plain_csv(const std::string& text, const std::string& name = "<csv>") {
  namespace c = detail::circuits;
  circuit out;
  std::size_t at = c::content_start(text, name);
  std::string raw;
  std::size_t columns = 0, first_line = 0;
  bool first = true;
  for (std::size_t line = 1; c::next_line(text, at, raw); ++line) {
    const std::string t = c::trim(raw);
    if (!c::is_data(t)) continue;
    const std::vector<std::string> f = c::split(t);
    float ignored;
    const char* f0 = f[0].data();
    if (first && !f[0].empty() && std::isalpha(static_cast<unsigned char>(f[0][0])) &&
        std::from_chars(f0, f0 + f[0].size(), ignored).ptr == f0) {
      first = false;  // the optional header line (x,y,z); a row of bad numbers fails below
      continue;
    }
    first = false;
    if (f.size() != 2 && f.size() != 3) {
      c::fail(name, line, std::to_string(f.size()) + " columns, expected x, y or x, y, z");
    }
    if (columns == 0) {
      columns = f.size();
      first_line = line;
    } else if (f.size() != columns) {
      c::fail(name, line, std::to_string(f.size()) + " columns, but line " + std::to_string(first_line) + " has " +
                              std::to_string(columns));
    }
    const float x = c::number(f[0], name, line, "x");
    const float y = c::number(f[1], name, line, "y");
    const float z = columns == 3 ? c::number(f[2], name, line, "z") : 0.0f;
    out.points.push_back(float3{x, y, z});
  }
  c::check_count(out, name);
  return out;
}

#if TRACK_GEN_CIRCUITS_JSON || defined(TRACK_GEN_DOXYGEN)
/// Reads the JSON format from `text`; `name` goes into the errors. Needs nlohmann/json.
/// @throws std::invalid_argument bytes that are not UTF-8 or nesting deeper than max_json_depth
///         (with their line), a syntax error (with its line), a missing or malformed
///         `points`, a `half_widths` of another length, a negative width, `closed` not true,
///         < 3 points (each named by its JSON path).
inline circuit parse_json(const std::string& text, const std::string& name = "<json>") {
  namespace c = detail::circuits;
  using json = nlohmann::json;
  const std::size_t start = c::content_start(text, name);
  c::check_json_depth(text, name);
  json doc;
  try {
    doc = json::parse(text.begin() + static_cast<std::ptrdiff_t>(start), text.end());
  } catch (const json::parse_error& err) {
    c::fail(name, c::line_of(text, start + err.byte), std::string("not valid JSON: ") + err.what());
  } catch (const json::exception& err) {  // e.g. out_of_range 406: a number beyond the double range
    c::fail(name, 0, std::string("not valid JSON: ") + err.what());
  }
  if (!doc.is_object()) c::fail(name, 0, "the top level must be an object with a \"points\" array");
  auto num = [&](const json& v, const std::string& path) {
    if (!v.is_number()) c::fail(name, 0, path + ": " + v.dump() + " is not a number");
    const double d = v.get<double>();
    const float f = static_cast<float>(d);
    if (!std::isfinite(f)) c::fail(name, 0, path + ": " + c::beyond_float32(v.dump()));
    return f;
  };
  const auto closed = doc.find("closed");
  if (closed != doc.end() && !(closed->is_boolean() && closed->get<bool>())) {
    c::fail(name, 0, "\"closed\" is " + closed->dump() + "; only closed circuits (true) are supported");
  }
  const auto pts = doc.find("points");
  if (pts == doc.end() || !pts->is_array()) c::fail(name, 0, "\"points\" missing or not an array of [x, y(, z)]");
  circuit out;
  for (std::size_t i = 0; i < pts->size(); ++i) {
    const json& p = (*pts)[i];
    const std::string path = "points[" + std::to_string(i) + "]";
    if (!p.is_array() || (p.size() != 2 && p.size() != 3)) c::fail(name, 0, path + ": expected [x, y] or [x, y, z]");
    out.points.push_back(float3{num(p[0], path + "[0]"), num(p[1], path + "[1]"),
                                p.size() == 3 ? num(p[2], path + "[2]") : 0.0f});
  }
  const auto hw = doc.find("half_widths");
  if (hw != doc.end() && !hw->is_null()) {
    if (!hw->is_array() || hw->size() != pts->size()) {
      c::fail(name, 0, "\"half_widths\" must be an array of one [left, right] pair per point (" +
                           std::to_string(pts->size()) + ")");
    }
    for (std::size_t i = 0; i < hw->size(); ++i) {
      const json& w = (*hw)[i];
      const std::string path = "half_widths[" + std::to_string(i) + "]";
      if (!w.is_array() || w.size() != 2) c::fail(name, 0, path + ": expected [left, right]");
      const float left = num(w[0], path + "[0]"), right = num(w[1], path + "[1]");
      if (left < 0.0f || right < 0.0f) c::fail(name, 0, path + ": negative half-width (must be >= 0 m)");
      out.half_widths.push_back(float2{left, right});
    }
  }
  c::check_count(out, name);
  return out;
}
#endif

/// The format of a file: `.json` is JSON; otherwise (`.csv`, `.txt`, anything) TUM when a header
/// comment names `w_tr_right_m` or the first data row has 4 columns, else plain CSV.
inline circuit_format detect_circuit_format(const std::string& path, const std::string& text) {
  namespace c = detail::circuits;
  if (c::extension(path) == "json") return circuit_format::json;
  std::size_t at = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;  // a byte order mark is not part of the first line
  std::string raw;
  while (c::next_line(text, at, raw)) {
    const std::string t = c::trim(raw);
    if (t.empty()) continue;
    if (t[0] == '#') {
      if (t.find("w_tr_right_m") != std::string::npos) return circuit_format::tum_csv;
      continue;
    }
    return c::split(t).size() == 4 ? circuit_format::tum_csv : circuit_format::plain_csv;
  }
  return circuit_format::plain_csv;
}

/// Reads `text` in `format`; `name` goes into the errors.
/// @throws std::invalid_argument bad content (see the parse_* functions); JSON without nlohmann.
inline circuit parse_circuit(const std::string& text, circuit_format format, const std::string& name) {
  switch (format) {
    case circuit_format::tum_csv: return parse_tum_csv(text, name);
    case circuit_format::plain_csv: return parse_plain_csv(text, name);
    case circuit_format::json:
#if TRACK_GEN_CIRCUITS_JSON
      return parse_json(text, name);
#else
      throw std::invalid_argument("track_gen: " + name + ": reading JSON circuits needs nlohmann/json "
                                  "(Debian: nlohmann-json3-dev) on the include path");
#endif
  }
  throw std::invalid_argument("track_gen: " + name + ": unknown circuit_format");
}

/// Reads the circuit file at `path`, its format from detect_circuit_format.
/// @throws std::runtime_error the file cannot be opened or read.
/// @throws std::invalid_argument bad content (naming `path` and the line).
inline circuit load_circuit(const std::string& path) {
  const std::string text = detail::circuits::read_all(path);
  return parse_circuit(text, detect_circuit_format(path, text), path);
}

/// `c` as text in `format`. TUM needs half-widths and z = 0 everywhere (the format has no z);
/// plain CSV drops the widths. Numbers have max_digits10 significant digits.
/// @throws std::invalid_argument what could not be read back: < 3 points, non-finite values,
///         negative widths, half_widths of another length than points; TUM without widths or
///         with z != 0. `name` goes into the message.
inline std::string format_circuit(const circuit& c, circuit_format format, const std::string& name = "<circuit>") {
  namespace d = detail::circuits;
  d::check_writable(c, name);
  std::string out;
  const std::size_t n = c.points.size();
  switch (format) {
    case circuit_format::tum_csv:
      if (c.half_widths.empty()) d::fail(name, 0, "the TUM format needs half-widths; this circuit has none");
      out = "# x_m,y_m,w_tr_right_m,w_tr_left_m\n";
      for (std::size_t i = 0; i < n; ++i) {
        if (c.points[i].z != 0.0f) {
          d::fail(name, 0, "points[" + std::to_string(i) + "].z is not 0: the TUM format has no z (use plain CSV or JSON)");
        }
        d::put(out, c.points[i].x), out += ',', d::put(out, c.points[i].y), out += ',';
        d::put(out, c.half_widths[i].y), out += ',', d::put(out, c.half_widths[i].x), out += '\n';
      }
      return out;
    case circuit_format::plain_csv:
      out = "x,y,z\n";
      for (const float3& p : c.points) {
        d::put(out, p.x), out += ',', d::put(out, p.y), out += ',', d::put(out, p.z), out += '\n';
      }
      return out;
    case circuit_format::json:
      out = "{\n  \"closed\": true,\n  \"points\": [";
      for (std::size_t i = 0; i < n; ++i) {
        out += i ? ",\n    [" : "\n    [";
        d::put(out, c.points[i].x), out += ", ", d::put(out, c.points[i].y), out += ", ", d::put(out, c.points[i].z);
        out += ']';
      }
      out += "\n  ]";
      if (!c.half_widths.empty()) {
        out += ",\n  \"half_widths\": [";
        for (std::size_t i = 0; i < n; ++i) {
          out += i ? ",\n    [" : "\n    [";
          d::put(out, c.half_widths[i].x), out += ", ", d::put(out, c.half_widths[i].y), out += ']';
        }
        out += "\n  ]";
      }
      out += "\n}\n";
      return out;
  }
  d::fail(name, 0, "unknown circuit_format");
}

/// Writes `c` to `path` in `format` (see format_circuit), replacing the file.
/// @throws std::invalid_argument as format_circuit. @throws std::runtime_error on a write error.
inline void save_circuit(const std::string& path, const circuit& c, circuit_format format) {
  const std::string text = format_circuit(c, format, path);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("track_gen: cannot open circuit file " + path + " for writing");
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw std::runtime_error("track_gen: error writing circuit file " + path);
}

/// The centreline samples (`position`, [N]) and `half_widths` of env `env` of a snapshot, as a
/// circuit. With `add_origin` the env's `origin` is added back (in double, then rounded to
/// float), so a re-centred user track comes out in the user's frame; without, the env frame.
/// @throws std::invalid_argument `env` outside [0, s.num_envs).
inline circuit circuit_from_snapshot(const track_snapshot& s, int env, bool add_origin = true) {
  if (env < 0 || env >= s.num_envs) {
    throw std::invalid_argument("track_gen: circuit_from_snapshot: env = " + std::to_string(env) + " outside [0, " +
                                std::to_string(s.num_envs) + ")");
  }
  const float3 o = add_origin ? s.origin[static_cast<std::size_t>(env)] : float3{0.0f, 0.0f, 0.0f};
  circuit c;
  for (int k = 0; k < s.num_samples; ++k) {
    const float3 p = s.position[s.sample_index(env, k)];
    c.points.push_back(float3{static_cast<float>(static_cast<double>(p.x) + o.x),
                              static_cast<float>(static_cast<double>(p.y) + o.y),
                              static_cast<float>(static_cast<double>(p.z) + o.z)});
    c.half_widths.push_back(s.half_widths[s.sample_index(env, k)]);
  }
  return c;
}

/// User tracks from circuits: one per env, or one shared by every env (user_tracks.hpp). The
/// widths do not go along (see the file comment: narrowest_half_width). `kind::centreline` takes
/// the dense points as the centreline (TUM data, about 1 m apart); `kind::control_points` fits a
/// spline through sparse points.
inline user_tracks to_user_tracks(const std::vector<circuit>& circuits,
                                  user_tracks::kind type = user_tracks::kind::centreline, bool recentre = false) {
  user_tracks t;
  t.type = type;
  t.recentre = recentre;
  for (const circuit& c : circuits) t.tracks.push_back(c.points);
  return t;
}

/// The smallest half-width of the circuits, over every point and both sides [m]: a value for
/// track_params::half_width that keeps the generated road inside every real one.
/// @throws std::invalid_argument no circuits, or one without half-widths (named by index).
inline float narrowest_half_width(const std::vector<circuit>& circuits) {
  if (circuits.empty()) throw std::invalid_argument("track_gen: narrowest_half_width: no circuits");
  float w = std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < circuits.size(); ++i) {
    if (circuits[i].half_widths.empty()) {
      throw std::invalid_argument("track_gen: narrowest_half_width: circuits[" + std::to_string(i) + "] has no half-widths");
    }
    for (const float2& hw : circuits[i].half_widths) w = std::min(w, std::min(hw.x, hw.y));
  }
  return w;
}

}  // namespace track_gen

#pragma once
/// @file
/// Helpers shared by the benchmark programs (plain C++17, also compiled by nvcc): summaries of
/// timed samples, JSON string escaping and comma-separated option lists.

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace track_gen_bench {

/// Median, 10th and 90th percentiles, minimum and maximum of a set of timings [ms].
struct summary {
  double median = 0, p10 = 0, p90 = 0, min = 0, max = 0;
};

/// Quantile q of sorted samples, interpolated linearly between the two closest ranks.
template <class T>
double quantile(const std::vector<T>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double f = pos - static_cast<double>(lo);
  return static_cast<double>(sorted[lo]) * (1.0 - f) + static_cast<double>(sorted[hi]) * f;
}

/// The summary of `samples` (at least one).
template <class T>
summary summarise(std::vector<T> samples) {
  std::sort(samples.begin(), samples.end());
  return {quantile(samples, 0.5), quantile(samples, 0.1), quantile(samples, 0.9),
          static_cast<double>(samples.front()), static_cast<double>(samples.back())};
}

/// `s` as the body of a JSON string.
inline std::string json_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

/// A comma-separated list, each item read whole by `read` (strtol or strtod style); false on an
/// empty list or a malformed item.
template <class T, class Read>
bool parse_list(const char* text, std::vector<T>& out, Read read) {
  out.clear();
  const std::string s = text;
  for (std::size_t at = 0; at <= s.size();) {
    const std::size_t comma = std::min(s.find(',', at), s.size());
    const std::string item = s.substr(at, comma - at);
    char* end = nullptr;
    const auto v = read(item.c_str(), &end);
    if (item.empty() || *end != '\0') return false;
    out.push_back(static_cast<T>(v));
    at = comma + 1;
  }
  return !out.empty();
}

/// The value of option argv[i] (argv[i + 1]), or null after a message when it is missing or empty.
inline const char* option_value(int argc, char** argv, int i) {
  const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
  if (v == nullptr || *v == '\0') {
    std::fprintf(stderr, "unknown option or missing value: %s\n", argv[i]);
    return nullptr;
  }
  return v;
}

/// Whether option `name`'s value `v` was read whole: `ok` (a list parsed) and, for a number read
/// with strtol/strtod style `end` (null when unused), nothing left over. Prints why not.
inline bool value_read(const std::string& name, const char* v, const char* end, bool ok = true) {
  if (!ok || (end != nullptr && (end == v || *end != '\0'))) {
    std::fprintf(stderr, "bad value for %s: %s\n", name.c_str(), v);
    return false;
  }
  return true;
}

/// Whether every item of `list` lies in [lo, hi]; prints the first that does not.
template <class T>
bool all_in_range(const std::vector<T>& list, long long lo, long long hi, const char* what) {
  for (const T& x : list) {
    if (static_cast<long long>(x) < lo || static_cast<long long>(x) > hi) {
      std::fprintf(stderr, "%s: every value must be in [%lld, %lld]; got %lld\n", what, lo, hi,
                   static_cast<long long>(x));
      return false;
    }
  }
  return true;
}

/// The command line as one string (for the JSON and the printed header).
inline std::string command_line(int argc, char** argv) {
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i > 0 ? " " : "") + std::string(argv[i]);
  return command;
}

#if defined(__CUDACC__)
/// 0 when a CUDA device is present; otherwise says so on stderr (naming `program`) and returns
/// 77, the exit status ctest reads as "skipped", as the CUDA tests do.
inline int require_cuda_device(const char* program) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaSuccess && count > 0) return 0;
  std::fprintf(stderr, "%s: no CUDA device (%s); nothing to measure\n", program,
               err != cudaSuccess ? cudaGetErrorName(err) : "0 devices");
  return 77;
}
#endif

}  // namespace track_gen_bench

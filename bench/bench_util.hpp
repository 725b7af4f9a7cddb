#pragma once
/// @file
/// What the benchmark programs share, in one place (plain C++17, also compiled by nvcc):
/// - the command line, parsed by CLI11 (Debian: libcli11-dev): the options every program has
///   (--spacing, --seed, --json), checks that show their range in --help, and the exit statuses
///   (0 after --help, 2 after a bad command line);
/// - the JSON document, built with nlohmann::ordered_json (Debian: nlohmann-json3-dev): its top
///   (peer, version, device, command), numbers with the digits the programs have always written,
///   the summaries and track statistics as the rows carry them, and writing the file;
/// - summaries of timed samples (median, p10, p90, min, max) and statistics of a batch of tracks;
/// - for the CUDA programs: the CUDA error check, a device buffer, the one box per env of the box
///   rows (car_boxes), and exit status 77 without a CUDA device.

#include <track_gen/track_gen.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace track_gen_bench {

/// A JSON value whose object members keep the order they were added in.
using json = nlohmann::ordered_json;

// ---- summaries -------------------------------------------------------------------------------

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

/// Lengths [m], gate counts and status words of a batch of tracks, summed up.
struct track_stats {
  double mean_length = 0, min_length = 0, max_length = 0, mean_gates = 0;
  double valid = 0, fallback = 0, attempts = 0;  ///< fractions of the tracks; mean attempts per track
};

/// The statistics of `n` (at least one) tracks given by their [n] arrays.
inline track_stats stats_of(std::size_t n, const float* length, const int* gates, const std::uint32_t* status) {
  track_stats s;
  s.min_length = 1e30;
  s.max_length = -1e30;
  for (std::size_t i = 0; i < n; ++i) {
    const double l = length[i];
    s.mean_length += l;
    s.min_length = std::min(s.min_length, l);
    s.max_length = std::max(s.max_length, l);
    s.mean_gates += gates[i];
    s.valid += (status[i] & track_gen::status::valid) != 0u;
    s.fallback += (status[i] & track_gen::status::fallback) != 0u;
    s.attempts += track_gen::status::attempts(status[i]);
  }
  const double count = static_cast<double>(n);
  s.mean_length /= count;
  s.mean_gates /= count;
  s.valid /= count;
  s.fallback /= count;
  s.attempts /= count;
  return s;
}

// ---- command line ----------------------------------------------------------------------------

/// The options every benchmark program has.
struct common_options {
  float spacing = 1.0f;     ///< gate spacing [m]
  std::uint64_t seed = 1;   ///< seed of the tracks' random streams
  std::string json;         ///< where to write the JSON document (empty: nowhere)
};

/// A check that each value of an option reads whole as a T for which `ok` holds; `what` says
/// which values are allowed, in --help and in the error message.
template <class T, class Ok>
CLI::Validator number_check(Ok ok, const std::string& what) {
  return CLI::Validator(
      [ok, what](std::string& text) -> std::string {
        T v{};
        if (CLI::detail::lexical_cast(text, v) && ok(v)) return {};
        return "value " + text + " is not " + what;
      },
      what);
}

/// A bound as --help shows it.
template <class T>
std::string bound_text(T x) {
  if constexpr (std::is_integral_v<T>) return std::to_string(x);
  char text[32];
  std::snprintf(text, sizeof text, "%g", static_cast<double>(x));
  return text;
}

/// Each value in [lo, hi] (NaN is not).
template <class T>
CLI::Validator in_range(T lo, T hi) {
  return number_check<T>([lo, hi](T v) { return v >= lo && v <= hi; },
                         "in [" + bound_text(lo) + ", " + bound_text(hi) + "]");
}

/// Each value >= lo.
template <class T>
CLI::Validator at_least(T lo) {
  return number_check<T>([lo](T v) { return v >= lo; }, ">= " + bound_text(lo));
}

/// Each value > 0 (NaN is not).
template <class T>
CLI::Validator positive() {
  return number_check<T>([](T v) { return v > T(0); }, "> 0");
}

/// --help as "--name TYPE  what it is; the values allowed; default D" ("TYPE,..." for a
/// comma-separated list), from each option's description, checks and default.
class help_formatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    if (opt->get_type_size() == 0) return {};  // a flag
    const std::string type = opt->get_type_name();
    return " " + type.substr(0, type.find(':')) + (opt->get_expected_max() > 1 ? ",..." : "");
  }
  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string out = opt->get_description();
    const std::string type = opt->get_type_name();
    if (type.find(':') != std::string::npos) out += "; " + type.substr(type.find(':') + 1);
    std::string value = opt->get_default_str();
    if (value.size() >= 2 && value.front() == '[' && value.back() == ']') value = value.substr(1, value.size() - 2);
    if (opt->get_type_size() != 0 && !value.empty()) out += "; default " + value;
    return out;
  }
};

/// Adds --spacing, --seed and --json to `app`, and makes --help show every option's values
/// allowed and default. Call it before adding the program's own options.
inline void add_common_options(CLI::App& app, common_options& o) {
  app.formatter(std::make_shared<help_formatter>());
  app.get_formatter()->column_width(26);
  app.option_defaults()->always_capture_default();
  app.add_option("--spacing", o.spacing, "gate (checkpoint) spacing along the track [m]")->check(positive<float>());
  app.add_option("--seed", o.seed, "seed of the tracks' random streams");
  app.add_option("--json", o.json, "also write the results as JSON to PATH (read by scripts/perf-report)")
      ->type_name("PATH")
      ->check(CLI::Validator([](std::string& p) { return p.empty() ? std::string("empty path") : std::string(); },
                             ""));
}

/// Parses the command line with the options `app` was given: -1 to go on, else the program's
/// exit status (0 after --help, 2 after saying what is wrong with the command line).
inline int parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return -1;
}

/// The command line as one string (for the JSON and the printed header).
inline std::string command_line(int argc, char** argv) {
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i > 0 ? " " : "") + std::string(argv[i]);
  return command;
}

// ---- JSON ------------------------------------------------------------------------------------

/// `x` as printf(`format`) writes it, as a JSON number (an integer when it prints as one): the
/// documents carry the digits and number types they always had. NaN and infinities give null.
inline json number(double x, const char* format) {
  char text[64];
  std::snprintf(text, sizeof text, format, x);
  json v = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return v.is_discarded() ? json(nullptr) : v;
}

/// The top of a document: "peer" and "version" (when `peer` is not null), "device", "command".
inline json document(const char* peer, const std::string& device, const std::string& command) {
  json doc = json::object();
  if (peer != nullptr) {
    doc["peer"] = peer;
    doc["version"] = std::to_string(TRACK_GEN_VERSION_MAJOR) + "." + std::to_string(TRACK_GEN_VERSION_MINOR) + "." +
                     std::to_string(TRACK_GEN_VERSION_PATCH);
  }
  doc["device"] = device;
  doc["command"] = command;
  return doc;
}

/// {"median<suffix>": ..., "p10<suffix>", "p90<suffix>", "min<suffix>", "max<suffix>"} [ms].
inline json summary_json(const summary& s, const std::string& suffix) {
  json j = json::object();
  j["median" + suffix] = number(s.median, "%.6f");
  j["p10" + suffix] = number(s.p10, "%.6f");
  j["p90" + suffix] = number(s.p90, "%.6f");
  j["min" + suffix] = number(s.min, "%.6f");
  j["max" + suffix] = number(s.max, "%.6f");
  return j;
}

/// A row's "stats" object.
inline json stats_json(const track_stats& s) {
  return {{"mean_length_m", number(s.mean_length, "%.4f")}, {"min_length_m", number(s.min_length, "%.4f")},
          {"max_length_m", number(s.max_length, "%.4f")},   {"mean_gates", number(s.mean_gates, "%.4f")},
          {"valid_fraction", number(s.valid, "%.6f")},      {"fallback_fraction", number(s.fallback, "%.6f")},
          {"mean_attempts", number(s.attempts, "%.4f")}};
}

/// Writes `doc` to `path` (bytes that are not UTF-8 become U+FFFD) and says so on stdout.
inline void write_json(const std::string& path, const json& doc) {
  std::ofstream out(path);
  out << doc.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path);
  std::printf("\njson: %s\n", path.c_str());
}

#if defined(__CUDACC__)
// ---- CUDA ------------------------------------------------------------------------------------

/// Throws, naming the call and where it was made, unless `code` is cudaSuccess.
inline void check_cuda(cudaError_t code, const char* what, const char* file, int line) {
  if (code == cudaSuccess) return;
  const char* slash = std::strrchr(file, '/');
  throw std::runtime_error(std::string(slash != nullptr ? slash + 1 : file) + ":" + std::to_string(line) + ": " +
                           what + " failed: " + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")");
}
#define BENCH_CUDA(call) ::track_gen_bench::check_cuda((call), #call, __FILE__, __LINE__)

/// cudaMalloc'd array of n T (at least one), freed with the object (also when a check throws).
template <class T>
class device_buffer {
 public:
  explicit device_buffer(std::size_t n) {
    void* p = nullptr;
    BENCH_CUDA(cudaMalloc(&p, sizeof(T) * std::max<std::size_t>(n, 1)));
    data_.reset(static_cast<T*>(p));
  }
  T* get() const { return data_.get(); }

 private:
  struct deleter {
    void operator()(T* p) const { (void)cudaFree(p); }  // no throwing from a destructor
  };
  std::unique_ptr<T, deleter> data_;
};

/// One box per env, the footprint of the step_with_boxes rows (track_gen_bench) and of
/// graph_replay_bench --boxes: 0.4 x 0.2 m (half extents 0.2, 0.1), yawed 0.3 rad from the x axis
/// (a unit quaternion x, y, z, w about +z). Bind them with course.bind(positions,
/// orientations.get(), half_extents.get(), stream): each step then runs the exact box contacts
/// (collision.hpp) after the progress step. The yaw is fixed, so on bends a corner is often off
/// the road: the contacts' slower path is part of what these rows time.
struct car_boxes {
  static constexpr float yaw_rad = 0.3f;
  static constexpr float half_length_m = 0.2f, half_width_m = 0.1f;
  device_buffer<float4> orientations;  ///< float4 [E], device
  device_buffer<float2> half_extents;  ///< float2 [E] [m], device

  explicit car_boxes(std::size_t envs) : orientations(envs), half_extents(envs) {
    const std::vector<float4> q(envs, make_float4(0.0f, 0.0f, std::sin(0.5f * yaw_rad), std::cos(0.5f * yaw_rad)));
    const std::vector<float2> h(envs, make_float2(half_length_m, half_width_m));
    BENCH_CUDA(cudaMemcpy(orientations.get(), q.data(), q.size() * sizeof(float4), cudaMemcpyHostToDevice));
    BENCH_CUDA(cudaMemcpy(half_extents.get(), h.data(), h.size() * sizeof(float2), cudaMemcpyHostToDevice));
    // A copy from pageable memory may return before its DMA lands, and the course's stream does
    // not wait for the legacy stream: bind's check read zero half extents without this.
    BENCH_CUDA(cudaDeviceSynchronize());
  }

  /// The JSON members that describe them.
  static json describe() {
    return {{"boxes_per_env", 1},
            {"box_half_extents_m", {number(half_length_m, "%g"), number(half_width_m, "%g")}},
            {"box_yaw_rad", number(yaw_rad, "%g")}};
  }
};

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

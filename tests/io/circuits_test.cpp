// Real circuits (include/track_gen/circuits.hpp): the three file formats round-trip bit for bit,
// hand-written files in each format read to the same points, bad files throw naming the file,
// the line and the fault, and a loaded circuit generates a track (host backend) whose samples
// lie on its polyline, checked against the polyline itself in double precision.
#include <doctest/doctest.h>

#include <track_gen/circuits.hpp>
#include <track_gen/track_gen.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if defined(TRACK_GEN_TEST_EXPECT_JSON) && !TRACK_GEN_CIRCUITS_JSON
#error "nlohmann/json was found by CMake but circuits.hpp left its JSON reader out"
#endif

namespace tg = track_gen;
namespace fs = std::filesystem;

namespace {

/// A fresh directory under the system temp dir, removed at the end of the test.
struct temp_dir {
  fs::path path;
  temp_dir() {
    path = fs::temp_directory_path() / ("track_gen_circuits_" + std::to_string(std::random_device{}()));
    fs::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name), std::ios::binary) << text;
    return file(name);
  }
};

/// A wobbly ellipse 70 x 50 m around (x0, y0) with widths varying per point and side: floats with
/// all their mantissa bits in use (nothing that a short decimal would survive by luck).
tg::circuit wobbly_circuit(int count, double x0 = 0.0, double y0 = 0.0) {
  tg::circuit c;
  const double pi = 3.14159265358979323846;
  for (int i = 0; i < count; ++i) {
    const double a = 2 * pi * i / count;
    const double r = 1.0 + 0.05 * std::sin(3 * a);
    c.points.push_back(float3{static_cast<float>(x0 + 35 * r * std::cos(a)), static_cast<float>(y0 + 25 * r * std::sin(a)),
                              0.0f});
    c.half_widths.push_back(float2{static_cast<float>(1.1 + 0.3 * std::sin(a / 3)), static_cast<float>(0.9 + 0.2 * std::cos(a))});
  }
  return c;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void check_equal(const tg::circuit& got, const tg::circuit& want, bool widths, bool z) {
  REQUIRE(got.points.size() == want.points.size());
  for (std::size_t i = 0; i < want.points.size(); ++i) {
    CAPTURE(i);
    CHECK(same_bits(got.points[i].x, want.points[i].x));
    CHECK(same_bits(got.points[i].y, want.points[i].y));
    CHECK(same_bits(got.points[i].z, z ? want.points[i].z : 0.0f));
  }
  if (!widths) {
    CHECK(got.half_widths.empty());
    return;
  }
  REQUIRE(got.half_widths.size() == want.half_widths.size());
  for (std::size_t i = 0; i < want.half_widths.size(); ++i) {
    CAPTURE(i);
    CHECK(same_bits(got.half_widths[i].x, want.half_widths[i].x));
    CHECK(same_bits(got.half_widths[i].y, want.half_widths[i].y));
  }
}

/// `f` throws `E` whose message contains every piece of `parts`.
template <class E, class F>
void expect_error(F&& f, std::initializer_list<const char*> parts) {
  try {
    f();
    FAIL("no exception");
  } catch (const E& e) {
    const std::string what = e.what();
    CAPTURE(what);
    for (const char* p : parts) CHECK(what.find(p) != std::string::npos);
  }
}

/// Distance from q to the closed polyline pts, in double.
double polyline_distance(const std::vector<float3>& pts, double qx, double qy, double qz) {
  double best = 1e300;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const float3 a = pts[i], b = pts[(i + 1) % pts.size()];
    const double dx = double(b.x) - a.x, dy = double(b.y) - a.y, dz = double(b.z) - a.z;
    const double len2 = dx * dx + dy * dy + dz * dz;
    double t = len2 > 0 ? ((qx - a.x) * dx + (qy - a.y) * dy + (qz - a.z) * dz) / len2 : 0.0;
    t = std::fmin(1.0, std::fmax(0.0, t));
    const double ex = a.x + t * dx - qx, ey = a.y + t * dy - qy, ez = a.z + t * dz - qz;
    best = std::fmin(best, std::sqrt(ex * ex + ey * ey + ez * ez));
  }
  return best;
}

double perimeter(const std::vector<float3>& pts) {
  double len = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const float3 a = pts[i], b = pts[(i + 1) % pts.size()];
    len += std::hypot(double(b.x) - a.x, double(b.y) - a.y, double(b.z) - a.z);
  }
  return len;
}

}  // namespace

TEST_CASE("a circuit written in each format reads back bit for bit") {
  temp_dir dir;
  tg::circuit c = wobbly_circuit(37);
  SUBCASE("TUM CSV") {
    tg::save_circuit(dir.file("c.csv"), c, tg::circuit_format::tum_csv);
    CHECK(tg::detect_circuit_format(dir.file("c.csv"), tg::detail::circuits::read_all(dir.file("c.csv"))) ==
          tg::circuit_format::tum_csv);
    check_equal(tg::load_circuit(dir.file("c.csv")), c, true, false);
  }
  SUBCASE("plain CSV (x, y, z; no widths)") {
    for (std::size_t i = 0; i < c.points.size(); ++i) c.points[i].z = std::ldexp(static_cast<float>(i), -7) - 0.1f;
    tg::save_circuit(dir.file("c.txt"), c, tg::circuit_format::plain_csv);
    check_equal(tg::load_circuit(dir.file("c.txt")), c, false, true);
  }
  SUBCASE("JSON") {
    for (std::size_t i = 0; i < c.points.size(); ++i) c.points[i].z = std::ldexp(static_cast<float>(i), -7) - 0.1f;
    tg::save_circuit(dir.file("c.json"), c, tg::circuit_format::json);
#if TRACK_GEN_CIRCUITS_JSON
    check_equal(tg::load_circuit(dir.file("c.json")), c, true, true);
    c.half_widths.clear();  // widths are optional
    tg::save_circuit(dir.file("c.json"), c, tg::circuit_format::json);
    check_equal(tg::load_circuit(dir.file("c.json")), c, false, true);
#else
    MESSAGE("JSON reading skipped: nlohmann/json is not on the include path");
#endif
  }
  SUBCASE("extreme floats (subnormal, largest, negative zero)") {
    c.points[0] = float3{std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::max(), 0.0f};
    c.points[1].x = -0.0f;
    c.half_widths[2] = float2{std::numeric_limits<float>::max(), 0.0f};
    tg::save_circuit(dir.file("x.csv"), c, tg::circuit_format::tum_csv);
    check_equal(tg::load_circuit(dir.file("x.csv")), c, true, false);
  }
}

TEST_CASE("hand-written TUM, plain and JSON files read to the same points") {
  temp_dir dir;
  // The TUM header may list the columns in another order; spaces, tabs, CRLF, blank lines and
  // comments are tolerated.
  const std::string tum = dir.write("tum.csv",
                                    "# x_m,y_m,w_tr_right_m,w_tr_left_m\r\n"
                                    "  12.5 , -3.25,\t1.5, 2\r\n"
                                    "\n"
                                    "# a comment\n"
                                    "20, 4.125e1, 1.25, 2.5\n"
                                    "-7.75,+0.5,1,3\n");
  const std::string swapped = dir.write("swapped.csv",
                                        "# w_tr_left_m, x_m, w_tr_right_m, y_m\n"
                                        "2, 12.5, 1.5, -3.25\n2.5, 20, 1.25, 41.25\n3, -7.75, 1, 0.5\n");
  const std::string headless = dir.write("headless.csv", "12.5,-3.25,1.5,2\n20,41.25,1.25,2.5\n-7.75,0.5,1,3\n");
  const std::string bom = dir.write("bom.csv", "\xEF\xBB\xBF# x_m,y_m,w_tr_right_m,w_tr_left_m\n12.5,-3.25,1.5,2\n"
                                               "20,41.25,1.25,2.5\n-7.75,0.5,1,3\n");
  const std::string plain = dir.write("plain.csv", "# exported by hand\nx, y\n12.5, -3.25\n20, 41.25\n-7.75, 0.5\n");
  const std::string plain3 = dir.write("plain3.txt", "12.5,-3.25,0\n20,41.25,0\n-7.75,0.5,0\n");
  const std::string json = dir.write("c.json",
                                     "{\"name\": \"test\", \"closed\": true,\n"
                                     " \"points\": [[12.5, -3.25], [20, 41.25, 0], [-7.75, 0.5]],\n"
                                     " \"half_widths\": [[2, 1.5], [2.5, 1.25], [3, 1]]}\n");
  const tg::circuit want{{{12.5f, -3.25f, 0.0f}, {20.0f, 41.25f, 0.0f}, {-7.75f, 0.5f, 0.0f}},
                         {{2.0f, 1.5f}, {2.5f, 1.25f}, {3.0f, 1.0f}}};
  for (const std::string& path : {tum, swapped, headless, bom}) {
    CAPTURE(path);
    check_equal(tg::load_circuit(path), want, true, true);
  }
  for (const std::string& path : {plain, plain3}) {
    CAPTURE(path);
    check_equal(tg::load_circuit(path), want, false, true);
  }
#if TRACK_GEN_CIRCUITS_JSON
  check_equal(tg::load_circuit(json), want, true, true);
#endif
  // The writers follow the same layouts (TUM: right width before left; short floats print short).
  CHECK(tg::format_circuit(want, tg::circuit_format::tum_csv) ==
        "# x_m,y_m,w_tr_right_m,w_tr_left_m\n12.5,-3.25,1.5,2\n20,41.25,1.25,2.5\n-7.75,0.5,1,3\n");
  CHECK(tg::format_circuit(want, tg::circuit_format::plain_csv) == "x,y,z\n12.5,-3.25,0\n20,41.25,0\n-7.75,0.5,0\n");
}

TEST_CASE("bad circuit files throw naming the file, the line and the fault") {
  temp_dir dir;
  using ia = std::invalid_argument;
  const std::string missing = dir.write("missing.csv", "# x_m,y_m,w_tr_right_m\n1,2,3\n");
  expect_error<ia>([&] { tg::load_circuit(missing); }, {"missing.csv:1:", "w_tr_left_m missing"});
  const std::string word = dir.write("word.csv", "# x_m,y_m,w_tr_right_m,w_tr_left_m\n1,2,3,4\n1,abc,3,4\n");
  expect_error<ia>([&] { tg::load_circuit(word); }, {"word.csv:3:", "y_m", "'abc' is not a finite number"});
  const std::string neg = dir.write("neg.csv", "# x_m,y_m,w_tr_right_m,w_tr_left_m\n1,2,3,4\n2,2,3,4\n3,4,-0.5,4\n");
  expect_error<ia>([&] { tg::load_circuit(neg); }, {"neg.csv:4:", "w_tr_right_m", "negative half-width"});
  const std::string few = dir.write("few.csv", "x,y\n1,2\n3,4\n");
  expect_error<ia>([&] { tg::load_circuit(few); }, {"few.csv", "2 points", "at least 3"});
  const std::string ragged = dir.write("ragged.csv", "1,2,3\n4,5,6\n7,8\n");
  expect_error<ia>([&] { tg::load_circuit(ragged); }, {"ragged.csv:3:", "2 columns", "line 1 has 3"});
  const std::string inf = dir.write("inf.csv", "1,2\n4,inf\n7,8\n");
  expect_error<ia>([&] { tg::load_circuit(inf); }, {"inf.csv:2:", "column y", "not a finite number"});
  const std::string short_row = dir.write("short.csv", "# x_m,y_m,w_tr_right_m,w_tr_left_m\n1,2,3,4\n1,2,3\n");
  expect_error<ia>([&] { tg::load_circuit(short_row); }, {"short.csv:3:", "3 columns, expected 4"});
#if TRACK_GEN_CIRCUITS_JSON
  const std::string syntax = dir.write("syntax.json", "{\n \"points\": [[1, 2],\n [3, 4]\n [5, 6]]}\n");
  expect_error<ia>([&] { tg::load_circuit(syntax); }, {"syntax.json:4:", "not valid JSON"});
  const std::string json_neg =
      dir.write("neg.json", "{\"points\": [[0,0],[1,0],[0,1]], \"half_widths\": [[1,1],[1,-2],[1,1]]}");
  expect_error<ia>([&] { tg::load_circuit(json_neg); }, {"neg.json", "half_widths[1]", "negative half-width"});
  const std::string json_str = dir.write("str.json", "{\"points\": [[0,0],[1,\"a\"],[0,1]]}");
  expect_error<ia>([&] { tg::load_circuit(json_str); }, {"str.json", "points[1][1]", "not a number"});
  const std::string open = dir.write("open.json", "{\"points\": [[0,0],[1,0],[0,1]], \"closed\": false}");
  expect_error<ia>([&] { tg::load_circuit(open); }, {"open.json", "closed", "only closed circuits"});
  const std::string none = dir.write("none.json", "{\"pts\": []}");
  expect_error<ia>([&] { tg::load_circuit(none); }, {"none.json", "\"points\" missing"});
  const std::string big = dir.write("big.json", "{\"points\": [[0,0],[1,1" + std::string(400, '0') + "],[0,1]]}");
  expect_error<ia>([&] { tg::load_circuit(big); }, {"big.json"});
#endif
  expect_error<std::runtime_error>([&] { tg::load_circuit(dir.file("absent.csv")); }, {"absent.csv", "cannot open"});
  // Writers refuse what could not be read back.
  tg::circuit c = wobbly_circuit(5);
  c.half_widths[3].y = -1.0f;
  expect_error<ia>([&] { tg::format_circuit(c, tg::circuit_format::json, "w.json"); }, {"w.json", "half_widths[3]"});
  c = wobbly_circuit(5);
  c.points[2].z = 1.0f;
  expect_error<ia>([&] { tg::format_circuit(c, tg::circuit_format::tum_csv, "w.csv"); }, {"w.csv", "points[2].z", "no z"});
  c.half_widths.clear();
  expect_error<ia>([&] { tg::format_circuit(c, tg::circuit_format::tum_csv, "w.csv"); }, {"w.csv", "needs half-widths"});
  expect_error<ia>([&] { tg::narrowest_half_width({c}); }, {"circuits[0]", "no half-widths"});
}

TEST_CASE("a loaded circuit generates a track on its polyline (host backend) and exports back") {
  temp_dir dir;
  const tg::circuit src = wobbly_circuit(180);
  tg::save_circuit(dir.file("track.csv"), src, tg::circuit_format::tum_csv);
  const tg::circuit c = tg::load_circuit(dir.file("track.csv"));
  tg::track_params p = tg::presets::track(2);
  p.half_width = tg::narrowest_half_width({c});
  p.validate.length_max = 400.0f;  // the preset's 10-60 m tracks; this circuit is about 190 m
  // Independent: the smallest of the widths written.
  float narrowest = 1e30f;
  for (const float2& w : src.half_widths) narrowest = std::fmin(narrowest, std::fmin(w.x, w.y));
  CHECK(p.half_width == narrowest);
  const tg::course<tg::presets::track_pipeline, tg::host_policy> course(p, 2.0f, tg::to_user_tracks({c}));
  const tg::track_snapshot s = course.copy_tracks({});
  const double len = perimeter(src.points);
  for (int e = 0; e < 2; ++e) {
    CAPTURE(e);
    const std::uint32_t st = s.status[static_cast<std::size_t>(e)];
    CHECK((st & tg::status::valid) != 0u);
    CHECK((st & tg::status::user_track) != 0u);
    CHECK(std::fabs(s.length[static_cast<std::size_t>(e)] - len) <= 1e-5 * len);
    double worst = 0;
    for (int k = 0; k < s.num_samples; ++k) {
      const float3 q = s.position[s.sample_index(e, k)];
      worst = std::fmax(worst, polyline_distance(src.points, q.x, q.y, q.z));
      CHECK(s.half_widths[s.sample_index(e, k)].x == narrowest);
      CHECK(s.half_widths[s.sample_index(e, k)].y == narrowest);
    }
    CHECK(worst <= 1e-4);  // float32 rounding of points ~30 m from the origin is ~2e-6 m
  }
  // Export env 1 in every format; each reads back as the snapshot's samples, bit for bit.
  const tg::circuit out = tg::circuit_from_snapshot(s, 1);
  REQUIRE(out.points.size() == static_cast<std::size_t>(s.num_samples));
  for (int k = 0; k < s.num_samples; ++k) {
    CHECK(same_bits(out.points[static_cast<std::size_t>(k)].x, s.position[s.sample_index(1, k)].x));
    CHECK(same_bits(out.half_widths[static_cast<std::size_t>(k)].y, s.half_widths[s.sample_index(1, k)].y));
  }
  tg::save_circuit(dir.file("out.csv"), out, tg::circuit_format::tum_csv);
  check_equal(tg::load_circuit(dir.file("out.csv")), out, true, false);
  tg::save_circuit(dir.file("out.xyz"), out, tg::circuit_format::plain_csv);
  check_equal(tg::load_circuit(dir.file("out.xyz")), out, false, true);
#if TRACK_GEN_CIRCUITS_JSON
  tg::save_circuit(dir.file("out.json"), out, tg::circuit_format::json);
  check_equal(tg::load_circuit(dir.file("out.json")), out, true, true);
#endif
  CHECK_THROWS_AS(tg::circuit_from_snapshot(s, 2), std::invalid_argument);
}

TEST_CASE("a circuit far from the origin, re-centred, exports back in the user's frame") {
  // 20 km east, 15 km south: float32 spacing there is 2 mm; recentre keeps the track precise and
  // circuit_from_snapshot adds the origin back.
  const tg::circuit c = wobbly_circuit(120, 20000.0, -15000.0);
  tg::track_params p = tg::presets::track(1);
  const tg::course<tg::presets::track_pipeline, tg::host_policy> course(
      p, 2.0f, tg::to_user_tracks({c}, tg::user_tracks::kind::centreline, true));
  const tg::track_snapshot s = course.copy_tracks({});
  CHECK(s.origin[0].x == 20000.0f);
  CHECK(s.origin[0].y == -15000.0f);
  const tg::circuit out = tg::circuit_from_snapshot(s, 0);
  const tg::circuit local = tg::circuit_from_snapshot(s, 0, false);
  double worst = 0;
  for (std::size_t k = 0; k < out.points.size(); ++k) {
    worst = std::fmax(worst, polyline_distance(c.points, out.points[k].x, out.points[k].y, out.points[k].z));
    CHECK(local.points[k].x == s.position[k].x);
  }
  CHECK(worst <= 2e-3);  // one float32 step at 20 km
}

namespace {

/// tests/io/circuit_files/<name>: the same bytes python/tests/test_circuits.py reads, so both
/// readers are held to one answer.
std::string shared_file(const std::string& name) {
  return std::string(TRACK_GEN_SOURCE_DIR) + "/tests/io/circuit_files/" + name;
}

/// The circuit of the hand-written files above and of the shared cr_only files.
const tg::circuit hand_written{{{12.5f, -3.25f, 0.0f}, {20.0f, 41.25f, 0.0f}, {-7.75f, 0.5f, 0.0f}},
                               {{2.0f, 1.5f}, {2.5f, 1.25f}, {3.0f, 1.0f}}};

}  // namespace

TEST_CASE("lines end with LF, CRLF or a lone CR (old Mac OS) alike, counted alike in errors") {
  using ia = std::invalid_argument;
  check_equal(tg::load_circuit(shared_file("cr_only.csv")), hand_written, true, true);
  check_equal(tg::load_circuit(shared_file("cr_only_plain.csv")), hand_written, false, true);
  CHECK(tg::detect_circuit_format("cr_only.csv", tg::detail::circuits::read_all(shared_file("cr_only.csv"))) ==
        tg::circuit_format::tum_csv);
  expect_error<ia>([&] { tg::load_circuit(shared_file("cr_bad_row.csv")); }, {"cr_bad_row.csv:4:", "column y", "'abc'"});
#if TRACK_GEN_CIRCUITS_JSON
  check_equal(tg::load_circuit(shared_file("cr_only.json")), hand_written, true, true);
  expect_error<ia>([&] { tg::load_circuit(shared_file("cr_syntax.json")); }, {"cr_syntax.json:4:", "not valid JSON"});
#endif
  // parse_* (text, not a file) count lone CRs too, and split lines at nothing else (a form feed).
  expect_error<ia>([&] { tg::parse_plain_csv("1,2\r3,4\r\n\r5,x\n", "t.csv"); }, {"t.csv:4:", "column y"});
  expect_error<ia>([&] { tg::parse_plain_csv("0,0\n1,2\f3\n5,6\n", "t.csv"); }, {"t.csv:2:", "column y", "is not a finite number"});
  // A byte order mark before a comment does not hide a headerless TUM file from the detection.
  CHECK(tg::detect_circuit_format("b.csv", "\xEF\xBB\xBF# by hand\n12.5,-3.25,1.5,2\n") == tg::circuit_format::tum_csv);
}

TEST_CASE("a file that is not UTF-8 is refused naming the line and the byte; UTF-8 comments are read") {
  using ia = std::invalid_argument;
  expect_error<ia>([&] { tg::load_circuit(shared_file("latin1.csv")); },
                   {"latin1.csv:2:", "byte 38 (0xfc) is not UTF-8", "circuit files are UTF-8"});
  expect_error<ia>([&] { tg::load_circuit(shared_file("surrogate.csv")); }, {"surrogate.csv:1:", "byte 2 (0xed)"});
#if TRACK_GEN_CIRCUITS_JSON
  expect_error<ia>([&] { tg::load_circuit(shared_file("latin1.json")); }, {"latin1.json:1:", "byte 11 (0xfc)"});
#endif
  // The offset counts the byte order mark: it is the offset in the file.
  expect_error<ia>([&] { tg::parse_circuit("\xEF\xBB\xBF# \xFC\n", tg::circuit_format::plain_csv, "b.csv"); },
                   {"b.csv:1:", "byte 5 (0xfc)"});
  check_equal(tg::parse_circuit("# N\xC3\xBCrburgring \xF0\x9F\x8F\x81\n12.5,-3.25,1.5,2\n20,41.25,1.25,2.5\n-7.75,0.5,1,3\n",
                                tg::circuit_format::tum_csv, "utf8.csv"),
              hand_written, true, true);
  // Well-formed and ill-formed sequences of Unicode's table 3-7; the Python test checks the same
  // list against Python's codec.
  for (const char* good : {"\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80", "\xF0\x90\x80\x80",
                           "\xF4\x8F\xBF\xBF"}) {
    CAPTURE(good);
    CHECK(tg::detail::circuits::invalid_utf8(std::string("a") + good + "b") == std::string::npos);
  }
  for (const char* bad : {"\x80", "\xBF", "\xC0\xAF", "\xC1\xBF", "\xC3", "\xC3" "A", "\xE0\x9F\xBF", "\xED\xA0\x80",
                          "\xE2\x82", "\xF0\x8F\xBF\xBF", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF"}) {
    CAPTURE(bad);
    CHECK(tg::detail::circuits::invalid_utf8(std::string("a") + bad + "b") == 1);
  }
}

#if TRACK_GEN_CIRCUITS_JSON
namespace {

/// A JSON circuit with a "meta" value nested so that the whole file is `depth` levels deep.
std::string nested_json(int depth) {
  return "{\"points\": [[0,0],[1,0],[0,1]], \"meta\": " + std::string(static_cast<std::size_t>(depth - 1), '[') +
         std::string(static_cast<std::size_t>(depth - 1), ']') + "}";
}

}  // namespace

TEST_CASE("JSON nested deeper than 64 levels is refused before parsing") {
  using ia = std::invalid_argument;
  CHECK(tg::detail::circuits::max_json_depth == 64);
  CHECK(tg::parse_json(nested_json(64), "ok.json").points.size() == 3);
  expect_error<ia>([&] { tg::parse_json(nested_json(65), "deep.json"); }, {"deep.json:1:", "nested deeper than 64 levels"});
  // Brackets in strings do not count (an escaped quote does not end the string).
  CHECK(tg::parse_json("{\"points\": [[0,0],[1,0],[0,1]], \"s\": \"\\\"" + std::string(100, '[') + "\"}").points.size() == 3);
  // Deep enough to overflow a stack when a message dumps the value ("closed" is shown in its
  // error): refused first, with the line of the 65th bracket.
  expect_error<ia>([&] { tg::parse_json("{\"points\": [[0,0],[1,0],[0,1]],\n\"closed\": " + std::string(1000000, '[') +
                                            std::string(1000000, ']') + "}", "deeper.json"); },
                   {"deeper.json:2:", "nested deeper"});
}
#endif

TEST_CASE("a number must round to a finite float32; one below its subnormals reads as +-0") {
  using ia = std::invalid_argument;
  const float big = std::numeric_limits<float>::max(), tiny = std::numeric_limits<float>::denorm_min();
  const tg::circuit edges = tg::load_circuit(shared_file("float32_edges.csv"));
  CHECK(same_bits(edges.points[0].x, big));    // 3.4028235e38 rounds down to the largest float
  CHECK(same_bits(edges.points[0].y, -0.0f));  // -1e-50: the sign is kept
  CHECK(same_bits(edges.points[0].z, tiny));   // 1e-45
  expect_error<ia>([&] { tg::load_circuit(shared_file("beyond_float32.csv")); },
                   {"beyond_float32.csv:3:", "column x", "1e39 is outside float32's range", "3.40282347e+38"});
#if TRACK_GEN_CIRCUITS_JSON
  expect_error<ia>([&] { tg::load_circuit(shared_file("beyond_float32.json")); },
                   {"beyond_float32.json", "points[1][1]", "outside float32's range"});
  for (const char* word : {"NaN", "Infinity", "-Infinity"}) {  // Python's json takes them: refused there too
    expect_error<ia>([&] { tg::parse_json(std::string("{\"points\": [[0, 0], [") + word + ", 0], [0, 1]]}", "c.json"); },
                     {"c.json:1:", "not valid JSON"});
  }
#endif
  // What python/track_gen/circuits.py wrote (python/tests/test_circuits.py checks these files are
  // its output): doubles at float32's edges read as their nearest floats.
  const tg::circuit want{{{big, -0.0f, 0.0f}, {-0.0f, 0.1f, static_cast<float>(0.3333333333333333)}, {tiny, -big, 2.5f}},
                         {{0.0f, static_cast<float>(1e-40)}, {1.5f, big}, {2.0f, 0.25f}}};
  check_equal(tg::load_circuit(shared_file("python_written.txt")), want, false, true);
#if TRACK_GEN_CIRCUITS_JSON
  check_equal(tg::load_circuit(shared_file("python_written.json")), want, true, true);
#endif
  // Spellings from_chars finds out of range, classified by their digits and exponent.
  const std::pair<const char*, float> zeros[] = {{"1e-400", 0.0f},          {"-0.001e-44", -0.0f},
                                                 {"1000e-50", 0.0f},        {"0.000000000001e-34", 0.0f},
                                                 {"+7e-46", 0.0f},          {"-1e-99999999999999999999999", -0.0f}};
  for (const auto& z : zeros) {
    CAPTURE(z.first);
    CHECK(same_bits(tg::parse_plain_csv(std::string(z.first) + ",0\n1,2\n3,4\n").points[0].x, z.second));
  }
  for (const char* over : {"1e400", "-3.4028236e38", "100000e34", "0.00001e44", "1e99999999999999999999999"}) {
    CAPTURE(over);
    expect_error<ia>([&] { tg::parse_plain_csv(std::string("1,2\n") + over + ",0\n3,4\n", "o.csv"); },
                     {"o.csv:2:", "outside float32's range"});
  }
  expect_error<ia>([&] { tg::parse_plain_csv("1,2\n+-1,4\n5,6\n", "pm.csv"); }, {"pm.csv:2:", "'+-1' is not a finite number"});
  // The writer prints the largest float, and the reader takes it back.
  tg::circuit c = wobbly_circuit(4);
  c.points[1].y = -big;
  check_equal(tg::parse_circuit(tg::format_circuit(c, tg::circuit_format::tum_csv), tg::circuit_format::tum_csv, "w"), c,
              true, false);
}

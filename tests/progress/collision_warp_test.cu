// collide_box_warp (collision.hpp) on the CUDA backend against collide_box called by one thread
// per box, bit for bit (CUDA only: the warp-wide form is device code). The reference is the
// one-thread function that collision_cases.hpp checks against the exact stadium; here the two
// must agree in every field and bit, on the generated tracks of the track preset:
// - boxes on the road with a warm hint, corners around half-width + trust margin (both sides
//   of it, with and without the margin), the bench's boxes (0.4 x 0.2 m at a fixed yaw, many
//   corners off the road), boxes far off the road, stale hints, points anywhere around the
//   track, invalid boxes (NaN, Inf, zero extents, a zero or too long quaternion);
// - windows 0, negative, 1, the default, just below and at N / 2, N and INT_MAX; hints far
//   outside [0, N); trust margins 0, the course's and larger;
// - lanes of one warp on different tracks, and warps whose lanes share one track;
// - both forms (with and without collide_box_warp_storage);
// - a partial last warp (the count not a multiple of 32, and a count below 32), blocks of 128
//   and 96 threads, and two-dimensional blocks (the lane taken from the linear thread index);
// and the library's launches that now call it (query_kernel's warp-wide form): the batch
// collide_boxes and course::step's contacts, each against the one-thread kernel, bit for bit,
// on courses whose sizes give each env 8, 4, 2 and 1 lanes (warp_form_lanes_per_env).
#include "progress_harness.hpp"

#include <track_gen/collision.hpp>

#include <climits>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace {

using namespace progress_test;

/// One box to collide: env, box, and collide_box's arguments.
struct box_query {
  int env;
  tg::box b;
  int hint, window;
  float trust_margin;
};

/// Thread i: collide_box of query i, one thread per box (the reference).
__global__ void one_thread_kernel(const tg::track_batch_ref batch, const box_query* q, tg::box_contact* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const box_query x = q[i];
  out[i] = tg::collide_box(batch.track(x.env), x.b, x.hint, x.window, x.trust_margin);
}

/// Linear thread i of the grid: collide_box_warp of query i; every lane calls it, the lanes
/// past the last query inactive (with a default track_ref and box, as documented). With
/// `storage`, the form that takes a collide_box_warp_storage (one per warp of the block).
__global__ void warp_kernel(const tg::track_batch_ref batch, const box_query* q, tg::box_contact* out, int n,
                            bool storage) {
  __shared__ tg::collide_box_warp_storage warps[8];  // up to 256 threads a block
  const unsigned per_block = blockDim.x * blockDim.y * blockDim.z;
  const unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int i = static_cast<int>(blockIdx.x * per_block + linear);
  const bool active = i < n;
  const box_query x = active ? q[i] : box_query{0, tg::box{}, 0, 0, 0.0f};
  const tg::track_ref tr = active ? batch.track(x.env) : tg::track_ref{};
  const tg::box_contact c =
      storage ? tg::collide_box_warp(tr, x.b, x.hint, x.window, x.trust_margin, active, warps[linear / 32])
              : tg::collide_box_warp(tr, x.b, x.hint, x.window, x.trust_margin, active);
  if (active) out[i] = c;
}

using cuda_rig = rig<tg::cuda_policy>;
using support = cuda_rig::support;
template <class T>
using buffer = cuda_rig::buffer<T>;

std::vector<tg::box_contact> run_one_thread(cuda_rig& r, const std::vector<box_query>& in) {
  const int n = static_cast<int>(in.size());
  buffer<box_query> q(in.size());
  buffer<tg::box_contact> out(in.size());
  q.upload(in, r.stream());
  one_thread_kernel<<<support::blocks(n), 128, 0, r.stream().raw()>>>(r.course().view().batch(), q.data(), out.data(), n);
  check_cuda(cudaGetLastError(), "launching one_thread_kernel");
  return out.download(r.stream());
}

std::vector<tg::box_contact> run_warp(cuda_rig& r, const std::vector<box_query>& in, dim3 block, bool storage) {
  const int n = static_cast<int>(in.size());
  const unsigned per_block = block.x * block.y * block.z;
  REQUIRE(per_block % 32u == 0u);
  buffer<box_query> q(in.size());
  buffer<tg::box_contact> out(in.size());
  q.upload(in, r.stream());
  const unsigned blocks = (static_cast<unsigned>(n) + per_block - 1u) / per_block;
  warp_kernel<<<blocks, block, 0, r.stream().raw()>>>(r.course().view().batch(), q.data(), out.data(), n, storage);
  check_cuda(cudaGetLastError(), "launching warp_kernel");
  return out.download(r.stream());
}

std::string describe(const tg::box_contact& c) {
  return "flags " + hex(c.flags) + " clearance " + std::to_string(c.clearance) + " nearest (" +
         std::to_string(c.nearest.x) + ", " + std::to_string(c.nearest.y) + ", " + std::to_string(c.nearest.z) +
         ") border " + std::to_string(static_cast<int>(c.border)) + " corner " + std::to_string(c.corner) + " hint " +
         std::to_string(c.hint);
}

/// Every field of two contacts, floats by their bits (NaN == NaN of the same bits, -0 != +0).
bool same_contact(const tg::box_contact& a, const tg::box_contact& b) {
  return a.flags == b.flags && same_bits(a.clearance, b.clearance) && same_bits(a.nearest.x, b.nearest.x) &&
         same_bits(a.nearest.y, b.nearest.y) && same_bits(a.nearest.z, b.nearest.z) &&
         same_bits(a.normal.x, b.normal.x) && same_bits(a.normal.y, b.normal.y) && same_bits(a.normal.z, b.normal.z) &&
         a.border == b.border && a.corner == b.corner && a.hint == b.hint;
}

/// The number of queries whose contacts differ (each reported with its query's index).
int count_differences(const std::vector<tg::box_contact>& got, const std::vector<tg::box_contact>& want,
                      const char* what) {
  REQUIRE(got.size() == want.size());
  int differ = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (same_contact(got[i], want[i])) continue;
    if (++differ <= 10) MESSAGE(what << ": box " << i << ": " << describe(got[i]) << " vs one thread " << describe(want[i]));
  }
  return differ;
}

/// Boxes of every kind the file comment lists, on the tracks of `t`, drawn from `rng`.
class box_maker {
 public:
  box_maker(const tg::track_snapshot& t, float course_margin) : t_(t), course_margin_(course_margin) {}

  /// A box of kind `kind` (0 .. kinds - 1) on env e.
  box_query make(int kind, int e, std::mt19937& rng) const {
    const int n = t_.num_samples;
    const int k = uniform_int(rng, 0, n - 1);
    const double u = uniform(rng, 0.0, 1.0);
    const frame f = frame_at(e, k, u);
    box_query q{e, tg::box{}, k + uniform_int(rng, -2, 2), tg::default_tuning::projection_window, course_margin_};
    switch (kind) {
      case 0: {  // on the road, small, nearly along the track, warm hint
        const double side = uniform(rng, -0.5, 0.5);
        q.b = box_at(f, side * (side >= 0 ? f.left : f.right), f.heading + uniform(rng, -0.2, 0.2), 0.2, 0.1);
        break;
      }
      case 1: {  // along the track, corners within 5 cm of half-width + the trust margin
        const bool left = uniform(rng, 0.0, 1.0) < 0.5;
        const double hy = 0.1, edge = (left ? f.left : f.right) + course_margin_ + uniform(rng, -0.05, 0.05);
        q.b = box_at(f, left ? edge - hy : hy - edge, f.heading, 0.2, hy);
        q.trust_margin = uniform(rng, 0.0, 1.0) < 0.5 ? course_margin_ : 0.0f;
        break;
      }
      case 2:  // the bench's box: 0.4 x 0.2 m at a yaw of 0.3 rad in the track frame, anywhere across the road
        q.b = box_at(f, uniform(rng, -f.right, f.left), 0.3, 0.2, 0.1);
        break;
      case 3: {  // far off the road (lost), any yaw, a random hint
        const bool left = uniform(rng, 0.0, 1.0) < 0.5;
        const double off = uniform(rng, 0.5, 40.0);
        q.b = box_at(f, left ? f.left + off : -(f.right + off), uniform(rng, -pi, pi), uniform(rng, 0.1, 2.0),
                     uniform(rng, 0.05, 1.0));
        q.hint = uniform_int(rng, 0, n - 1);
        break;
      }
      case 4:  // on the road, a stale hint (a jump)
        q.b = box_at(f, 0.3 * f.left, f.heading, 0.2, 0.1);
        q.hint = k + n / 2 + uniform_int(rng, -n / 8, n / 8);
        break;
      case 5: {  // anywhere around the track, boxes up to 6 m long
        const float3 c = v3(f.x + uniform(rng, -15.0, 15.0), f.y + uniform(rng, -15.0, 15.0), f.z);
        q.b = tg::box{c, euler_quaternion(uniform(rng, -pi, pi)), f2d(uniform(rng, 0.05, 3.0), uniform(rng, 0.05, 1.5))};
        break;
      }
      default:  // invalid
        q.b = box_at(f, 0.0, f.heading, 0.2, 0.1);
        make_invalid(uniform_int(rng, 0, 6), q.b);
        break;
    }
    // Windows and hints beyond the usual: O(N) for every search, a 1-segment window, the
    // widest windowed search (2 W + 1 = N - 1) and the first unwindowed one, far hints.
    const int pick = uniform_int(rng, 0, 15);
    const int windows[] = {0, -3, 1, n / 2 - 1, n / 2, n, INT_MAX};
    if (pick < 7) q.window = windows[pick];
    if (uniform_int(rng, 0, 9) == 0) q.hint += (uniform_int(rng, 0, 1) == 0 ? -1 : 1) * 1000000007;
    if (uniform_int(rng, 0, 19) == 0) q.trust_margin = 0.5f;
    return q;
  }
  static constexpr int kinds = 7;

 private:
  struct frame {
    double x, y, z, nx, ny, heading, left, right;  ///< point, left normal, heading, half-widths
  };
  frame frame_at(int e, int k, double u) const {
    const int n = t_.num_samples;
    const std::size_t a = t_.sample_index(e, k), b = t_.sample_index(e, k + 1 == n ? 0 : k + 1);
    const float3 p = t_.position[a], q = t_.position[b], nn = t_.normal[a], tt = t_.tangent[a];
    const float2 w = t_.half_widths[a];
    return {p.x + u * (q.x - p.x), p.y + u * (q.y - p.y), p.z + u * (q.z - p.z), nn.x, nn.y, std::atan2(tt.y, tt.x),
            w.x, w.y};
  }
  static tg::box box_at(const frame& f, double lateral, double yaw, double hx, double hy) {
    return tg::box{v3(f.x + lateral * f.nx, f.y + lateral * f.ny, f.z), euler_quaternion(yaw), f2d(hx, hy)};
  }
  static void make_invalid(int how, tg::box& b) {
    switch (how) {
      case 0: b.centre.x = NAN; break;
      case 1: b.centre.y = INFINITY; break;
      case 2: b.half_extents.x = 0.0f; break;
      case 3: b.half_extents.y = NAN; break;
      case 4: b.orientation = q4(0.0, 0.0, 0.0, 0.0); break;
      case 5: b.orientation = q4(0.0, 0.0, 1.5, 1.5); break;  // squared norm 4.5 > 4
      default: b.orientation.w = NAN; break;
    }
  }
  static double uniform(std::mt19937& rng, double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  }
  static int uniform_int(std::mt19937& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

  const tg::track_snapshot& t_;
  float course_margin_;
};

tg::track_params generated_params(int envs) {
  tg::track_params p = tg::presets::track(envs);
  p.seed = 41;
  return p;
}

/// Half the course's clearance margin: the trust margin course::step passes on valid tracks.
float course_margin(const tg::track_params& p) { return 0.5f * p.validate.clearance_margin; }

}  // namespace

TEST_CASE("collide_box_warp equals collide_box bit for bit, lane by lane") {
  const int envs = 64;
  const tg::track_params params = generated_params(envs);
  cuda_rig r(params, 0.6f);
  const tg::track_snapshot t = r.tracks();
  const box_maker maker(t, course_margin(params));
  std::mt19937 rng(20261203u);
  // Warps of three patterns: every lane its own env and kind; one env, kinds mixed; one env and
  // one kind (every lane of the warp lost together, or all on the road).
  const int count = scaled(32 * 640 + 13, 32 * 24 + 13);
  std::vector<box_query> in;
  for (int i = 0; i < count; ++i) {
    const int warp = i / 32, pattern = warp % 3;
    const int env = pattern == 0 ? static_cast<int>(rng() % envs) : warp % envs;
    const int kind = pattern == 2 ? warp % box_maker::kinds : static_cast<int>(rng() % box_maker::kinds);
    in.push_back(maker.make(kind, env, rng));
  }
  const std::vector<tg::box_contact> want = run_one_thread(r, in);

  // The mix reaches every path (read from the reference, so that none can be skipped silently).
  int lost = 0, out_of_bounds = 0, invalid = 0, on_road = 0;
  for (const tg::box_contact& c : want) {
    lost += has(c.flags, tg::contact_flags::lost) ? 1 : 0;
    out_of_bounds += has(c.flags, tg::contact_flags::out_of_bounds) ? 1 : 0;
    invalid += has(c.flags, tg::contact_flags::invalid) ? 1 : 0;
    on_road += c.flags == 0u ? 1 : 0;
  }
  INFO("of " << count << " boxes: lost " << lost << ", out of bounds " << out_of_bounds << ", invalid " << invalid
             << ", on the road " << on_road);
  CHECK(lost > count / 10);
  CHECK(out_of_bounds > count / 5);
  CHECK(invalid > count / 40);
  CHECK(on_road > count / 10);

  for (const bool storage : {false, true}) {
    CAPTURE(storage);
    for (const dim3 block : {dim3(128), dim3(96), dim3(32, 4), dim3(8, 4, 2)}) {
      CAPTURE(block.x);
      CAPTURE(block.y);
      CAPTURE(block.z);
      CHECK(count_differences(run_warp(r, in, block, storage), want, "collide_box_warp") == 0);
    }
    // Fewer boxes than one warp: a single warp, most of its lanes inactive.
    const std::vector<box_query> few(in.begin(), in.begin() + 5);
    CHECK(count_differences(run_warp(r, few, dim3(64), storage), run_one_thread(r, few), "collide_box_warp, 5 boxes") ==
          0);
  }
}

/// collide_boxes and course::step's contacts on a course of `envs` envs against the one-thread
/// kernel, bit for bit (`step`: course::step's contacts, else the batch collide_boxes).
void check_library_launches(int envs, bool step) {
  const tg::track_params params = generated_params(envs);
  cuda_rig r(params, 0.6f);
  const tg::track_snapshot t = r.tracks();
  const float margin = course_margin(params);
  const box_maker maker(t, margin);
  std::mt19937 rng(7u);
  buffer<float3> centres(envs);
  buffer<float4> orientations(envs);
  buffer<float2> extents(envs);
  buffer<int> hints(envs);
  buffer<std::uint32_t> flags(envs);
  buffer<float> clearance(envs);
  buffer<float3> nearest(envs), normal(envs);
  buffer<int> side(envs);
  // One box per env, of every kind but the invalid one (course::bind checks the boxes).
  const auto draw = [&](int kinds) {
    std::vector<box_query> in;
    for (int e = 0; e < envs; ++e) in.push_back(maker.make(static_cast<int>(rng() % kinds), e, rng));
    return in;
  };
  const auto upload_boxes = [&](const std::vector<box_query>& in) {
    std::vector<float3> c;
    std::vector<float4> q;
    std::vector<float2> h;
    for (const box_query& x : in) {
      c.push_back(x.b.centre);
      q.push_back(x.b.orientation);
      h.push_back(x.b.half_extents);
    }
    centres.upload(c, r.stream());
    orientations.upload(q, r.stream());
    extents.upload(h, r.stream());
  };

  if (!step) {
    for (int round = 0; round < 6; ++round) {
      CAPTURE(round);
      std::vector<box_query> in = draw(box_maker::kinds);
      const int window = round % 3 == 2 ? 0 : tg::default_tuning::projection_window;
      std::vector<int> h;
      for (box_query& x : in) {
        x.window = window;
        x.trust_margin = 0.0f;  // collide_boxes trusts nothing beyond the half-width
        h.push_back(x.hint);
      }
      upload_boxes(in);
      hints.upload(h, r.stream());
      tg::box_contact_outputs out;
      out.flags = flags.data(), out.clearance = clearance.data(), out.nearest = nearest.data();
      out.normal = normal.data(), out.side = side.data();
      tg::collide_boxes<tg::backend::cuda>(r.course().view().batch(), centres.data(), orientations.data(),
                                           extents.data(), hints.data(), window, out, r.stream().get());
      const std::vector<tg::box_contact> want = run_one_thread(r, in);
      const auto f = flags.download(r.stream());
      const auto hint = hints.download(r.stream());
      const auto c = clearance.download(r.stream());
      const auto p = nearest.download(r.stream()), nn = normal.download(r.stream());
      const auto s = side.download(r.stream());
      int lost = 0, differ = 0;
      for (int e = 0; e < envs; ++e) {
        const auto i = static_cast<std::size_t>(e);
        tg::box_contact got{f[i], c[i], p[i], nn[i], static_cast<tg::border_side>(s[i]), want[i].corner, hint[i]};
        if (!same_contact(got, want[i]) && differ++ == 0)  // the first difference, in full
          FAIL_CHECK("env " << e << ": " << describe(got) << " vs one thread " << describe(want[i]));
        lost += has(want[i].flags, tg::contact_flags::lost) ? 1 : 0;
      }
      CHECK(differ == 0);
      if (window > 0) CHECK(lost > 0);
    }
  }

  else {
    std::vector<box_query> in = draw(box_maker::kinds - 1);
    upload_boxes(in);
    r.course().bind(centres.data(), orientations.data(), extents.data(), r.stream().get());
    for (int step = 0; step < 4; ++step) {
      CAPTURE(step);
      if (step > 0) {
        in = draw(box_maker::kinds - 1);
        upload_boxes(in);
      }
      r.course().step(r.stream().get());
      const tg::contact_snapshot got = r.course().copy_contacts(r.stream().get());
      const tg::progress_snapshot progress = r.progress();
      const tg::track_snapshot now = r.tracks();  // the status the contacts read
      for (int e = 0; e < envs; ++e) {
        const auto i = static_cast<std::size_t>(e);
        in[i].hint = progress.hint[i];
        in[i].window = r.course().view().tracker().window();
        in[i].trust_margin = has(now.status[i], tg::status::valid) ? margin : 0.0f;
      }
      const std::vector<tg::box_contact> want = run_one_thread(r, in);
      int lost = 0, differ = 0;
      for (int e = 0; e < envs; ++e) {
        const auto i = static_cast<std::size_t>(e);
        tg::box_contact c{got.contact_flags[i], got.clearance[i],  got.contact_point[i], got.contact_normal[i],
                          static_cast<tg::border_side>(got.contact_border[i]), want[i].corner, want[i].hint};
        if (!same_contact(c, want[i]) && differ++ == 0)  // the first difference, in full
          FAIL_CHECK("env " << e << ": " << describe(c) << " vs one thread " << describe(want[i]));
        lost += has(want[i].flags, tg::contact_flags::lost) ? 1 : 0;
      }
      CHECK(differ == 0);
      CHECK(lost > 0);
    }
  }
}

TEST_CASE("collide_boxes and course::step's contacts equal collide_box bit for bit") {
  // The launches give each env 8, 4, 2 or 1 lanes by the count (warp_form_lanes_per_env), with
  // these bounds; then one course of each. 77 and 9,001 are not multiples of 32: the last warp
  // is partial.
  for (const std::pair<int, int> bound : {std::pair{1, 8}, std::pair{8192, 8}, std::pair{8193, 4}, std::pair{16384, 4},
                                          std::pair{16385, 2}, std::pair{32768, 2}, std::pair{32769, 1},
                                          std::pair{1 << 30, 1}}) {
    CAPTURE(bound.first);
    CHECK(tg::detail::warp_form_lanes_per_env(bound.first) == bound.second);
  }
  for (const std::pair<int, int> size : {std::pair{77, 8}, std::pair{9001, 4}, std::pair{20000, 2}, std::pair{40000, 1}}) {
    const int envs = size.first, lanes = size.second;
    CAPTURE(envs);
    REQUIRE(tg::detail::warp_form_lanes_per_env(envs) == lanes);
    check_library_launches(envs, false);
    check_library_launches(envs, true);
  }
}

#pragma once
/// @file
/// The library from two translation units of one program: translation_units_second.{cpp,cu}
/// builds gate sequences and a course in its own unit, and this program links only if the
/// headers define nothing twice (no plain kernels, no non-inline functions or variables). Both
/// units' results must be the same bytes. Templated over the backend; instantiated in
/// translation_units_test.cpp + _second.cpp (host) and translation_units_test.cu + _second.cu (CUDA).

#include "../geometry/backend_support.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tg_test {

/// What one unit built, copied to the host.
struct unit_digest {
  int max_gates = 0, num_samples = 0;
  std::vector<int> gate_count;
  std::vector<std::uint32_t> gate_status;
  std::vector<float3> gate_centre;  ///< [E * max_gates]: NaN past each env's count
  std::vector<std::uint32_t> track_status;
  std::vector<float3> first_track;  ///< env 0's centreline samples
};

/// Envs and seed of both units' builds.
inline constexpr int unit_envs = 6;
inline constexpr std::uint64_t unit_seed = 21;

/// The gate-sequence parameters both units build.
inline track_gen::track_params unit_gate_params(std::uint64_t seed) {
  track_gen::track_params p = track_gen::presets::gate_course(unit_envs);
  p.seed = seed;
  return p;
}

namespace {
/// Gate sequences and a course of unit_envs envs from `seed`, with `Policy`. In an unnamed
/// namespace so that each unit has its own copy of this function; the library's templates and
/// kernels it calls are one copy for the program (what the link proves is that both units could
/// define them).
template <class Policy>
unit_digest build_digest(std::uint64_t seed) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  unit_digest d;
  tg::gate_sequences<Policy> gates(unit_gate_params(seed), stream.get());
  gates.generate(stream.get());
  stream.sync();
  const tg::detail::gate_sequence_out o = gates.view().arrays();
  d.max_gates = o.max_gates;
  d.gate_count = B::download(o.count, static_cast<std::size_t>(o.num_envs));
  d.gate_status = B::download(o.status, static_cast<std::size_t>(o.num_envs));
  d.gate_centre = B::download(o.centre, static_cast<std::size_t>(o.num_envs) * static_cast<std::size_t>(o.max_gates));

  tg::track_params tp = tg::presets::track(unit_envs);
  tp.seed = seed;
  tg::course<tg::presets::track_pipeline, Policy> c(tp, 0.6f, stream.get());
  const tg::track_snapshot s = c.copy_tracks(stream.get());
  d.num_samples = s.num_samples;
  d.track_status = s.status;
  d.first_track.assign(s.position.begin(), s.position.begin() + s.num_samples);
  return d;
}
}  // namespace

/// build_digest(unit_seed), run in translation_units_second.cpp (host) or .cu (CUDA).
unit_digest second_unit_digest(track_gen::host_policy);
#if TRACK_GEN_CUDA_COMPILER
unit_digest second_unit_digest(track_gen::cuda_policy);
#endif

TEST_CASE_TEMPLATE_DEFINE("two translation units of one program build the same gate sequences and tracks", Policy,
                          translation_units) {
  namespace tg = track_gen;
  const unit_digest mine = build_digest<Policy>(unit_seed);
  const unit_digest other = second_unit_digest(Policy{});
  const tg::track_params gp = unit_gate_params(unit_seed);
  REQUIRE(static_cast<int>(mine.gate_count.size()) == unit_envs);
  for (int e = 0; e < unit_envs; ++e) {
    CAPTURE(e);
    CHECK((mine.gate_status[static_cast<std::size_t>(e)] & tg::status::valid) != 0u);
    CHECK(mine.gate_count[static_cast<std::size_t>(e)] >= gp.gates.min_gates);
    CHECK(mine.gate_count[static_cast<std::size_t>(e)] <= gp.gates.max_gates);
    CHECK((mine.track_status[static_cast<std::size_t>(e)] & tg::status::valid) != 0u);
  }
  REQUIRE(mine.num_samples > 0);
  REQUIRE(static_cast<int>(mine.first_track.size()) == mine.num_samples);
  CHECK(mine.max_gates == other.max_gates);
  CHECK(mine.num_samples == other.num_samples);
  CHECK(mine.gate_count == other.gate_count);
  CHECK(mine.gate_status == other.gate_status);
  CHECK(same_bytes(mine.gate_centre, other.gate_centre));
  CHECK(mine.track_status == other.track_status);
  CHECK(same_bytes(mine.first_track, other.first_track));
}

}  // namespace tg_test

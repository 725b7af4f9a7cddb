#pragma once
/// @file
/// stages::random_family (random_family.hpp), the generate stage of presets::family_pipeline,
/// against the families' own pipelines, which are the independent reference here:
/// - with the default parameters (family polar, no weights) its tracks are bit for bit those of
///   presets::track_pipeline (which starts with stages::random_polar), and every env's `family`
///   field is polar;
/// - one family for the batch: bit for bit the tracks of the pipeline that starts with that
///   family's stage;
/// - a mix by weights: each env's track is bit for bit the track that the single-family course of
///   its drawn family builds for the same env (so the draw picked the family and every family
///   kept its own random streams); the counts per family are within 5 standard deviations of the
///   weights' binomial expectation; a family of weight 0 is never drawn; the next episode draws
///   again (some envs change family), and a regenerated env matches the single-family courses'
///   regenerated track.
/// Templated over the backend policy; instantiated in family_mix_test.cpp (host) and .cu (CUDA).

#include "backend_support.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace tg_test {

/// The `track` preset's pipeline with `Family` as its generate stage.
template <class Family>
using pipeline_of = track_gen::pipeline<Family, track_gen::stages::polygon_separation, track_gen::stages::catmull_rom,
                                        track_gen::stages::resample, track_gen::stages::frames,
                                        track_gen::stages::checkpoints, track_gen::stages::validate>;

/// Whether env e's samples, gates in use and scalars are the same bits in both snapshots (the
/// gate slots past num_gates keep whatever an earlier, longer track left there).
inline bool same_track(const track_gen::track_snapshot& a, int ea, const track_gen::track_snapshot& b, int eb) {
  const std::size_t n = static_cast<std::size_t>(a.num_samples);
  const std::size_t ia = static_cast<std::size_t>(ea), ib = static_cast<std::size_t>(eb);
  if (a.num_gates[ia] != b.num_gates[ib] || a.length[ia] != b.length[ib] || a.status[ia] != b.status[ib]) return false;
  const std::size_t g = static_cast<std::size_t>(a.num_gates[ia]);
  const auto same = [](const auto& x, std::size_t xa, const auto& y, std::size_t yb, std::size_t count) {
    return std::memcmp(&x[xa], &y[yb], count * sizeof(x[0])) == 0;
  };
  const std::size_t ga = ia * static_cast<std::size_t>(a.max_gates), gb = ib * static_cast<std::size_t>(b.max_gates);
  return same(a.position, ia * n, b.position, ib * n, n) && same(a.normal, ia * n, b.normal, ib * n, n) &&
         same(a.curvature, ia * n, b.curvature, ib * n, n) && same(a.gate_centre, ga, b.gate_centre, gb, g) &&
         same(a.gate_normal, ga, b.gate_normal, gb, g);
}

/// The tracks of `params` built by the pipeline `P` on `Policy`'s backend, after `rounds` masked
/// regenerations of the odd envs (advance: a new episode).
template <class P, class Policy>
track_gen::track_snapshot build(const track_gen::track_params& params, int rounds) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  tg::course<P, Policy> c(params, 0.6f, stream.get());
  std::vector<std::int32_t> odd(static_cast<std::size_t>(params.num_envs));
  for (std::size_t e = 0; e < odd.size(); ++e) odd[e] = static_cast<std::int32_t>(e % 2);
  typename B::template buffer<std::int32_t> mask(odd);
  for (int r = 0; r < rounds; ++r) c.regenerate(mask.get(), true, stream.get());
  return c.copy_tracks(stream.get());
}

TEST_CASE_TEMPLATE_DEFINE("random_family: the default is random_polar bit for bit; one family is that family's pipeline",
                          Policy, family_single) {
  namespace tg = track_gen;
  tg::track_params p = tg::presets::track(scaled(512, 8, 64));
  p.seed = 21;
  const tg::track_snapshot preset = build<tg::presets::family_pipeline, Policy>(p, 1);
  const tg::track_snapshot polar = build<tg::presets::track_pipeline, Policy>(p, 1);
  for (int e = 0; e < p.num_envs; ++e) {
    CAPTURE(e);
    CHECK(same_track(preset, e, polar, e));
    CHECK(preset.family[static_cast<std::size_t>(e)] == static_cast<int>(tg::generator_family::polar));
  }
  for (const tg::generator_family f : {tg::generator_family::bezier, tg::generator_family::hull,
                                      tg::generator_family::voronoi, tg::generator_family::checkpoint}) {
    CAPTURE(tg::generator_family_names[static_cast<int>(f)]);
    tg::track_params q = p;
    q.generator.family = f;
    const tg::track_snapshot via_preset = build<tg::presets::family_pipeline, Policy>(q, 1);
    const tg::track_snapshot direct =
        f == tg::generator_family::bezier    ? build<pipeline_of<tg::stages::bezier_corners>, Policy>(q, 1)
        : f == tg::generator_family::hull    ? build<pipeline_of<tg::stages::hull_corners>, Policy>(q, 1)
        : f == tg::generator_family::voronoi ? build<pipeline_of<tg::stages::voronoi_sites>, Policy>(q, 1)
                                             : build<pipeline_of<tg::stages::checkpoint_walk>, Policy>(q, 1);
    int differ = 0;
    for (int e = 0; e < q.num_envs; ++e) {
      differ += !same_track(via_preset, e, direct, e);
      CHECK(via_preset.family[static_cast<std::size_t>(e)] == static_cast<int>(f));
    }
    CHECK(differ == 0);
    // And they are not the polar tracks (the family changed something).
    int same_as_polar = 0;
    for (int e = 0; e < q.num_envs; ++e) same_as_polar += same_track(via_preset, e, preset, e);
    CHECK(same_as_polar == 0);
  }
  // The track pipeline draws polar tracks only: another family, or a mix, is refused by name.
  for (const bool mix : {false, true}) {
    tg::track_params q = p;
    if (mix) q.generator.weights[static_cast<int>(tg::generator_family::hull)] = 1.0f;
    else q.generator.family = tg::generator_family::checkpoint;
    std::string message;
    try {
      build<tg::presets::track_pipeline, Policy>(q, 0);
    } catch (const std::invalid_argument& e) {
      message = e.what();
    }
    CAPTURE(message);
    CHECK(message.find("track_params.generator selects") != std::string::npos);
    CHECK(message.find(mix ? "by weights the families 'hull'" : "'checkpoint' family") != std::string::npos);
    CHECK(message.find("presets::family_pipeline") != std::string::npos);
  }
}

TEST_CASE_TEMPLATE_DEFINE("random_family: a mix by weights draws per env and episode, each env the track of its family",
                          Policy, family_mix) {
  namespace tg = track_gen;
  tg::track_params p = tg::presets::track(scaled(2048, 8, 128));
  p.seed = 8;
  const int polar = static_cast<int>(tg::generator_family::polar);
  const int voronoi = static_cast<int>(tg::generator_family::voronoi);
  const int checkpoint = static_cast<int>(tg::generator_family::checkpoint);
  const int bezier = static_cast<int>(tg::generator_family::bezier);
  p.generator.weights[bezier] = 1.0f;
  p.generator.weights[polar] = 1.0f;
  p.generator.weights[voronoi] = 2.0f;
  p.generator.weights[checkpoint] = 1.0f;
  p.generator.family = tg::generator_family::hull;  // ignored: the weights decide (hull's is 0)
  const int rounds = 2;
  const tg::track_snapshot mixed = build<tg::presets::family_pipeline, Policy>(p, rounds);
  // The single-family courses of the same envs and rounds.
  std::vector<tg::track_snapshot> single(tg::num_generator_families);
  for (const int f : {polar, bezier, voronoi, checkpoint}) {
    tg::track_params q = p;
    for (float& w : q.generator.weights) w = 0.0f;
    q.generator.family = static_cast<tg::generator_family>(f);
    single[static_cast<std::size_t>(f)] = build<tg::presets::family_pipeline, Policy>(q, rounds);
  }
  const tg::track_snapshot first = build<tg::presets::family_pipeline, Policy>(p, 0);
  int count[tg::num_generator_families] = {};
  int mismatches = 0, redrawn = 0;
  for (int e = 0; e < p.num_envs; ++e) {
    const int f = mixed.family[static_cast<std::size_t>(e)];
    REQUIRE((f == polar || f == bezier || f == voronoi || f == checkpoint));
    ++count[f];
    if (!same_track(mixed, e, single[static_cast<std::size_t>(f)], e)) {
      if (mismatches < 5) MESSAGE("env " << e << " (family " << f << ") differs from its family's course");
      ++mismatches;
    }
    if (e % 2 == 1) redrawn += first.family[static_cast<std::size_t>(e)] != f;
    else CHECK(first.family[static_cast<std::size_t>(e)] == f);  // not regenerated: same draw
  }
  CHECK(mismatches == 0);
  CHECK(redrawn > 0);  // two new episodes of the odd envs drew again
  const double n = p.num_envs, sum = 5.0;
  for (const int f : {polar, bezier, voronoi, checkpoint}) {
    const double share = p.generator.weights[f] / sum;
    const double sigma = std::sqrt(n * share * (1.0 - share));
    CAPTURE(f);
    CAPTURE(count[f]);
    CHECK(std::fabs(count[f] - n * share) < 5.0 * sigma);
  }
  CHECK(count[static_cast<int>(tg::generator_family::hull)] == 0);  // weight 0
}

}  // namespace tg_test

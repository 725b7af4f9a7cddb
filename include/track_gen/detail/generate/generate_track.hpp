#pragma once
/// @file
/// Generation of one environment's track by one block (or the host context): the bounded
/// attempt loop, the fallback ellipse, the store and the rebuilt-env hook. Shared by both backends.

#include <track_gen/track_ref.hpp>
#include <track_gen/detail/generate/ahead.hpp>
#include <track_gen/detail/math.hpp>
#include <track_gen/detail/stages/random_family.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/env_mask.hpp>
#include <track_gen/grid_scope.hpp>
#include <track_gen/params.hpp>
#include <track_gen/status.hpp>
#include <track_gen/user_tracks.hpp>

#include <cstdint>

namespace track_gen::detail {

/// Control points of the fallback ellipse.
inline constexpr int fallback_control_points = 16;

/// Everything a generation launch needs, by value (trivially copyable). `Hook` is called as
/// `on_rebuilt(e, num_gates)` by the block that rebuilt env e (generator.hpp: OnRebuilt).
template <class Hook>
struct generate_args {
  track_params params;
  float checkpoint_spacing;
  int max_gates;
  scratch_layout layout;
  track_arrays tracks;
  Hook on_rebuilt;
  env_mask mask;              ///< [E], nonzero = regenerate; null = every env
  bool advance;               ///< next episode (a new track) instead of rebuilding the same one
  const float3* user_points;  ///< user tracks, concatenated (null: random tracks)
  const int* user_offsets;    ///< [num_user_tracks + 1]
  const user_frame* user_frames;  ///< [num_user_tracks]: origin and status bits of each
  int num_user_tracks;        ///< 0, 1 (shared by every env) or E
  track_source user_source;   ///< control_points or centreline
  const track_params* variants;     ///< per-env parameter sets (null: `params` for every env)
  const std::int32_t* env_variant;  ///< [E] index into `variants`
  unsigned long long* launch_count; ///< incremented once by every generation launch that runs
  grid_samples grid;                ///< the grid-scope stage's buffers (all null without one)
  std::int32_t* grid_pending;       ///< [E] the grid stage took env e's samples this call
  ahead_state ahead;                ///< the tracks built ahead (disabled: ahead.enabled() false)
  /// A copy of these arguments in the backend's memory, with mask = null and advance = false
  /// (the kernels read it; null with backend::host).
  const generate_args* resident;
};

/// Semi-axes (a, b), a = 1.25 b, of the fallback ellipse whose perimeter is the middle of the
/// accepted length range (Ramanujan's first approximation of the perimeter,
/// pi * (3(a+b) - sqrt((3a+b)(a+3b))), S. Ramanujan 1914; 7.0903 b for a = 1.25 b).
TRACK_GEN_HD inline float fallback_minor_axis(const track_params& p) {
  const float target = 0.5f * (p.validate.length_min + p.validate.length_max);
  return target / 7.0903f;
}

/// Sets up `ws` for env e's track of `episode` (every thread of the block calls it).
template <class Hook>
TRACK_GEN_HD void init_workspace(workspace& ws, const generate_args<Hook>& a, int e, std::uint32_t episode,
                                 const track_arrays& out) {
  const int n = a.params.num_samples;
  ws.seed = a.params.seed;
  ws.global_env = a.params.env_offset + static_cast<std::uint32_t>(e);
  ws.episode = episode;
  ws.attempt = 0;
  ws.num_samples = n;
  ws.max_gates = a.max_gates;
  ws.checkpoint_spacing = a.checkpoint_spacing;
  ws.dense_is_spline = false;
  ws.dense_chords = false;
  ws.relaxed = false;
  ws.relax_neighbours = 2;
  ws.dense_budget = 0;
  ws.grid_dense = nullptr;
  ws.valid = false;
  ws.fail_bits = 0;
  ws.trust_radius = 0.0f;
  const std::size_t samples = static_cast<std::size_t>(e) * n;
  const std::size_t gates = static_cast<std::size_t>(e) * a.max_gates;
  ws.out = {out.tangent + samples,     out.normal + samples,          out.curvature + samples,
            out.gate_centre + gates,   out.gate_normal + gates,       out.gate_half_width + gates,
            out.gate_arc_length + gates};
}

/// Stores env e's samples and the fields derived from them (half-widths, arc length, road
/// edges: written once per track, not per attempt). Every thread of the block calls it, after
/// the frames stage wrote the normals of the same samples (same thread per sample).
template <class Ctx>
TRACK_GEN_HD void store_samples(Ctx& ctx, const workspace& ws, const track_arrays& out, int e, float half_width) {
  const int n = ws.num_samples;
  const std::size_t base = static_cast<std::size_t>(e) * n;
  const float spacing = ws.length / static_cast<float>(n);
  for (int k = ctx.rank(); k < n; k += ctx.size()) {
    const std::size_t i = base + k;
    const float3 b = ws.position[k];
    const float3 left = out.normal[i];
    out.position[i] = b;
    out.half_widths[i] = f2(half_width, half_width);
    out.arc_length[i] = static_cast<float>(k) * spacing;
    out.border_left[i] = b + left * half_width;
    out.border_right[i] = b - left * half_width;
  }
}

/// The `family` field of a random track of `Pipeline`: the family stages::random_family drew
/// (recomputed: a pure function of the parameters, seed, env and episode, so the workspace does
/// not carry it), polar for a pipeline that draws with stages::random_polar, the family of a
/// pipeline built on one family's stage, -1 otherwise.
template <class Pipeline>
TRACK_GEN_HD int track_family(const track_params& p, const workspace& ws, std::uint32_t episode) {
  if constexpr (Pipeline::fixed_family >= 0) {
    return Pipeline::fixed_family;
  } else if constexpr (Pipeline::draws_families) {
    return static_cast<int>(draw_family(p.generator, ws.seed, ws.global_env, episode, stages::random_family::stage_id));
  } else {
    return Pipeline::draws_polar ? static_cast<int>(generator_family::polar) : -1;
  }
}

/// Env e's stage parameters: its variant's, else the batch's. A reference that may point to
/// either is a generic address, and the generic address of a kernel argument (`a.params` when
/// `a` is one) gave reads that compute-sanitizer memcheck reported as invalid global reads in a
/// conditional node's branch (H200, CUDA 13.0: the argument buffer is no allocation it knows):
/// on the device the batch's parameters are read from `a.resident`, in device memory.
template <class Hook>
TRACK_GEN_HD const track_params& env_params(const generate_args<Hook>& a, int e) {
  if (a.variants != nullptr) return a.variants[a.env_variant[e]];
  return a.resident != nullptr ? a.resident->params : a.params;
}

/// The arrays `bytes` bytes after those of `x`, field by field: the slots of the tracks built
/// ahead, whose allocation has the batch's layout (one offset in a register instead of a
/// pointer per field: the generation kernels are at their register bound).
TRACK_GEN_HD inline track_arrays shift_arrays(const track_arrays& x, std::ptrdiff_t bytes) {
  track_arrays r;
#define TRACK_GEN_SHIFT(name, type, ext, doc) \
  r.name = reinterpret_cast<type*>(reinterpret_cast<unsigned char*>(x.name) + bytes);
  TRACK_GEN_TRACK_FIELDS(TRACK_GEN_SHIFT)
#undef TRACK_GEN_SHIFT
  return r;
}

/// Builds env e's track into the output arrays (`IntoSlots` and `to_ahead`: its next episode's
/// track into its slot of the tracks built ahead, without the hook). Every thread of the block
/// calls it. Without `IntoSlots` the offsets are constant zeros: the code of a plain build.
template <class Pipeline, bool IntoSlots = false, class Ctx, class Hook>
TRACK_GEN_HD void generate_env(Ctx& ctx, workspace& ws, const generate_args<Hook>& a, int e, bool to_ahead = false) {
  // Stage parameters: the env's variant; batch-wide fields always come from a.params.
  const track_params& p = env_params(a, e);
  if constexpr (!IntoSlots) to_ahead = false;
  const std::uint32_t episode = a.tracks.episode[e] + (a.advance || to_ahead ? 1u : 0u);
  std::ptrdiff_t shift = 0;
  if constexpr (IntoSlots) shift = to_ahead ? a.ahead.offset : 0;
  init_workspace(ws, a, e, episode, shift_arrays(a.tracks, shift));
  bool grid = false;
  if constexpr (Pipeline::has_grid) {
    grid = a.num_user_tracks == 0 && Pipeline::grid_stage::enabled(a.params, p);
    if (grid) ws.grid_dense = a.grid.samples(0, e);
  }

  std::uint32_t st = 0;
  int attempts = 1;
  float3 origin = f3(0.0f, 0.0f, 0.0f);
  if (a.num_user_tracks > 0) {
    const int t = a.num_user_tracks == 1 ? 0 : e;
    origin = a.user_frames[t].origin;
    st |= a.user_frames[t].status;
    const int begin = a.user_offsets[t];
    const int count = a.user_offsets[t + 1] - begin;
    float3* dst = a.user_source == track_source::centreline ? ws.dense : ws.control;
    for (int i = ctx.rank(); i < count; i += ctx.size()) dst[i] = a.user_points[begin + i];
    ws.num_control = count;
    ws.num_dense = count;
    ws.source = a.user_source;
    ctx.sync();
    Pipeline::run_attempt(ctx, ws, p);
    st |= status::user_track;
  } else {
    ws.source = track_source::random;
    const int max_attempts = p.validate.max_attempts;
    for (attempts = 1; attempts <= max_attempts; ++attempts) {
      ws.attempt = static_cast<std::uint32_t>(attempts - 1);
      Pipeline::run_attempt(ctx, ws, p);
      if (ws.valid) break;
    }
    if (attempts > max_attempts) {
      attempts = max_attempts;
      st |= ws.fail_bits;  // why the last random attempt failed
      const float b = fallback_minor_axis(p);
      const float a_axis = 1.25f * b;
      for (int i = ctx.rank(); i < fallback_control_points; i += ctx.size()) {
        const float angle = 2.0f * pi * static_cast<float>(i) / static_cast<float>(fallback_control_points);
        ws.control[i] = f3(a_axis * std::cos(angle), b * std::sin(angle), 0.0f);
      }
      ws.num_control = fallback_control_points;
      ws.dense_budget = 0;  // the ellipse gets samples_per_segment on every segment, whatever the family
      ws.source = track_source::fallback;
      ctx.sync();
      Pipeline::run_attempt(ctx, ws, p);
      st |= status::fallback;
    }
  }
  // The offset again from the workspace's output pointer (init_workspace), which is live
  // here anyway: keeping `shift` across the stages cost the list kernel spills.
  std::ptrdiff_t out_shift = 0;
  if constexpr (IntoSlots)
    out_shift = reinterpret_cast<const unsigned char*>(ws.out.tangent) -
                reinterpret_cast<const unsigned char*>(a.tracks.tangent + static_cast<std::size_t>(e) * ws.num_samples);
  const track_arrays out = shift_arrays(a.tracks, out_shift);
  store_samples(ctx, ws, out, e, p.half_width);
  st |= ws.valid ? status::valid : ws.fail_bits;
  if constexpr (Pipeline::relaxes_centreline) {
    if (ws.valid && ws.relaxed) st |= status::relaxed;
  }
  st |= static_cast<std::uint32_t>(attempts) << status::attempts_shift;
  if (ctx.rank() == 0) {
    out.length[e] = ws.length;
    out.num_gates[e] = ws.num_gates;
    out.status[e] = st;
    out.episode[e] = episode;
    out.origin[e] = origin;
    out.family[e] = a.num_user_tracks > 0 ? -1 : track_family<Pipeline>(p, ws, episode);
    out.trust_radius[e] = ws.valid ? ws.trust_radius : 0.0f;
    if (out_shift == 0) a.on_rebuilt(e, ws.num_gates);  // not into the slots
    if constexpr (Pipeline::has_grid) {
      // The grid stage takes a random track that passed (not the fallback).
      const bool take = grid && ws.source == track_source::random && ws.valid;
      a.grid_pending[e] = take ? 1 : 0;
      a.grid.active[e] = take ? 1 : 0;
      a.grid.moved[e] = 0;
      a.grid.residual[e] = 0.0f;
      const_cast<int*>(a.grid.count)[e] = ws.num_dense;  // the stage reads them; the library writes them here
      const_cast<float*>(a.grid.spacing)[e] = ws.num_dense > 0 ? ws.length / static_cast<float>(ws.num_dense) : 0.0f;
    }
  }
}

/// What a block does with the env of a work item of generate_ahead_kernel (the host backend: its loop).
enum class env_work : int {
  build,   ///< build the env's track (no tracks built ahead)
  serve,   ///< copy the env's track from its slot when the slot holds it, else build it
  refill,  ///< build the env's next-episode track into its slot, unless this call selected the env
  ahead,   ///< build the env's next-episode track into its slot (every env: enable, whole batch)
};

/// For env_work::serve: when env e's slot holds the episode this call wants (ahead_holds),
/// copies it, calls the hook, lists the slot as stale when the call advances, and returns true;
/// otherwise counts a miss and returns false (build it). Every thread of the block calls it.
template <class Ctx, class Hook>
TRACK_GEN_HD bool serve_from_ahead(Ctx& ctx, const generate_args<Hook>& a, int e) {
  const ahead_state& s = a.ahead;
  const bool holds = ahead_holds(s, a.tracks, e, a.advance);
  ctx.sync();  // every thread has read the live episode before the copy overwrites it
  if (!holds) {
    if (ctx.rank() == 0) ahead_count(s.tallies + ahead_missed);
    return false;
  }
  copy_track(ctx, s.tracks, a.tracks, e, a.params.num_samples, a.max_gates);
  if (ctx.rank() == 0) {
    a.on_rebuilt(e, s.tracks.num_gates[e]);
    ahead_count(s.tallies + ahead_served);
    if (a.advance) ahead_mark_stale(s, e);
  }
  return true;
}

/// For env_work::refill of an env that this call also `selected`: its slot is left stale and
/// listed again (its serve reads the slot and writes the live episode that the refill would
/// read); returns whether it was. `selected` comes from the listing, not from the mask, which
/// may alias memory that the serve changes (a progress array).
template <class Ctx, class Hook>
TRACK_GEN_HD bool refill_deferred(const Ctx& ctx, const generate_args<Hook>& a, int e, bool selected) {
  if (!selected) return false;
  if (ctx.rank() == 0) ahead_mark_stale(a.ahead, e);
  return true;
}

/// Env e's share of a masked regeneration (`work`), with one build at most (`selected`: for
/// env_work::refill, whether this call also serves env e). Every thread of the block calls it.
template <class Pipeline, class Ctx, class Hook>
TRACK_GEN_HD void work_on_env(Ctx& ctx, workspace& ws, const generate_args<Hook>& a, int e, env_work work,
                              bool selected = false) {
  if (work == env_work::serve && serve_from_ahead(ctx, a, e)) return;
  if (work == env_work::refill && refill_deferred(ctx, a, e, selected)) return;
  if (work == env_work::refill && ctx.rank() == 0) ahead_count(a.ahead.tallies + ahead_refilled);
  generate_env<Pipeline, true>(ctx, ws, a, e, work == env_work::refill || work == env_work::ahead);
}

/// After the grid-scope stage: env e's relaxed dense samples (when the stage moved them) go
/// through the stages after it; a track that fails validation is rebuilt as it was before the
/// stage (the same random streams: bit for bit). Every thread of the block calls it, for envs
/// with `grid_pending[e]` set.
template <class Pipeline, class Ctx, class Hook>
TRACK_GEN_HD void finish_grid_env(Ctx& ctx, workspace& ws, const generate_args<Hook>& a, int e) {
  const bool moved = a.grid.moved[e] != 0;
  if (moved) {
    const track_params& p = env_params(a, e);
    const std::uint32_t before = a.tracks.status[e];
    init_workspace(ws, a, e, a.tracks.episode[e], a.tracks);
    const int count = a.grid.count[e];
    const float3* relaxed = a.grid.samples(0, e);
    for (int i = ctx.rank(); i < count; i += ctx.size()) ws.dense[i] = relaxed[i];
    ws.num_dense = count;
    ws.dense_is_spline = false;
    ws.source = track_source::centreline;
    ctx.sync();
    Pipeline::run_after_grid(ctx, ws, p);
    std::uint32_t st = before & status::attempts_mask;
    if (ws.valid) {
      st |= status::valid | status::relaxed;
    } else {
      // Rebuild the accepted attempt as the fused kernel made it (it passed then).
      ws.source = track_source::random;
      ws.attempt = static_cast<std::uint32_t>(status::attempts(before) - 1);
      Pipeline::run_attempt(ctx, ws, p);
      st |= (ws.valid ? status::valid : ws.fail_bits) | status::relax_rejected;
    }
    store_samples(ctx, ws, a.tracks, e, p.half_width);
    if (ctx.rank() == 0) {
      a.tracks.length[e] = ws.length;
      a.tracks.num_gates[e] = ws.num_gates;
      a.tracks.status[e] = st;
      a.tracks.trust_radius[e] = ws.valid ? ws.trust_radius : 0.0f;
      a.on_rebuilt(e, ws.num_gates);
    }
  }
  if (ctx.rank() == 0) {
    a.grid_pending[e] = 0;
    a.grid.active[e] = 0;
  }
}

}  // namespace track_gen::detail

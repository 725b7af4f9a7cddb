#pragma once
/// @file
/// Tracks built ahead (generator::enable_ahead): a second set of track arrays holds, for each
/// env, the track of its next episode, so that a masked regeneration copies it instead of
/// building it. The slots are refilled later, many at once, while the same launch serves the
/// regenerated envs. Shared by both backends.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/fields.hpp>
#include <track_gen/track_ref.hpp>

#include <cstddef>
#include <cstdint>

namespace track_gen::detail {

/// Indices into ahead_state::counters.
enum ahead_counter : int {
  ahead_side = 0,          ///< which half of `stale` takes this call's appends (0 or 1)
  ahead_stale_count = 1,   ///< entries appended to that half since the last refill
  ahead_refill_count = 2,  ///< entries of the other half that this call refills (set by the listing)
  ahead_fill_next = 3,     ///< the filling launch's work counter
  ahead_fill_count = 4,    ///< E (what a filling launch fills); the counters before it are zeroed then
  ahead_counters = 5
};

/// Indices into ahead_state::tallies (generator::ahead_tallies reads them).
enum ahead_tally : int { ahead_served = 0, ahead_missed = 1, ahead_refilled = 2, ahead_tallies = 3 };

/// The tracks built ahead and their bookkeeping, in the backend's memory. `tracks.episode` is
/// null when the generator builds nothing ahead. Invariant between calls: slot e holds env e's
/// track of episode tracks.episode[e]; every env whose slot is not its next episode's
/// (live episode + 1) is listed once in the appending half of `stale` or is being refilled.
struct ahead_state {
  track_arrays tracks;            ///< [E] slots, the batch's layout
  int* stale = nullptr;           ///< [2E]: two halves of E entries
  int* counters = nullptr;        ///< [ahead_counters]
  unsigned long long* tallies = nullptr;  ///< [ahead_tallies]: slots served, misses, slots refilled
  std::ptrdiff_t offset = 0;      ///< bytes from each live array to the same field's slots
  int refill_at = 1;              ///< refill once this many slots are stale (or on a miss)
  int num_envs = 0;

  TRACK_GEN_HD bool enabled() const { return tracks.episode != nullptr; }
  /// The half of `stale` that this call appends to, and the half being refilled.
  TRACK_GEN_HD int* appending(int side) const { return stale + static_cast<std::size_t>(side) * num_envs; }
  TRACK_GEN_HD int* refilling(int side) const { return stale + static_cast<std::size_t>(1 - side) * num_envs; }
};

/// Fetch-and-add that the host backend (one thread) and a CUDA block (any thread) share.
TRACK_GEN_HD inline int ahead_fetch_add(int* p, int v) {
#ifdef __CUDA_ARCH__
  return atomicAdd(p, v);
#else
  const int old = *p;
  *p = old + v;
  return old;
#endif
}
TRACK_GEN_HD inline void ahead_count(unsigned long long* p) {
#ifdef __CUDA_ARCH__
  atomicAdd(p, 1ull);
#else
  ++*p;
#endif
}

/// The listing's choice (one thread, once per masked call, before the call's work): refill the
/// stale slots when at least `refill_at` are stale, or any when a listed env's own slot is
/// stale (`listed_stale`: it ended again before its refill); if so, the halves of the stale
/// list swap. Returns how many slots this call refills.
TRACK_GEN_HD inline int ahead_choose_refill(int* counters, int refill_at, bool listed_stale) {
  const int stale = counters[ahead_stale_count];
  const bool refill = stale > 0 && (stale >= refill_at || listed_stale);
  counters[ahead_refill_count] = refill ? stale : 0;
  if (refill) {
    counters[ahead_side] = 1 - counters[ahead_side];
    counters[ahead_stale_count] = 0;
  }
  return refill ? stale : 0;
}

/// Whether env e is in list[0, count), sorted ascending (the listing keeps env order).
TRACK_GEN_HD inline bool listed_env(const int* list, int count, int e) {
  int lo = 0, hi = count;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (list[mid] < e) lo = mid + 1; else hi = mid;
  }
  return lo < count && list[lo] == e;
}

/// Appends env e to the stale half (one thread of the block calls it).
TRACK_GEN_HD inline void ahead_mark_stale(const ahead_state& s, int e) {
  const int side = s.counters[ahead_side];
  s.appending(side)[ahead_fetch_add(s.counters + ahead_stale_count, 1)] = e;
}

/// Whether env e, selected with `advance`, is served from its slot: the slot holds the episode
/// that the env would be built at. Every thread of the block reads the same values.
TRACK_GEN_HD inline bool ahead_holds(const ahead_state& s, const track_arrays& live, int e, bool advance) {
  return s.tracks.episode[e] == live.episode[e] + (advance ? 1u : 0u);
}

/// Whether env e's slot is stale: it does not hold the env's next episode.
TRACK_GEN_HD inline bool ahead_stale(const ahead_state& s, const track_arrays& live, int e) {
  return !ahead_holds(s, live, e, true);
}

/// Copies `words` 4-byte words, the lanes of one group taking every `lanes`-th word: each lane
/// loads `Batch` words before it stores them, so that its loads are in flight together.
template <int Batch>
TRACK_GEN_HD void copy_words(const std::uint32_t* src, std::uint32_t* dst, int words, int lane, int lanes) {
  for (int first = lane; first < words; first += Batch * lanes) {
    std::uint32_t v[Batch];
    TRACK_GEN_UNROLL
    for (int k = 0; k < Batch; ++k) {
      const int w = first + k * lanes;
      if (w < words) v[k] = src[w];
    }
    TRACK_GEN_UNROLL
    for (int k = 0; k < Batch; ++k) {
      const int w = first + k * lanes;
      if (w < words) dst[w] = v[k];
    }
  }
}

/// Copies env e's track from `from` to `to`, every field. Every thread of the block calls it,
/// after a barrier that follows every thread's ahead_holds (the copy overwrites the live
/// episode that it reads). The fields are dealt to the block's warps (field f to warp
/// f mod warps), each copied by its warp's lanes in batches: one loop over the fields, each
/// load waiting for the stores before it (they may alias), took one memory latency per word
/// batch, about 45 us for one track on the H200 (ncu).
template <class Ctx>
TRACK_GEN_HD void copy_track(const Ctx& ctx, const track_arrays& from, const track_arrays& to, int e, int num_samples,
                             int max_gates) {
  const int lanes = ctx.size() < 32 ? ctx.size() : 32;
  const int groups = ctx.size() / lanes;
  const int group = ctx.rank() / lanes;
  const int lane = ctx.rank() % lanes;
  // Gates: the track's own only (the entries past them are unused, and hold leftovers after a
  // build as after a copy: of earlier episodes, or of rejected attempts with more gates).
  const int used_gates = from.num_gates[e] < 0 ? 0 : (from.num_gates[e] > max_gates ? max_gates : from.num_gates[e]);
  int field = 0;
#define TRACK_GEN_COPY_FIELD(name, type, ext, doc)                                                             \
  if (field++ % groups == group) {                                                                             \
    static_assert(sizeof(type) % 4 == 0, "Track fields are copied in 4-byte words.");                         \
    const std::size_t per = elements_per_env(extent::ext, num_samples, max_gates);                             \
    const std::size_t copied = extent::ext == extent::gates ? static_cast<std::size_t>(used_gates) : per;      \
    copy_words<16>(reinterpret_cast<const std::uint32_t*>(from.name + static_cast<std::size_t>(e) * per),      \
                   reinterpret_cast<std::uint32_t*>(to.name + static_cast<std::size_t>(e) * per),              \
                   static_cast<int>(copied * (sizeof(type) / 4)), lane, lanes);                                \
  }
  TRACK_GEN_TRACK_FIELDS(TRACK_GEN_COPY_FIELD)
#undef TRACK_GEN_COPY_FIELD
}

}  // namespace track_gen::detail

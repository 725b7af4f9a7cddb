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

/// Copies element k of every field of extent `Ext` of env e from `from` to `to` (`per`: the
/// elements of one env in such a field), all its loads before its stores: one memory latency
/// for the element's every field, where the loads of a loop over the fields wait for the
/// stores before them (they may alias).
template <extent Ext>
TRACK_GEN_HD void copy_element(const track_arrays& from, const track_arrays& to, int e, std::size_t per, int k) {
  const std::size_t at = static_cast<std::size_t>(e) * per + static_cast<std::size_t>(k);
#define TRACK_GEN_LOAD_FIELD(name, type, ext, doc) \
  [[maybe_unused]] type name{};                   \
  if constexpr (extent::ext == Ext) name = from.name[at];
  TRACK_GEN_TRACK_FIELDS(TRACK_GEN_LOAD_FIELD)
#undef TRACK_GEN_LOAD_FIELD
#define TRACK_GEN_STORE_FIELD(name, type, ext, doc) \
  if constexpr (extent::ext == Ext) to.name[at] = name;
  TRACK_GEN_TRACK_FIELDS(TRACK_GEN_STORE_FIELD)
#undef TRACK_GEN_STORE_FIELD
}

/// Copies env e's track from `from` to `to`, every field. Every thread of the block calls it,
/// after a barrier that follows every thread's ahead_holds (the copy overwrites the live
/// episode that it reads). Thread r copies samples r, r + threads, ... of every sample field
/// (copy_element: one memory latency a round, a single round for N up to the block size), then
/// gates r, r + threads, ... likewise; thread 0 also the env fields. The gate count read at the
/// start arrives while the samples are copied. Dealing whole fields to warps paid one latency a
/// field batch instead, about 6 in a row for the warp with the most (docs/performance-log.md
/// entry 46).
template <class Ctx>
TRACK_GEN_HD void copy_track(const Ctx& ctx, const track_arrays& from, const track_arrays& to, int e, int num_samples,
                             int max_gates) {
  // Gates: the track's own only (the entries past them are unused, and hold leftovers after a
  // build as after a copy: of earlier episodes, or of rejected attempts with more gates).
  const int gates = from.num_gates[e];
  const int used_gates = gates < 0 ? 0 : (gates > max_gates ? max_gates : gates);
  const std::size_t samples_per_env = elements_per_env(extent::samples, num_samples, max_gates);
  for (int k = ctx.rank(); k < num_samples; k += ctx.size()) copy_element<extent::samples>(from, to, e, samples_per_env, k);
  const std::size_t gates_per_env = elements_per_env(extent::gates, num_samples, max_gates);
  for (int g = ctx.rank(); g < used_gates; g += ctx.size()) copy_element<extent::gates>(from, to, e, gates_per_env, g);
  if (ctx.rank() == 0) copy_element<extent::env>(from, to, e, 1, 0);
}

}  // namespace track_gen::detail

#pragma once
/// @file
/// Tracks built ahead (course::enable_ahead): a course that serves its masked regenerations
/// from slots holds the same tracks and progress, bit for bit, as a course that builds them,
/// after every call of a sequence that serves slots, misses stale ones (an env regenerated
/// again before its refill), refills them, rebuilds without advancing and regenerates the whole
/// batch. The statistics count what each call must have done, from an independent replay of
/// the rules on the host (no library code). Templated over the backend; instantiated in
/// ahead_tracks_test.cpp (host) and .cu (CUDA, which adds a replayed graph).

#include "../geometry/backend_support.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tg_test {

/// True when every progress field of the two snapshots holds the same bytes.
inline bool same_progress_bytes(const track_gen::progress_snapshot& a, const track_gen::progress_snapshot& b,
                                std::string* why) {
#define TG_TEST_SAME(name, type, ext, doc)                                                                    \
  if (a.name.size() != b.name.size() ||                                                                       \
      (!a.name.empty() && std::memcmp(a.name.data(), b.name.data(), a.name.size() * sizeof(type)) != 0)) {    \
    *why = #name;                                                                                             \
    return false;                                                                                             \
  }
  TRACK_GEN_PROGRESS_FIELDS(TG_TEST_SAME)
#undef TG_TEST_SAME
  return true;
}

/// How many envs differ between the two snapshots, and the first of them with the field.
inline int differing_envs(const track_gen::track_snapshot& a, const track_gen::track_snapshot& b, int num_envs,
                          std::string* first) {
  int differ = 0;
  for (int e = 0; e < num_envs; ++e) {
    std::string why;
    if (!same_env(a, e, b, e, &why) && differ++ == 0) *first = "env " + std::to_string(e) + ": " + why;
  }
  return differ;
}

/// Every env's track and every progress field of the two courses, bit for bit.
template <class Course, class Stream>
void check_same_courses(const Course& built, const Course& served, Stream stream) {
  std::string first;
  const int differ = differing_envs(built.copy_tracks(stream), served.copy_tracks(stream), built.num_envs(), &first);
  CHECK_MESSAGE(differ == 0, differ << " envs differ, the first " << first);
  std::string why;
  CHECK_MESSAGE(same_progress_bytes(built.copy_progress(stream), served.copy_progress(stream), &why),
                "progress differs in " << why);
}

/// One masked call of the sequence: the selected envs and whether the call advances.
struct ahead_call {
  std::vector<int> envs;
  bool advance = true;
  bool whole_batch = false;  ///< regenerate(env_mask{}) instead of a mask
};

/// The rules of the slots, replayed on the host without the library: returns what a sequence
/// of calls must serve, miss and refill. A slot is "ready" when it holds the live episode + 1,
/// "same" when it holds the live episode (after a copy), "old" otherwise.
struct ahead_model {
  std::vector<std::uint32_t> live, slot;
  std::vector<int> appending, refilling;
  int refill_at;
  unsigned long long served = 0, missed = 0, refilled = 0;

  ahead_model(int num_envs, int refill_at_) : live(num_envs, 0), slot(num_envs, 1), refill_at(refill_at_) {}

  void call(const ahead_call& c) {
    const int n = static_cast<int>(live.size());
    if (c.whole_batch) {
      for (int e = 0; e < n; ++e) {
        live[e] += c.advance ? 1u : 0u;
        slot[e] = live[e] + 1u;
      }
      appending.clear();
      return;
    }
    const std::uint32_t step = c.advance ? 1u : 0u;
    std::vector<char> selected(static_cast<std::size_t>(n), 0);
    bool listed_stale = false;  // a selected env whose slot is not its next episode's
    for (int e : c.envs) {
      selected[static_cast<std::size_t>(e)] = 1;
      listed_stale = listed_stale || slot[e] != live[e] + 1u;
    }
    const int stale = static_cast<int>(appending.size());
    std::vector<int> refill;
    if (stale > 0 && (stale >= refill_at || listed_stale)) {
      refill.swap(appending);
    }
    for (int e : c.envs) {
      if (slot[e] == live[e] + step) {
        ++served;
        if (c.advance) appending.push_back(e);
      } else {
        ++missed;
      }
      live[e] += step;
    }
    for (int e : refill) {
      if (selected[static_cast<std::size_t>(e)] != 0) {
        appending.push_back(e);  // this call's serve writes its live episode: it waits
        continue;
      }
      slot[e] = live[e] + 1u;
      ++refilled;
    }
  }
};

/// The course's counts equal the model's, and the sequence went through every path.
inline void check_counts(const track_gen::ahead_counts& counts, const ahead_model& model) {
  CHECK(counts.served == model.served);
  CHECK(counts.missed == model.missed);
  CHECK(counts.refilled == model.refilled);
  CHECK(model.served > 0);
  CHECK(model.missed > 0);
  CHECK(model.refilled > 0);
}

/// The sequence: random sets (seeded), an env regenerated in consecutive calls (misses), a
/// rebuild without advancing, an empty mask, a whole-batch regeneration in the middle.
inline std::vector<ahead_call> ahead_sequence(int num_envs) {
  std::vector<ahead_call> calls;
  std::uint32_t state = 12345u;
  const auto next = [&state]() {
    state = state * 1664525u + 1013904223u;  // Numerical Recipes' LCG: any fixed sequence will do
    return state >> 8;
  };
  for (int k = 0; k < 14; ++k) {
    ahead_call c;
    const int count = 1 + static_cast<int>(next() % 5u);
    std::vector<char> used(static_cast<std::size_t>(num_envs), 0);
    for (int j = 0; j < count; ++j) {
      const int e = static_cast<int>(next() % static_cast<std::uint32_t>(num_envs));
      if (used[static_cast<std::size_t>(e)] == 0) c.envs.push_back(e);
      used[static_cast<std::size_t>(e)] = 1;
    }
    if (k == 3 || k == 4) c.envs = {7};  // env 7 again before its slot is refilled: a miss
    if (k == 5) c.advance = false;       // the same episode again
    if (k == 6) c.envs.clear();          // nothing selected
    if (k == 9) c.whole_batch = true;
    calls.push_back(c);
  }
  return calls;
}

TEST_CASE_TEMPLATE_DEFINE("tracks built ahead: the same tracks and progress as building them, bit for bit", Policy,
                          ahead_tracks) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  using course_t = tg::course<tg::presets::track_pipeline, Policy>;
  typename B::stream_holder stream;
  const int num_envs = 24;
  const int refill_at = 4;
  tg::track_params params = tg::presets::track(num_envs);
  params.seed = 31;

  course_t built(params, 0.6f, stream.get());
  course_t served(params, 0.6f, stream.get());
  CHECK_FALSE(served.ahead_enabled());
  served.enable_ahead(tg::ahead_options{refill_at}, stream.get());
  CHECK(served.ahead_enabled());
  CHECK(served.ahead_refill_at() == refill_at);

  ahead_model model(num_envs, refill_at);
  typename B::template buffer<std::int32_t> mask(std::vector<std::int32_t>(static_cast<std::size_t>(num_envs), 0));
  const std::vector<ahead_call> calls = ahead_sequence(num_envs);
  for (std::size_t k = 0; k < calls.size(); ++k) {
    const ahead_call& c = calls[k];
    INFO("call " << k);
    if (c.whole_batch) {
      built.regenerate(tg::env_mask{}, c.advance, stream.get());
      served.regenerate(tg::env_mask{}, c.advance, stream.get());
    } else {
      std::vector<std::int32_t> m(static_cast<std::size_t>(num_envs), 0);
      for (int e : c.envs) m[static_cast<std::size_t>(e)] = 1;
      mask.upload(m);
      built.regenerate(mask.get(), c.advance, stream.get());
      served.regenerate(mask.get(), c.advance, stream.get());
    }
    model.call(c);
    check_same_courses(built, served, stream.get());
  }
  check_counts(served.ahead_statistics(stream.get()), model);
}

TEST_CASE_TEMPLATE_DEFINE("enable_ahead: invalid options and a second call are refused with their names", Policy,
                          ahead_errors) {
  namespace tg = track_gen;
  using course_t = tg::course<tg::presets::track_pipeline, Policy>;
  typename backend<Policy>::stream_holder stream;
  course_t c(tg::presets::track(6), 0.6f, stream.get());
  CHECK(c.ahead_statistics(stream.get()).served == 0);
  CHECK(c.ahead_refill_at() == 0);
  CHECK_THROWS_WITH_AS(c.enable_ahead(tg::ahead_options{7}, stream.get()),
                       doctest::Contains("ahead_options.refill_at = 7"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(c.enable_ahead(tg::ahead_options{-1}, stream.get()),
                       doctest::Contains("[1, num_envs = 6]"), std::invalid_argument);
  c.enable_ahead(tg::ahead_options{}, stream.get());
  CHECK(c.ahead_refill_at() >= 1);
  CHECK(c.ahead_refill_at() <= 6);
  CHECK_THROWS_WITH_AS(c.enable_ahead(tg::ahead_options{}, stream.get()), doctest::Contains("already enabled"),
                       std::logic_error);
  // Already enabled comes first, whatever the options.
  CHECK_THROWS_WITH_AS(c.enable_ahead(tg::ahead_options{99}, stream.get()), doctest::Contains("already enabled"),
                       std::logic_error);
}

}  // namespace tg_test

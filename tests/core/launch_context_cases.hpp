#pragma once
// skip_unless / bounded_loop at block scope, through a block context: the body runs only when
// some thread's flag is set, and a bounded loop runs while some thread is active, never more
// than max_windows windows. Expected counts come from the per-thread inputs, computed here.

#include <track_gen/detail/config.hpp>

namespace launch_context_cases {

/// Thread t of a block of `threads` stays active for `t % 7 + base` windows. Returns the windows
/// run by the block's bounded loop (capped at `max_windows`) and counts skip_unless bodies.
template <class Ctx>
TRACK_GEN_HD int run_windows(const Ctx& ctx, int base, int max_windows, int* bodies_run, bool skip_flag) {
  int done = 0;
  const int mine = ctx.rank() % 7 + base;
  const int windows = ctx.bounded_loop(max_windows, [&] { return done < mine; }, [&](int) { ++done; });
  ctx.skip_unless(skip_flag && ctx.rank() == ctx.size() - 1, [&] {
    if (ctx.rank() == 0) ++*bodies_run;
  });
  return windows;
}

/// What the loop must do: the longest-lived thread's window count, capped.
inline int expected_windows(int threads, int base, int max_windows) {
  int longest = 0;
  for (int t = 0; t < threads; ++t) longest = t % 7 + base > longest ? t % 7 + base : longest;
  return longest < max_windows ? longest : max_windows;
}

}  // namespace launch_context_cases

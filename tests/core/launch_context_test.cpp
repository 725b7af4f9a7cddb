// Host block context (one thread): bounded_loop and skip_unless.
#include <doctest/doctest.h>

#include "launch_context_cases.hpp"

#include <track_gen/detail/host/block_context.hpp>

TEST_CASE("host block context: bounded_loop runs while active, at most max_windows; skip_unless follows its flag") {
  const track_gen::detail::host_block_context ctx;
  int bodies = 0;
  // One thread (rank 0) is active for 0 % 7 + base windows.
  CHECK(launch_context_cases::run_windows(ctx, 3, 10, &bodies, true) == launch_context_cases::expected_windows(1, 3, 10));
  CHECK(bodies == 1);
  CHECK(launch_context_cases::run_windows(ctx, 12, 10, &bodies, false) == 10);  // capped
  CHECK(bodies == 1);
  CHECK(launch_context_cases::run_windows(ctx, 0, 10, &bodies, true) == 0);  // never active
  CHECK(bodies == 2);
}

#pragma once
/// @file
/// The launch-context protocol of plugin stages at block scope (scope::block), written once for
/// both block contexts on top of their block-wide `any`.

#include <track_gen/detail/config.hpp>

namespace track_gen::detail {

/// CRTP base: `Context` provides `bool any(bool) const` (a block-wide OR and a barrier).
template <class Context>
struct launch_protocol {
  /// Runs `body()` when `flag` is true in any thread of the block; the decision is
  /// block-uniform (a barrier).
  template <class Body>
  TRACK_GEN_HD void skip_unless(bool flag, Body&& body) const {
    if (self().any(flag)) body();
  }
  /// BOUNDED loop: before each of at most `max_windows` windows, `active()` (per thread) is
  /// OR-reduced over the block, and the loop stops when no thread is active. `body(window)` runs
  /// one window. Returns the number of windows run.
  template <class Active, class Body>
  TRACK_GEN_HD int bounded_loop(int max_windows, Active&& active, Body&& body) const {
    int window = 0;
    for (; window < max_windows; ++window) {
      if (!self().any(active())) break;
      body(window);
    }
    return window;
  }

 private:
  TRACK_GEN_HD const Context& self() const { return static_cast<const Context&>(*this); }
};

}  // namespace track_gen::detail

#pragma once
/// @file
/// The launch-context protocol of plugin stages at block scope (scope::block), written once for
/// both block contexts on top of their block-wide `any`.

#include <track_gen/detail/config.hpp>

namespace track_gen::detail {

/// The rounding of `inclusive_sum`. A CUDA block context of BlockThreads threads scans in tiles
/// of ScanThreads elements (the tiles' totals carried in double, in index order) with the
/// rounding of cub::BlockScan<float, ScanThreads> (its default raking algorithm). With
/// ScanThreads == BlockThreads it calls CUB itself; a block of another size reproduces the
/// order of a scan_tile (64) thread scan, one tile per warp: lane j of the raking warp adds the
/// pair (2j, 2j+1), the 32 pair sums are scanned by the warp's shuffle steps (Kogge-Stone:
/// offsets 1, 2, ..., 16), and each pair is finished from the scan of the pairs before it. So
/// the wide blocks of a masked regeneration build the 64-thread blocks' tracks bit for bit. The
/// host context follows the same order as the 64-thread scan.
inline constexpr int scan_tile = 64;

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

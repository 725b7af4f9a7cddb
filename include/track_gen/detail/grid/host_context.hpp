#pragma once
/// @file
/// The grid launch context of the host backend (grid_scope.hpp): every launch is a loop, flags
/// are read directly.

#include <track_gen/grid_scope.hpp>

namespace track_gen::detail {

class host_grid_context {
 public:
  template <class F>
  void for_each_sample(const grid_samples& s, const F& f) const {
    for (int e = 0; e < s.num_envs; ++e)
      if (s.active[e] != 0)
        for (int i = 0; i < s.count[e]; ++i) f(e, i);
  }

  /// Same windows per env as the CUDA backend: a window runs while some env is active.
  template <class Window>
  void bounded_loop(int max_windows, const grid_samples& s, float tolerance, Window&& window) {
    *s.windows = 0;
    for (int w = 0; w < max_windows; ++w) {
      bool any = false;
      for (int e = 0; e < s.num_envs && !any; ++e) any = s.active[e] != 0;
      if (!any) break;
      window(*this);
      for (int e = 0; e < s.num_envs; ++e) {
        if (s.active[e] == 0) continue;
        s.active[e] = s.residual[e] >= tolerance ? 1 : 0;
        s.residual[e] = 0.0f;
      }
      ++*s.windows;
    }
  }

  template <class Body>
  void skip_unless(const int* flag, Body&& body) {
    if (*flag != 0) body(*this);
  }
};

}  // namespace track_gen::detail

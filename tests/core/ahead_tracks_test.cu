// CUDA instantiation of ahead_tracks_tests.hpp, and the same sequence replayed from CUDA graphs:
// one graph per course holding regenerate(mask, advance = true) (the served course's under the
// SWITCH node of skip::conditional, its listing choosing the refills on the device), the mask
// rewritten between replays.
#include "ahead_tracks_tests.hpp"

#include <track_gen/graph.hpp>

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(ahead_tracks, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(ahead_errors, std::tuple<track_gen::cuda_policy>);

TEST_CASE("tracks built ahead, replayed from a graph under a conditional node: the same tracks as building them") {
  namespace tg = track_gen;
  using policy = tg::cuda_policy;
  using B = backend<policy>;
  using course_t = tg::course<tg::presets::track_pipeline, policy>;
  static_assert(course_t::is_conditional, "the served course records under a conditional node");
  B::stream_holder stream;
  const int num_envs = scaled(600, 4, 64);  // several blocks' worth of listed envs and refills
  const int refill_at = 8;
  tg::track_params params = tg::presets::track(num_envs);
  params.seed = 77;
  course_t built(params, 0.6f, stream.get());
  course_t served(params, 0.6f, stream.get());
  served.enable_ahead(tg::ahead_options{refill_at}, stream.get());
  B::buffer<std::int32_t> mask(std::vector<std::int32_t>(static_cast<std::size_t>(num_envs), 0));

  const auto record = [&](course_t& c) {
    tg::scoped_capture capture(stream.get());
    c.regenerate(mask.get(), true, stream.get());
    return capture.end().instantiate();
  };
  const tg::graph_exec built_graph = record(built);
  const tg::graph_exec served_graph = record(served);

  ahead_model model(num_envs, refill_at);
  std::uint32_t state = 99u;
  ahead_call previous;
  for (int k = 0; k < 12; ++k) {
    INFO("replay " << k);
    ahead_call c;
    if (k == 8) {
      c = previous;  // the envs of replay 7 again: misses, and the refill they trigger
    } else {
      const int count = k == 5 ? 0 : 1 + k * 3;
      std::vector<char> used(static_cast<std::size_t>(num_envs), 0);
      for (int j = 0; j < count; ++j) {
        state = state * 1664525u + 1013904223u;  // Numerical Recipes' LCG
        const int e = static_cast<int>((state >> 8) % static_cast<std::uint32_t>(num_envs));
        if (used[static_cast<std::size_t>(e)] == 0) c.envs.push_back(e);
        used[static_cast<std::size_t>(e)] = 1;
      }
    }
    previous = c;
    std::vector<std::int32_t> m(static_cast<std::size_t>(num_envs), 0);
    for (int e : c.envs) m[static_cast<std::size_t>(e)] = 1;
    mask.upload(m);
    built_graph.launch(stream.get());
    served_graph.launch(stream.get());
    stream.sync();
    model.call(c);
    check_same_courses(built, served, stream.get());
  }
  check_counts(served.ahead_statistics(stream.get()), model);
}
}  // namespace tg_test

// Masked regenerations that list more envs than the list kernels' grid (as many blocks as fit on
// the GPU at once: a few hundred to a few thousand on the GPUs we build for). Block b builds list
// entry b and the entries past the grid come from a counter, one at a time (take_items in
// detail/generate/kernels.cuh). Every listed env must advance by exactly one episode, and the
// tracks and progress must be, bit for bit, those of a second course from the same seed that
// regenerates the same envs (the whole batch, by generate_kernel, when every env is listed). With
// tracks built ahead, the slots served, missed and refilled must be those of the host replay of
// their rules (ahead_tracks_tests.hpp): a dropped fill or refill item leaves a slot stale.
#include "ahead_tracks_tests.hpp"

namespace tg_test {
TEST_CASE("a masked regeneration of more envs than the list kernel's grid rebuilds every env, bit for bit") {
  namespace tg = track_gen;
  using policy = tg::cuda_policy;
  using B = backend<policy>;
  using course_t = tg::course<tg::presets::track_pipeline, policy>;
  B::stream_holder stream;
  const int num_envs = 8192;  // above the grid of either launch shape on a GPU of up to 146 SMs
  for (const bool ahead : {false, true}) {
    INFO((ahead ? "tracks built ahead (generate_ahead_kernel)" : "built (generate_list_kernel)"));
    tg::track_params params = tg::presets::track(num_envs);
    params.seed = 5;
    course_t whole(params, 0.6f, stream.get());
    course_t masked(params, 0.6f, stream.get());
    if (ahead) masked.enable_ahead(tg::ahead_options{}, stream.get());
    // What the slots must have done (the host replay of their rules): every slot served by the
    // first call, then misses and a refill of the others (more items than the grid again).
    ahead_model model(num_envs, ahead ? masked.ahead_refill_at() : 1);
    // Every env, then every third: with tracks built ahead the first call serves every slot and
    // the second finds its slots stale (built as without them, and the refill of the others).
    for (const int every : {1, 3}) {
      INFO("every " << every << "th env");
      std::vector<std::int32_t> m(static_cast<std::size_t>(num_envs), 0);
      for (int e = 0; e < num_envs; e += every) m[static_cast<std::size_t>(e)] = 1;
      B::buffer<std::int32_t> mask(m);
      // The reference: a whole-batch call when every env is listed; else the same mask (through
      // the list kernel too: the episode count below catches an env left out, or built twice in a
      // row).
      if (every == 1) {
        whole.regenerate(tg::env_mask{}, true, stream.get());
      } else {
        whole.regenerate(mask.get(), true, stream.get());
      }
      masked.regenerate(mask.get(), true, stream.get());
      check_same_courses(whole, masked, stream.get());
      ahead_call call;
      for (int e = 0; e < num_envs; e += every) call.envs.push_back(e);
      model.call(call);
      const tg::track_snapshot t = masked.copy_tracks(stream.get());
      int rebuilt = 0;
      for (int e = 0; e < num_envs; e += every) rebuilt += t.episode[static_cast<std::size_t>(e)] == (every == 1 ? 1u : 2u);
      CHECK(rebuilt == (num_envs + every - 1) / every);
    }
    if (ahead) check_counts(masked.ahead_statistics(stream.get()), model);
  }
}
}  // namespace tg_test

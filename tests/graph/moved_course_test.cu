// A course is move-only: what it owns for captures (storage, library body streams) goes with
// the move. Destroying the moved-from course, or the course a move assignment overwrote, must
// release nothing the moved-to course still uses, and nothing twice (a handle released twice
// can destroy an unrelated object that was given the same handle in between).
#include "graph_support.hpp"

namespace graph_test {

namespace {

/// Captures one iteration of `c` on `s` (the policy's mode), replays it `replays` times with
/// `masks` and runs the same calls eagerly on `ref`; then compares both courses bit for bit.
template <class Policy>
void capture_and_compare(course_t<Policy>& c, course_t<Policy>& ref, int replays, std::uint32_t seed) {
  const int num_envs = c.num_envs();
  stream_holder s, s_ref;
  agents agents_c(num_envs), agents_ref(num_envs);
  c.bind(agents_c.positions());
  ref.bind(agents_ref.positions());
  device_buffer<std::int32_t> mask_c(num_envs), mask_ref(num_envs);
  // Same starting state (both fresh from construction).
  check_same_state(c, s, ref, s_ref);

  tg::graph g;
  {
    user_capture cap(s, capture_mode_of<Policy>());
    iteration(c, agents_c, mask_c.get(), s);
    g = cap.end();
  }
  tg::graph_exec exec = g.instantiate();
  const pinned_buffer<std::int32_t> masks = pinned_masks(replays, num_envs, seed);
  replay_against_eager(exec, masks, replays, num_envs, mask_c.get(), s, mask_ref.get(), s_ref, [&] {
    iteration(ref, agents_ref, mask_ref.get(), s_ref);
  });
  check_same_state(c, s, ref, s_ref);
}

}  // namespace

TEST_CASE_TEMPLATE("a moved course keeps capturing correctly after the moved-from and overwritten courses are gone", Policy,
                   tg::policy<tg::capture::global, tg::skip::conditional, tg::ownership::anchored>,
                   tg::policy<tg::capture::global, tg::skip::conditional, tg::ownership::owning>,
                   tg::policy<tg::capture::thread_local_, tg::skip::conditional, tg::ownership::borrowed>,
                   tg::policy<tg::capture::relaxed, tg::skip::unconditional, tg::ownership::anchored>) {
  INFO("policy: " << policy_name<Policy>());
  preload_test_kernels();
  const int num_envs = 256;
  const int replays = track_gen_test::scaled(40, 10);
  tg::track_params params = tg::presets::track(num_envs);
  params.seed = 606;
  stream_holder s;

  // Move construction; the moved-from course is destroyed, and whatever it queued is released
  // (the reference is built first, so that nothing recycles a released handle before the capture).
  {
    course_box<Policy> ref = make_course<Policy>(params, 0.6f, s);
    course_box<Policy> first = make_course<Policy>(params, 0.6f, s);
    course_t<Policy> moved(std::move(*first.course));
    first.course.reset();
    tg::release_deferred();
    capture_and_compare<Policy>(moved, *ref, replays, 1u);
  }

  // Move assignment over a live course: the overwritten course's resources go, the moved ones stay.
  course_box<Policy> ref = make_course<Policy>(params, 0.6f, s);
  course_box<Policy> target = make_course<Policy>(params, 0.6f, s);
  course_box<Policy> source = make_course<Policy>(params, 0.6f, s);
  *target.course = std::move(*source.course);
  source.course.reset();
  tg::release_deferred();
  capture_and_compare<Policy>(*target, *ref, replays, 2u);

  // Everything goes (the moved-to course, then the moved-from one); courses built afterwards
  // may be handed recycled handles, and a second release must not touch them.
  {
    course_t<Policy> last = std::move(*target.course);
  }
  target.course.reset();
  tg::release_deferred();
  course_box<Policy> fresh = make_course<Policy>(params, 0.6f, s);
  course_box<Policy> fresh_ref = make_course<Policy>(params, 0.6f, s);
  tg::release_deferred();
  capture_and_compare<Policy>(*fresh, *fresh_ref, replays, 3u);
}

}  // namespace graph_test

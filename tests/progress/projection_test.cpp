// Projection, lateral offset and off-track on the host backend (test bodies: projection_cases.hpp).
#include "projection_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::projection_lateral_and_off_track, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::projection_window_vs_full, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::projection_jump_in_step, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::projection_reset_step_ties, std::tuple<track_gen::host_policy>);

namespace progress_test {

// track_ref::scan_segments' contract, which course_ref::step_warp relies on: 32 strided scans
// (first = 0 .. 31, stride 32), reduced to the least (distance2, segment), find exactly what one
// scan of all N segments finds (segment, t and distance2, bit for bit). Host backend: the same
// decomposition the warp runs, with its reduction written out here.
// N = 302 as well: scan_segments loads 4 segments at a time, and 302 leaves a remainder after
// those batches for the full scan (302 mod 4) and for each stride-32 scan (302 mod 128), so a
// remainder left out changes one side and not the other.
TEST_CASE("32 strided scans of a track, reduced to the least (distance, segment), equal one full scan") {
  const circle c{50.0};
  const stadium st{75.0, 10.0};
  for (const int samples : {512, 302}) {
    CAPTURE(samples);
    rig<track_gen::host_policy> r(user_track_params(2, samples), 10.0f, centreline({c.polyline(2000), st.polyline(2000)}));
    const tg::track_snapshot t = r.tracks();
    require_valid_user_tracks(t);
    const tg::course_ref view = r.course().view();
    lcg rng{2024u};
    int ties = 0;
    for (int e = 0; e < 2; ++e) {
      const tg::track_ref tr = view.track(e);
      const int n = tr.num_samples();
      for (int i = 0; i < 600; ++i) {
        float3 p;
        if (i % 3 == 0) {
          p = tr.position(i % n);  // on a sample: distance 0 to two segments
        } else {
          p = v3(120.0 * (rng.next() - 0.5), 60.0 * (rng.next() - 0.5), 2.0 * (rng.next() - 0.5));
        }
        tg::nearest_segment full;
        tr.scan_segments(p, 0, 1, full);
        tg::nearest_segment lanes[32];
        for (int l = 0; l < 32; ++l) tr.scan_segments(p, l, 32, lanes[l]);
        tg::nearest_segment best = lanes[0];
        for (int l = 1; l < 32; ++l) {
          const tg::nearest_segment& o = lanes[l];
          if (o.distance2 < best.distance2 || (o.distance2 == best.distance2 && o.segment < best.segment)) best = o;
        }
        INFO("env " << e << " point " << i << ": full scan segment " << full.segment << ", lanes " << best.segment);
        CHECK(best.segment == full.segment);
        CHECK(same_bits(best.t, full.t));
        CHECK(same_bits(best.distance2, full.distance2));
        // A tie: another segment, in another lane, as near as the one found.
        for (int l = 0; l < 32; ++l)
          ties += lanes[l].segment != full.segment && lanes[l].distance2 == full.distance2 ? 1 : 0;
      }
    }
    CHECK(ties > 0);  // the segment-order tie rule was needed
  }
}

}  // namespace progress_test

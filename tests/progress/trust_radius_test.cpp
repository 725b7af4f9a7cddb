// The per-track trust radius on the host backend (test bodies: trust_radius_cases.hpp).
#include "trust_radius_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::trust_radius_random_tracks, std::tuple<track_gen::host_policy>);

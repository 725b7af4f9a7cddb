// Laps and in-order gates on the host backend (test bodies: laps_cases.hpp).
#include "laps_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::laps_one_metre_per_step, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::laps_fast_agent, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::laps_backwards_then_forwards, std::tuple<track_gen::host_policy>);

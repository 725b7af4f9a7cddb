// spawn_pose, gates_after and progress_tracker_ref::spawn on the host backend (test bodies: spawn_cases.hpp).
#include "spawn_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::spawn_circle, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::spawn_generated, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::spawn_reset_and_invalid, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::spawn_one_gate, std::tuple<track_gen::host_policy>);

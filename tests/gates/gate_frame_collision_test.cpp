// Gate-frame collision on the host backend (test bodies: gate_frame_collision_cases.hpp).
#include "gate_frame_collision_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(gate_frame_test::gate_frame_single, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_frame_test::gate_frame_closed_forms, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_frame_test::gate_frame_invalid, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_frame_test::gate_frame_batch, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_frame_test::gate_frame_arguments, std::tuple<track_gen::host_policy>);

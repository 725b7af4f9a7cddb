// NaN/Inf positions on the host backend (test bodies: invalid_input_cases.hpp).
#include "invalid_input_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::invalid_input_positions, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::invalid_input_gate_state, std::tuple<track_gen::host_policy>);

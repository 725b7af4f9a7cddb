// Gate rules on the CUDA backend (test bodies: gates_cases.hpp).
#include "gates_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::gates_cutting_and_oscillation, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::gates_crosses_gate_direct, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::gates_opening_on_a_straight, std::tuple<track_gen::cuda_policy>);

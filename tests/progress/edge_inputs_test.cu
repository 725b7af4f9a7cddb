// Runtime device functions at the edges of their input ranges, in CUDA kernels (edge_inputs_cases.hpp).
#include "edge_inputs_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::edge_inputs, std::tuple<track_gen::cuda_policy>);

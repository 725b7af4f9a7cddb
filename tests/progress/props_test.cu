// Props along the road edges on the CUDA backend, in a kernel (test bodies: props_cases.hpp).
#include "props_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::border_props, std::tuple<track_gen::cuda_policy>);

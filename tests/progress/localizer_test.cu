// localize, centreline_at and heading_error on the CUDA backend, in kernels (test bodies: localizer_cases.hpp).
#include "localizer_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::localizer_known_tracks, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::localizer_generated_tracks, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::localizer_centreline_at, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::localizer_heading_error, std::tuple<track_gen::cuda_policy>);

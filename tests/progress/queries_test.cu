// The batch queries (queries.hpp) on the CUDA backend, one kernel per query (test bodies: queries_tests.hpp).
#include "queries_tests.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::queries_localize_observe, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::queries_collide, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::queries_sdf_discs, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::queries_profile_props, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::queries_spawn, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::queries_arguments, std::tuple<track_gen::cuda_policy>);

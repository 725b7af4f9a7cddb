// The batch queries (queries.hpp) on the host backend (test bodies: queries_tests.hpp).
#include "queries_tests.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::queries_localize_observe, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::queries_collide, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::queries_sdf_discs, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::queries_profile_props, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::queries_spawn, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::queries_arguments, std::tuple<track_gen::host_policy>);

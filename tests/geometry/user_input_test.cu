// CUDA instantiation of user_input_tests.hpp.
#include "user_input_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(degenerate_user_tracks, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(close_user_points, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(bad_user_tracks, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(bad_user_kind, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(bad_params, std::tuple<track_gen::cuda_policy>);
}  // namespace tg_test

// Host instantiation of ahead_tracks_tests.hpp.
#include "ahead_tracks_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(ahead_tracks, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(ahead_errors, std::tuple<track_gen::host_policy>);
}  // namespace tg_test

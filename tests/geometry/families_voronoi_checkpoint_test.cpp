// Host instantiation of families_voronoi_checkpoint_tests.hpp.
#include "families_voronoi_checkpoint_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(family_sweeps, std::tuple<track_gen::host_policy>);
}  // namespace tg_test

// Host instantiation of coexisting_courses_tests.hpp.
#include "coexisting_courses_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(coexisting_courses, std::tuple<track_gen::host_policy>);
}  // namespace tg_test

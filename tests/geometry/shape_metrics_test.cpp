// measure_shape on the host backend (test bodies: shape_metrics_cases.hpp).
#include "shape_metrics_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(shape_test::shape_circle, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(shape_test::shape_known, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(shape_test::shape_generated, std::tuple<track_gen::host_policy>);

// Course step outputs (gate events, box contacts) on the host backend (test bodies: step_events_cases.hpp).
#include "step_events_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(progress_test::step_events_scripted_path, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::step_events_dense_gates, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::step_events_gate_course, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::step_events_clearing, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::step_events_contacts, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(progress_test::step_events_bind_checks, std::tuple<track_gen::host_policy>);

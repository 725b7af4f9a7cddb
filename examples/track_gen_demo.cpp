/// @file
/// track_gen demo, C++-only build (no CUDA): the host backend. The demo itself is in
/// demo_driver.hpp; track_gen_demo.cu is the same program with the GPU path.

#include "demo_driver.hpp"

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  namespace ex = track_gen_examples;
  ex::demo_options o;
  if (!ex::parse_options(argc, argv, o)) return 2;
  try {
    ex::host_executor host(o.force_host ? "--host given" : "built without CUDA");
    return ex::run_demo(o, host);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "track_gen_demo: %s\n", e.what());
    return 1;
  }
}

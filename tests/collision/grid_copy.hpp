#pragma once
/// @file
/// A per-env grid's headers and texels (sdf.hpp, heightfield.hpp: detail/field_bake.hpp's
/// grid_field) copied to the host, for the references of sdf_cases.hpp and heightfield_cases.hpp.

#include <track_gen/detail/field_bake.hpp>
#include <track_gen/detail/ops.hpp>

#include <cstddef>
#include <vector>

namespace grid_test {

namespace tg = track_gen;

/// The headers [E] and texels [E R^2] of a field, on the host.
struct grid_copy {
  std::vector<tg::grid_header> headers;
  std::vector<float> texels;
  int resolution = 0;
  float texel(int e, int i, int j) const { return texels[(static_cast<std::size_t>(e) * resolution + j) * resolution + i]; }
  const tg::grid_header& header(int e) const { return headers[static_cast<std::size_t>(e)]; }
};

/// Copies `field`'s grids on `stream` (a test stream with get()) and waits for them.
template <template <class> class Field, class Policy, class Stream>
grid_copy download_grid(const Field<Policy>& field, const Stream& stream) {
  using ops = typename tg::detail::backend_ops<typename Policy::backend_type>::type;
  auto v = field.view();
  grid_copy c;
  c.resolution = v.resolution();
  c.headers.resize(static_cast<std::size_t>(v.num_envs()));
  c.texels.resize(static_cast<std::size_t>(v.num_envs()) * v.resolution() * v.resolution());
  ops::copy_to_host_async(c.headers.data(), &v.header(0), c.headers.size() * sizeof(tg::grid_header), stream.get());
  ops::copy_to_host_async(c.texels.data(), v.texels(0), c.texels.size() * sizeof(float), stream.get());
  ops::synchronize(stream.get());
  return c;
}

}  // namespace grid_test

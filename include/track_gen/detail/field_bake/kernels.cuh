#pragma once
/// @file
/// The bake kernel of the per-env grids (detail/field_bake.hpp: sdf.hpp, heightfield.hpp): one
/// block per selected env runs the field's bake_field_env with the CUDA block context, its tree
/// of bounding circles in shared memory. Included by sdf.hpp and heightfield.hpp in translation
/// units compiled by nvcc (through detail/field_bake.hpp).

#include <track_gen/detail/cuda/block_context.cuh>
#include <track_gen/detail/cuda/error.hpp>
#include <track_gen/detail/field_bake.hpp>
#include <track_gen/policy.hpp>

#include <cuda_runtime_api.h>

namespace track_gen::detail {

/// Block b bakes the env sel.env(b) (none: it returns before any barrier, so the whole block
/// leaves). The views are copied to locals first, as query_kernel does (a member call on a kernel
/// argument misread parameter space inside a WHILE body, progress/kernels.cuh).
template <int BlockThreads, class Field>
__global__ void __launch_bounds__(BlockThreads) field_bake_kernel(const track_batch_ref tracks, const Field field,
                                                                   const bake_selection sel) {
  using context = cuda_block_context<BlockThreads>;
  __shared__ typename context::TempStorage temp;
  __shared__ grid_bake_shared sh;
  const track_batch_ref local_tracks = tracks;
  const Field local_field = field;
  const int e = sel.env(static_cast<int>(blockIdx.x), local_field.num_envs());
  if (e < 0) return;
  const context ctx(temp);
  bake_field_env(ctx, sh, local_tracks.track(e), local_field, e);
}

/// The CUDA backend of a bake: one launch of field_bake_kernel on `stream` (recorded into its
/// capture when it is capturing), sel.blocks(E) blocks.
template <class Field>
struct field_baker<backend::cuda, Field> {
  /// Loads the kernel now (CUDA's lazy loading would otherwise load it at its first launch,
  /// possibly inside a capture).
  static void prepare() {
    cudaFuncAttributes attr{};
    throw_on_cuda_error(cudaFuncGetAttributes(&attr, field_bake_kernel<field_bake_threads, Field>),
                        field_bake_traits<Field>::loading);
  }
  static void run(const track_batch_ref& tracks, const Field& field, const bake_selection& sel, ::cuda::stream_ref stream) {
    const int blocks = sel.blocks(field.num_envs());
    if (blocks <= 0) return;
    field_bake_kernel<field_bake_threads, Field>
        <<<static_cast<unsigned>(blocks), field_bake_threads, 0, stream.get()>>>(tracks, field, sel);
    throw_on_cuda_error(cudaGetLastError(), field_bake_traits<Field>::launching);
  }
};

}  // namespace track_gen::detail

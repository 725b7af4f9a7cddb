#pragma once
/// @file
/// The fused generation kernel: one block builds one environment's track, every stage in
/// shared memory.

#include <track_gen/detail/cuda/block_context.cuh>
#include <track_gen/detail/generate/generate_track.hpp>

namespace track_gen::detail {

/// Block e builds env e's track (`Finish = false`), or, after a grid-scope stage, finishes env
/// e (`Finish = true`, finish_grid_env). Every thread of the block calls it. `ScanThreads`: the
/// block size whose tracks it builds bit for bit (cuda_block_context).
/// `Ahead`: the block works on env e as `work` says (work_on_env: tracks built ahead);
/// otherwise it builds it.
template <class Pipeline, int BlockThreads, bool Finish, class Hook, int ScanThreads = BlockThreads, bool Ahead = false>
__device__ void generate_block(const generate_args<Hook>& args, int e, env_work work = env_work::build,
                               bool selected = false) {
  using context = cuda_block_context<BlockThreads, ScanThreads>;
  __shared__ typename context::TempStorage temp;
  extern __shared__ __align__(16) unsigned char scratch[];
  context ctx{temp};
  workspace ws;
  ws.bind_scratch(scratch, args.layout);
  if constexpr (Finish) {
    finish_grid_env<Pipeline>(ctx, ws, args, e);
  } else if constexpr (Ahead) {
    work_on_env<Pipeline>(ctx, ws, args, e, work, selected);
  } else {
    (void)work;
    generate_env<Pipeline>(ctx, ws, args, e);
  }
}

/// Blocks of a generation kernel that must fit on one SM (`__launch_bounds__`' second argument):
/// Pipeline::generate_threads_per_sm, 896 threads unless a stage asks for fewer, so at most 72
/// registers a thread (65,536 / 896). Left to itself nvcc gave the track pipeline's kernel 94
/// registers after a change to the polygon separation stage, 10 blocks of 64 per SM instead of 14, and
/// generation 12 % slower on the H200 (docs/performance-log.md, entry 13); at 72 it needs no
/// spills. stages::repulsive_growth asks for 512 (128 registers): its scratch lets no more
/// blocks share an SM, and at 72 its pair loop spilled.
template <class Pipeline, int BlockThreads>
inline constexpr int generate_min_blocks_per_sm =
    Pipeline::generate_threads_per_sm / BlockThreads > 0 ? Pipeline::generate_threads_per_sm / BlockThreads : 1;

/// The fused generation kernel of pipelines without a grid-scope stage: the arguments by value
/// (they stay in the constant bank: measured on the H200, copying them per thread from device
/// memory, as generate_resident_kernel does, made regenerating 1M tracks 2.1x slower), and
/// read there even by the stages that nvcc keeps out of line, which take them by reference
/// (TRACK_GEN_GRID_CONSTANT; docs/performance-log.md, entry 38). Those reads go through the
/// argument's generic address, which compute-sanitizer memcheck reports as invalid when the
/// kernel runs inside a WHILE body (docs/kernel-argument.md: the plain runs there were correct);
/// the library records these kernels in IF / SWITCH nodes only (tests/graph/family_replay_test.cu),
/// and the grid-scope pipelines, whose kernels run in WHILE bodies, read their arguments from a
/// copy in device memory instead (generate_resident_kernel).
template <class Pipeline, int BlockThreads, class Hook>
__global__ void __launch_bounds__(BlockThreads, generate_min_blocks_per_sm<Pipeline, BlockThreads>)
    generate_kernel(const TRACK_GEN_GRID_CONSTANT generate_args<Hook> args) {
  const int e = static_cast<int>(blockIdx.x);
  if (e == 0 && threadIdx.x == 0) ++*args.launch_count;  // one writer per launch; launches are stream-ordered
  if (!args.mask[e]) return;  // uniform per block
  generate_block<Pipeline, BlockThreads, false>(args, e);
}

/// The blocks of a list kernel take work items [0, n), calling `work(i)` with every thread of
/// the block for each: block b takes item b first, with no atomic (a replay with a few done envs,
/// the usual case, then takes none: each atomic was one more round trip to L2 on the way in and
/// one on the way out, docs/performance-log.md entry 46), then, while items past the grid are
/// left, the next of them from `*next` (zero at launch) one at a time.
template <class Work>
__device__ void take_items(int* next, int n, Work&& work) {
  __shared__ int taken;
  const int grid = static_cast<int>(gridDim.x);
  int i = static_cast<int>(blockIdx.x);
  while (i < n) {
    work(i);
    if (n <= grid) break;  // uniform: no item past the grid
    __syncthreads();  // the item is done with the block's shared memory, every thread has read `taken`
    if (threadIdx.x == 0) taken = grid + atomicAdd(next, 1);
    __syncthreads();
    i = taken;
  }
}

/// Which counts of listed envs a generate_list_kernel launch builds: the wide launch takes
/// 0 < count <= wide_limit, the narrow one every other count (it counts the call when nothing
/// was selected, so that an unconditional replay counts one launch, as before the two shapes).
struct list_share {
  int wide_limit;  ///< 0: one launch shape only (the narrow one takes every count)
  bool wide;
};

/// Masked regeneration of pipelines without a grid-scope stage, after compaction: `list[0, *count)`
/// holds the envs to rebuild (select.cuh). A fixed grid that fills the GPU once, so a replay with
/// few done envs launches a few hundred blocks, not one per env, and the cost follows the number of
/// done envs. Each block builds entry blockIdx.x of the list, then takes the next entry past the
/// grid from `*next` when it has built its track (take_items): a track needs 1 to 16 attempts, and
/// with a fixed round-robin share per block the all-done regeneration of 1M envs took 20.5 ms (ncu)
/// against 18.3 ms for one block per env; with the counter, about 18.0 ms (H200, inferred from the
/// replay figures: docs/performance-log.md entry 9). Two launch shapes share the counts (`share`):
/// wide blocks for a few envs (latency), narrow ones for many (throughput); the wide blocks build
/// the narrow ones' tracks bit for bit (`ScanThreads`: the narrow block size).
template <class Pipeline, int BlockThreads, class Hook, int ScanThreads = BlockThreads>
__global__ void __launch_bounds__(BlockThreads, generate_min_blocks_per_sm<Pipeline, BlockThreads>)
    generate_list_kernel(const TRACK_GEN_GRID_CONSTANT generate_args<Hook> args, const int* list, const int* count, int* next, list_share share) {
  const int n = *count;
  const bool wide_count = n > 0 && n <= share.wide_limit;
  if (wide_count != share.wide) return;  // uniform: the other launch shape takes this count
  if (blockIdx.x == 0 && threadIdx.x == 0) ++*args.launch_count;  // one writer per launch
  if (static_cast<int>(blockIdx.x) >= n) return;  // uniform: no item would be left for this block
  take_items(next, n, [&](int i) { generate_block<Pipeline, BlockThreads, false, Hook, ScanThreads>(args, list[i]); });
}

/// The list kernel of a generator with tracks built ahead (generator::enable_ahead), one launch
/// shape, on the same fixed grid: work items [0, *count) serve the listed envs from their slots
/// (or build them), items past them refill the stale slots that the listing chose
/// (ahead_state), all in one launch. With `list` null it fills every env's slot instead
/// (items [0, *count) are the envs themselves; not counted as a generation launch). A separate
/// kernel, instantiated only by enable_ahead, so that the other list kernels keep their code.
template <class Pipeline, int BlockThreads, class Hook, int ScanThreads = BlockThreads>
__global__ void __launch_bounds__(BlockThreads, generate_min_blocks_per_sm<Pipeline, BlockThreads>)
    generate_ahead_kernel(const TRACK_GEN_GRID_CONSTANT generate_args<Hook> args, const int* list, const int* count, int* next) {
  const bool fill = list == nullptr;
  const int served = fill ? 0 : *count;
  const int n = fill ? *count : served + args.ahead.counters[ahead_refill_count];
  if (!fill && blockIdx.x == 0 && threadIdx.x == 0) ++*args.launch_count;  // one writer per launch
  if (static_cast<int>(blockIdx.x) >= n) return;  // uniform: no item would be left for this block
  take_items(next, n, [&](int i) {
    const bool listed = i < served;
    const env_work work = fill ? env_work::ahead : (listed ? env_work::serve : env_work::refill);
    const int e = fill ? i : (listed ? list[i] : args.ahead.refilling(args.ahead.counters[ahead_side])[i - served]);
    // A refilled env that this call also serves: from the list (sorted), not from the mask.
    const bool selected = work == env_work::refill && listed_env(list, served, e);
    generate_block<Pipeline, BlockThreads, false, Hook, ScanThreads, true>(args, e, work, selected);
  });
}

/// The fused kernels of pipelines with a grid-scope stage (`Finish`: the kernel after the
/// stage). Their arguments live in device memory (`resident`, written once at construction) and
/// each thread copies them: the stages hold references to them, and a reference to a kernel
/// argument is an address in parameter space, which read out of bounds (compute-sanitizer
/// memcheck, H200, CUDA 13.0) when the kernel ran in a conditional body that also held a WHILE
/// node.
template <class Pipeline, int BlockThreads, bool Finish, class Hook>
__global__ void __launch_bounds__(BlockThreads) generate_resident_kernel(const generate_args<Hook>* resident,
                                                                         env_mask mask, int advance) {
  const int e = static_cast<int>(blockIdx.x);
  if constexpr (Finish) {
    if (resident->grid_pending[e] == 0) return;  // uniform per block
  } else {
    if (e == 0 && threadIdx.x == 0) ++*resident->launch_count;
    if (!mask[e]) return;  // uniform per block
  }
  generate_args<Hook> args = *resident;
  args.mask = mask;
  args.advance = advance != 0;
  generate_block<Pipeline, BlockThreads, Finish>(args, e);
}

/// Sets `*flag` to 1 when any mask entry is nonzero (every writer stores the same value).
/// `mask` is never the null view here.
template <int BlockThreads>
__global__ void __launch_bounds__(BlockThreads) any_of_mask_kernel(env_mask mask, int n, int* flag) {
  bool any = false;
  for (int i = static_cast<int>(blockIdx.x) * BlockThreads + static_cast<int>(threadIdx.x); i < n;
       i += static_cast<int>(gridDim.x) * BlockThreads)
    any = any || mask[i];
  if (__syncthreads_or(any ? 1 : 0) != 0 && threadIdx.x == 0) *flag = 1;
}

/// One thread: the IF node's condition from the flag, then the flag is cleared for the next
/// replay. Runs right before its conditional node every time (handle values persist).
/// (A template only so that every translation unit may define it: headers hold no plain kernels.)
template <int Unused = 0>
__global__ void set_condition_kernel(cudaGraphConditionalHandle handle, int* flag) {
  cudaGraphSetConditional(handle, *flag != 0 ? 1u : 0u);
  *flag = 0;
}

}  // namespace track_gen::detail

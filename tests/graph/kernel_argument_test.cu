// Issue 12 item 7: a minimal reproduction, on the raw CUDA runtime API and nothing of the
// library, of the compute-sanitizer memcheck reports seen earlier on the H200 (docs/gpu-report.md,
// "Earlier findings on the device"). Two explanations are on the table:
//
//   1. parameter space: a kernel that takes a struct by value and calls member functions on it
//      (a reference to a member, an array member indexed at run time) addresses its argument
//      in parameter space, which memcheck reports as out of bounds when the kernel runs in a
//      WHILE body (or in an IF body that holds a WHILE node). docs/guide.md "Views inside conditional
//      bodies" and the library's resident-argument kernels follow this one.
//   2. NVIDIA/warp#1406: memcheck flags a WHILE-body kernel that reads memory allocated shortly
//      before the capture ("potentially made before memory is allocated"); the program is fine
//      outside the sanitizer, and a device synchronisation between allocation and capture makes
//      the reports go away.
//
// Every test case below is one variant, named ka/<argument>/<placement>/<allocation>, so that a
// doctest filter (-tc=ka/value/while/malloc_sync) runs it alone and scripts/kernel-argument-check
// can run each one under memcheck, alone and with other sanitized processes on the GPU. Each
// prints its name first ("[kernel-argument] ka/...") so that a sanitizer log of the whole binary
// shows which variant reported; the kernels carry their site in their name (Site = 0, 1, 2).
//
// <argument>: how the kernel gets its argument struct (kernel_args, 304 bytes, trivially copyable);
// what nvcc 13.0 makes of each for sm_90 (PTX, ptxas -v) in brackets:
//   value          by value, member functions inlined [ld.param at run-time computed addresses,
//                  no stack: the argument is read where it lies, in the parameter bank]
//   value_escaping by value, its address handed to a __noinline__ function [each thread copies
//                  the argument to a 304-byte local-memory frame and passes a generic pointer to it]
//   grid_constant  by value as __grid_constant__, its address handed to the same __noinline__
//                  function [cvta.param: a generic pointer into parameter space itself, no stack]
//   resident       a pointer to a device-memory copy, copied by each thread, as the library's
//                  kernels do [global loads into a 304-byte local-memory copy]
// <placement>: where the kernel runs; every variant runs it 5 times per graph launch
//   graph          5 copies in a graph without conditional nodes (control)
//   while          a WHILE node added inside a stream capture (the library's recipe); the body's
//                  last kernel advances a device counter and sets the condition (counter < 5)
//   if_while       an IF node (condition from a device flag, 1) whose body runs the kernel once
//                  (Site 1) and then holds a WHILE node running it 5 times (Site 2)
//   explicit_while a WHILE node added with cudaGraphAddNode to an explicit graph (condition
//                  assigned 1 at each launch), its body captured with cudaStreamBeginCaptureToGraph
// <allocation>: how the buffers (input, output, counters, the resident copy) came to be
//   malloc_sync    cudaMalloc, then cudaDeviceSynchronize before the capture
//   malloc_nosync  cudaMalloc and asynchronous uploads right before the capture, no synchronisation
//   async_nosync   cudaMallocAsync on the capturing stream right before the capture, no
//                  synchronisation (the stream-ordered allocator is what warp uses)
//   async_sync     the same, then cudaDeviceSynchronize before the capture
//
// Each graph is launched 3 times (TRACK_GEN_KA_REPLAYS overrides); every launch adds to an int64
// per element and counts the kernel launches per site. The results are compared exactly with a
// host computation that uses plain loops over the host copies (not kernel_args' member functions).
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

namespace kernel_argument_test {

#define KA_CUDA(call)                                                                                  \
  do {                                                                                                 \
    const cudaError_t ka_code_ = (call);                                                               \
    REQUIRE_MESSAGE(ka_code_ == cudaSuccess, #call " failed: " << std::string(cudaGetErrorName(ka_code_)) \
                                                     << " (" << std::string(cudaGetErrorString(ka_code_)) << ")"); \
  } while (0)

constexpr int kWeights = 64;    // the array member, indexed at run time
constexpr int kIterations = 5;  // runs of the kernel per WHILE loop (and per graph launch)
constexpr int kBlock = 128;
constexpr int kSites = 3;       // 0: the only site (graph, while, explicit_while); 1, 2: in if_while
constexpr int kElements = 5003; // several blocks, the last one partial

/// The argument struct: pointers, ints, an array member read at a run-time index through a
/// member function returning a reference to it, and a member function that loops over members.
struct kernel_args {
  const int* input;              // [n]
  long long* accum;              // [n], accumulated into
  const int* counter;            // iteration of the enclosing loop (0 .. kIterations-1)
  unsigned long long* launches;  // [kSites], launches per site
  int n;
  int num_weights;  // <= kWeights
  int bias;
  int reserved;  // named, so that the layout has no hidden padding
  int weights[kWeights];

  __device__ const int& weight(int k) const { return weights[k % num_weights]; }
  __device__ long long weight_total() const {
    long long t = bias;
    for (int k = 0; k < num_weights; ++k) t += weights[k];
    return t;
  }
};
static_assert(std::is_trivially_copyable<kernel_args>::value, "kernel_args is copied as bytes");
static_assert(sizeof(kernel_args) == 304, "a few hundred bytes of argument");

// ---------------------------------------------------------------------------------------------
// Kernels. Every element i gets, per run: w[(x + it) % nw] * (x + 1) + (bias + sum w) + 7 it
// + 1000 Site, with x = input[i] and it = *counter.

template <int Site>
__device__ __forceinline__ void accumulate(const kernel_args& a) {
  const int i = static_cast<int>(blockIdx.x) * kBlock + static_cast<int>(threadIdx.x);
  const int it = *a.counter;
  if (i == 0) a.launches[Site] += 1ull;  // one writer per launch; launches are ordered
  if (i >= a.n) return;
  const int x = a.input[i];
  const int& w = a.weight(x + it);
  a.accum[i] += static_cast<long long>(w) * (x + 1) + a.weight_total() + 7ll * it + 1000ll * Site;
}

template <int Site>
__device__ __noinline__ void accumulate_noinline(const kernel_args& a) {
  accumulate<Site>(a);
}

template <int Site>
__global__ void __launch_bounds__(kBlock) by_value(const kernel_args a) {
  accumulate<Site>(a);
}

template <int Site>
__global__ void __launch_bounds__(kBlock) by_value_escaping(const kernel_args a) {
  accumulate_noinline<Site>(a);
}

template <int Site>
__global__ void __launch_bounds__(kBlock) by_grid_constant(const __grid_constant__ kernel_args a) {
  accumulate_noinline<Site>(a);
}

template <int Site>
__global__ void __launch_bounds__(kBlock) from_resident(const kernel_args* resident) {
  const kernel_args a = *resident;
  accumulate<Site>(a);
}

/// Before a WHILE node: restarts the loop.
__global__ void start_loop(cudaGraphConditionalHandle h, int* counter) {
  *counter = 0;
  cudaGraphSetConditional(h, 1u);
}

/// The last kernel of a WHILE body: one more iteration done, go on while counter < limit.
__global__ void loop_step(cudaGraphConditionalHandle h, int* counter, int limit) {
  const int c = ++*counter;
  cudaGraphSetConditional(h, c < limit ? 1u : 0u);
}

/// Before an IF node: its condition from a device flag.
__global__ void set_if(cudaGraphConditionalHandle h, const int* enabled) { cudaGraphSetConditional(h, *enabled != 0 ? 1u : 0u); }

/// The control placement's stand-ins for start_loop and loop_step (no conditional node).
__global__ void reset_counter(int* counter) { *counter = 0; }
__global__ void count_step(int* counter) { ++*counter; }

// ---------------------------------------------------------------------------------------------
// Variants.

enum class argument { value, value_escaping, grid_constant, resident };
enum class placement { graph, in_while, in_if_while, explicit_while };
enum class allocation { malloc_sync, malloc_nosync, async_nosync, async_sync };

const char* describe(argument a) {
  switch (a) {
    case argument::value: return "struct by value, member functions inlined";
    case argument::value_escaping: return "struct by value, its address passed to a __noinline__ function (local copy)";
    case argument::grid_constant: return "struct by value as __grid_constant__, its address passed to a __noinline__ function";
    case argument::resident: return "pointer to a device-memory copy of the struct, copied by each thread";
  }
  return "?";
}
const char* describe(placement p) {
  switch (p) {
    case placement::graph: return "5 launches in a graph without conditional nodes (control)";
    case placement::in_while: return "WHILE body, node added inside a stream capture";
    case placement::in_if_while: return "IF body (Site 1) holding a WHILE node (Site 2), added inside a stream capture";
    case placement::explicit_while: return "WHILE body, node added to an explicit graph with cudaGraphAddNode";
  }
  return "?";
}
const char* describe(allocation a) {
  switch (a) {
    case allocation::malloc_sync: return "cudaMalloc, cudaDeviceSynchronize before the capture";
    case allocation::malloc_nosync: return "cudaMalloc right before the capture, no synchronisation";
    case allocation::async_nosync: return "cudaMallocAsync right before the capture, no synchronisation";
    case allocation::async_sync: return "cudaMallocAsync, cudaDeviceSynchronize before the capture";
  }
  return "?";
}

constexpr cudaStreamCaptureMode kMode = cudaStreamCaptureModeGlobal;

template <int Site>
const void* kernel_of(argument a) {
  switch (a) {
    case argument::value: return reinterpret_cast<const void*>(&by_value<Site>);
    case argument::value_escaping: return reinterpret_cast<const void*>(&by_value_escaping<Site>);
    case argument::grid_constant: return reinterpret_cast<const void*>(&by_grid_constant<Site>);
    case argument::resident: return reinterpret_cast<const void*>(&from_resident<Site>);
  }
  return nullptr;
}

template <int Site>
void launch_site(argument kind, const kernel_args& a, const kernel_args* resident, cudaStream_t s) {
  const int blocks = (a.n + kBlock - 1) / kBlock;
  switch (kind) {
    case argument::value: by_value<Site><<<blocks, kBlock, 0, s>>>(a); break;
    case argument::value_escaping: by_value_escaping<Site><<<blocks, kBlock, 0, s>>>(a); break;
    case argument::grid_constant: by_grid_constant<Site><<<blocks, kBlock, 0, s>>>(a); break;
    case argument::resident: from_resident<Site><<<blocks, kBlock, 0, s>>>(resident); break;
  }
  KA_CUDA(cudaGetLastError());
}

void launch_accumulate(int site, argument kind, const kernel_args& a, const kernel_args* resident, cudaStream_t s) {
  switch (site) {
    case 0: launch_site<0>(kind, a, resident, s); break;
    case 1: launch_site<1>(kind, a, resident, s); break;
    default: launch_site<2>(kind, a, resident, s); break;
  }
}

/// Everything a variant creates, released in the destructor (which may run while a failed
/// REQUIRE unwinds: errors ignored there).
struct resources {
  cudaStream_t stream = nullptr;
  cudaStream_t bodies[2] = {nullptr, nullptr};  // one per nesting depth of conditional bodies
  bool async = false;
  int* input = nullptr;
  long long* accum = nullptr;
  int* counter = nullptr;
  unsigned long long* launches = nullptr;
  int* enabled = nullptr;
  kernel_args* resident = nullptr;
  int* pinned_input = nullptr;
  kernel_args* pinned_args = nullptr;
  int* pinned_enabled = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;

  resources() = default;
  resources(const resources&) = delete;
  resources& operator=(const resources&) = delete;
  ~resources() {
    // A failed REQUIRE inside a capture leaves it open: end it (innermost first), or the next
    // variant in this process could not allocate (global capture mode).
    end_capture(bodies[1], false);
    end_capture(bodies[0], false);
    end_capture(stream, true);
    (void)cudaGetLastError();
    if (exec != nullptr) (void)cudaGraphExecDestroy(exec);
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    if (stream != nullptr) (void)cudaStreamSynchronize(stream);
    void* device[] = {input, accum, counter, launches, enabled, resident};
    for (void* p : device) {
      if (p == nullptr) continue;
      if (async)
        (void)cudaFreeAsync(p, stream);
      else
        (void)cudaFree(p);
    }
    if (stream != nullptr) (void)cudaStreamSynchronize(stream);
    (void)cudaFreeHost(pinned_input);
    (void)cudaFreeHost(pinned_args);
    (void)cudaFreeHost(pinned_enabled);
    for (cudaStream_t b : bodies)
      if (b != nullptr) (void)cudaStreamDestroy(b);
    if (stream != nullptr) (void)cudaStreamDestroy(stream);
  }

  /// `owned`: the capture made its own graph (not a conditional body's, which CUDA owns).
  static void end_capture(cudaStream_t st, bool owned) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (st == nullptr || cudaStreamIsCapturing(st, &status) != cudaSuccess || status == cudaStreamCaptureStatusNone) return;
    cudaGraph_t g = nullptr;
    (void)cudaStreamEndCapture(st, &g);
    if (owned && g != nullptr) (void)cudaGraphDestroy(g);
  }

  template <class T>
  void allocate(T** p, std::size_t count) {
    void* v = nullptr;
    if (async)
      KA_CUDA(cudaMallocAsync(&v, count * sizeof(T), stream));
    else
      KA_CUDA(cudaMalloc(&v, count * sizeof(T)));
    *p = static_cast<T*>(v);
  }
};

/// Adds a conditional node of `type` to the capture `s` belongs to, as
/// include/track_gen/detail/capture/conditional.cuh does: the handle, `set(handle)` on `s`, the
/// node on the capture's current dependencies, its body captured on `body_stream`
/// (`body(handle)`), then the capture's dependencies moved to the node.
template <class Set, class Body>
void add_conditional(cudaStream_t s, cudaGraphConditionalNodeType type, cudaStream_t body_stream, Set&& set, Body&& body) {
  cudaStreamCaptureStatus status{};
  unsigned long long id = 0;
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  const cudaGraphEdgeData* edges = nullptr;  // asked for too, else cudaErrorLossyQuery
  std::size_t num_deps = 0;
  KA_CUDA(cudaStreamGetCaptureInfo(s, &status, &id, &graph, &deps, &edges, &num_deps));
  REQUIRE(status == cudaStreamCaptureStatusActive);
  cudaGraphConditionalHandle handle{};
  KA_CUDA(cudaGraphConditionalHandleCreate(&handle, graph, 0u, 0u));
  set(handle);
  KA_CUDA(cudaGetLastError());
  KA_CUDA(cudaStreamGetCaptureInfo(s, &status, &id, &graph, &deps, &edges, &num_deps));
  REQUIRE(status == cudaStreamCaptureStatusActive);
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = type;
  params.conditional.size = 1;
  cudaGraphNode_t node = nullptr;
  KA_CUDA(cudaGraphAddNode(&node, graph, deps, edges, num_deps, &params));
  KA_CUDA(cudaStreamBeginCaptureToGraph(body_stream, params.conditional.phGraph_out[0], nullptr, nullptr, 0, kMode));
  body(handle);
  const cudaError_t recorded = cudaGetLastError();
  cudaGraph_t captured = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(body_stream, &captured);
  KA_CUDA(recorded);
  KA_CUDA(ended);
  KA_CUDA(cudaStreamUpdateCaptureDependencies(s, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
}

/// Builds the graph of placement `p` into r.graph.
void build_graph(resources& r, placement p, argument kind, const kernel_args& a) {
  const cudaStream_t s = r.stream;
  int* counter = r.counter;
  if (p == placement::explicit_while) {
    KA_CUDA(cudaGraphCreate(&r.graph, 0));
    cudaGraphConditionalHandle h{};
    KA_CUDA(cudaGraphConditionalHandleCreate(&h, r.graph, 1u, cudaGraphCondAssignDefault));
    cudaGraphNodeParams reset{};
    void* reset_args[] = {&counter};
    reset.type = cudaGraphNodeTypeKernel;
    reset.kernel.func = reinterpret_cast<void*>(&reset_counter);
    reset.kernel.gridDim = dim3(1);
    reset.kernel.blockDim = dim3(1);
    reset.kernel.kernelParams = reset_args;
    cudaGraphNode_t reset_node = nullptr;
    KA_CUDA(cudaGraphAddNode(&reset_node, r.graph, nullptr, nullptr, 0, &reset));
    cudaGraphNodeParams loop{};
    loop.type = cudaGraphNodeTypeConditional;
    loop.conditional.handle = h;
    loop.conditional.type = cudaGraphCondTypeWhile;
    loop.conditional.size = 1;
    cudaGraphNode_t loop_node = nullptr;
    KA_CUDA(cudaGraphAddNode(&loop_node, r.graph, &reset_node, nullptr, 1, &loop));
    const cudaStream_t b = r.bodies[0];
    KA_CUDA(cudaStreamBeginCaptureToGraph(b, loop.conditional.phGraph_out[0], nullptr, nullptr, 0, kMode));
    launch_accumulate(0, kind, a, r.resident, b);
    loop_step<<<1, 1, 0, b>>>(h, counter, kIterations);
    const cudaError_t recorded = cudaGetLastError();
    cudaGraph_t captured = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(b, &captured);
    KA_CUDA(recorded);
    KA_CUDA(ended);
    return;
  }
  KA_CUDA(cudaStreamBeginCapture(s, kMode));
  switch (p) {
    case placement::graph:
      reset_counter<<<1, 1, 0, s>>>(counter);
      for (int k = 0; k < kIterations; ++k) {
        launch_accumulate(0, kind, a, r.resident, s);
        count_step<<<1, 1, 0, s>>>(counter);
      }
      break;
    case placement::in_while:
      add_conditional(
          s, cudaGraphCondTypeWhile, r.bodies[0], [&](cudaGraphConditionalHandle h) { start_loop<<<1, 1, 0, s>>>(h, counter); },
          [&](cudaGraphConditionalHandle h) {
            launch_accumulate(0, kind, a, r.resident, r.bodies[0]);
            loop_step<<<1, 1, 0, r.bodies[0]>>>(h, counter, kIterations);
          });
      break;
    case placement::in_if_while: {
      const int* enabled = r.enabled;
      const cudaStream_t b0 = r.bodies[0], b1 = r.bodies[1];
      add_conditional(
          s, cudaGraphCondTypeIf, b0, [&](cudaGraphConditionalHandle h) { set_if<<<1, 1, 0, s>>>(h, enabled); },
          [&](cudaGraphConditionalHandle) {
            add_conditional(
                b0, cudaGraphCondTypeWhile, b1,
                [&](cudaGraphConditionalHandle h) {
                  start_loop<<<1, 1, 0, b0>>>(h, counter);
                  launch_accumulate(1, kind, a, r.resident, b0);  // in the IF body, before the WHILE node
                },
                [&](cudaGraphConditionalHandle h) {
                  launch_accumulate(2, kind, a, r.resident, b1);
                  loop_step<<<1, 1, 0, b1>>>(h, counter, kIterations);
                });
          });
      break;
    }
    case placement::explicit_while: break;
  }
  const cudaError_t recorded = cudaGetLastError();
  cudaGraph_t g = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(s, &g);
  r.graph = g;
  KA_CUDA(recorded);
  KA_CUDA(ended);
}

int replays_from_environment() {
  const char* v = std::getenv("TRACK_GEN_KA_REPLAYS");
  const int r = v != nullptr ? std::atoi(v) : 0;
  return r > 0 ? r : 3;
}

void print_line(const std::string& line) {
  std::printf("[kernel-argument] %s\n", line.c_str());
  std::fflush(stdout);
}

void run_variant(const char* name, argument kind, placement place, allocation alloc) {
  print_line(std::string(name) + ": BEGIN");
  print_line(std::string("  argument:   ") + describe(kind));
  print_line(std::string("  placement:  ") + describe(place));
  print_line(std::string("  allocation: ") + describe(alloc));
  const int replays = replays_from_environment();
  const int n = kElements;

  // Host data and the independent reference.
  std::vector<int> input(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) input[static_cast<std::size_t>(i)] = static_cast<int>((static_cast<long long>(i) * 7919 + 13) % 10007);
  const int num_weights = 61;  // not all of the array: the loop bound is a member too
  std::vector<int> weights(kWeights, 0);
  for (int k = 0; k < num_weights; ++k) weights[static_cast<std::size_t>(k)] = (k * k) % 97 - 40;
  const int bias = 12345;
  long long total = bias;
  for (int k = 0; k < num_weights; ++k) total += weights[static_cast<std::size_t>(k)];
  auto run_of = [&](int x, int it, int site) {
    return static_cast<long long>(weights[static_cast<std::size_t>((x + it) % num_weights)]) * (x + 1) + total + 7ll * it +
           1000ll * site;
  };
  std::vector<long long> expected(static_cast<std::size_t>(n), 0);
  unsigned long long expected_launches[kSites] = {0, 0, 0};
  const bool nested = place == placement::in_if_while;
  for (int i = 0; i < n; ++i) {
    const int x = input[static_cast<std::size_t>(i)];
    long long per_launch = nested ? run_of(x, 0, 1) : 0;
    for (int it = 0; it < kIterations; ++it) per_launch += run_of(x, it, nested ? 2 : 0);
    expected[static_cast<std::size_t>(i)] = per_launch * replays;
  }
  if (nested) {
    expected_launches[1] = static_cast<unsigned long long>(replays);
    expected_launches[2] = static_cast<unsigned long long>(replays) * kIterations;
  } else {
    expected_launches[0] = static_cast<unsigned long long>(replays) * kIterations;
  }

  resources r;
  KA_CUDA(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
  for (cudaStream_t& b : r.bodies) KA_CUDA(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  // Pinned staging first, so that the uploads below are asynchronous (no hidden synchronisation
  // between the device allocations and the capture in the *_nosync variants).
  KA_CUDA(cudaMallocHost(&r.pinned_input, static_cast<std::size_t>(n) * sizeof(int)));
  KA_CUDA(cudaMallocHost(&r.pinned_args, sizeof(kernel_args)));
  KA_CUDA(cudaMallocHost(&r.pinned_enabled, sizeof(int)));
  for (int i = 0; i < n; ++i) r.pinned_input[i] = input[static_cast<std::size_t>(i)];
  *r.pinned_enabled = 1;
  KA_CUDA(cudaDeviceSynchronize());

  // The allocations, right before the capture.
  r.async = alloc == allocation::async_nosync || alloc == allocation::async_sync;
  r.allocate(&r.input, static_cast<std::size_t>(n));
  r.allocate(&r.accum, static_cast<std::size_t>(n));
  r.allocate(&r.counter, 1);
  r.allocate(&r.launches, kSites);
  r.allocate(&r.enabled, 1);
  r.allocate(&r.resident, 1);
  kernel_args a{};
  a.input = r.input;
  a.accum = r.accum;
  a.counter = r.counter;
  a.launches = r.launches;
  a.n = n;
  a.num_weights = num_weights;
  a.bias = bias;
  a.reserved = 0;
  for (int k = 0; k < kWeights; ++k) a.weights[k] = weights[static_cast<std::size_t>(k)];
  *r.pinned_args = a;
  KA_CUDA(cudaMemcpyAsync(r.input, r.pinned_input, static_cast<std::size_t>(n) * sizeof(int), cudaMemcpyHostToDevice, r.stream));
  KA_CUDA(cudaMemsetAsync(r.accum, 0, static_cast<std::size_t>(n) * sizeof(long long), r.stream));
  KA_CUDA(cudaMemsetAsync(r.counter, 0, sizeof(int), r.stream));
  KA_CUDA(cudaMemsetAsync(r.launches, 0, kSites * sizeof(unsigned long long), r.stream));
  KA_CUDA(cudaMemcpyAsync(r.enabled, r.pinned_enabled, sizeof(int), cudaMemcpyHostToDevice, r.stream));
  KA_CUDA(cudaMemcpyAsync(r.resident, r.pinned_args, sizeof(kernel_args), cudaMemcpyHostToDevice, r.stream));
  if (alloc == allocation::malloc_sync || alloc == allocation::async_sync) KA_CUDA(cudaDeviceSynchronize());

  build_graph(r, place, kind, a);
  KA_CUDA(cudaGraphInstantiate(&r.exec, r.graph, 0));
  for (int k = 0; k < replays; ++k) KA_CUDA(cudaGraphLaunch(r.exec, r.stream));
  KA_CUDA(cudaStreamSynchronize(r.stream));

  std::vector<long long> got(static_cast<std::size_t>(n), 0);
  unsigned long long launches[kSites] = {0, 0, 0};
  int counter = -1;
  KA_CUDA(cudaMemcpyAsync(got.data(), r.accum, static_cast<std::size_t>(n) * sizeof(long long), cudaMemcpyDeviceToHost, r.stream));
  KA_CUDA(cudaMemcpyAsync(launches, r.launches, sizeof(launches), cudaMemcpyDeviceToHost, r.stream));
  KA_CUDA(cudaMemcpyAsync(&counter, r.counter, sizeof(int), cudaMemcpyDeviceToHost, r.stream));
  KA_CUDA(cudaStreamSynchronize(r.stream));

  int mismatches = 0, first = -1;
  for (int i = 0; i < n; ++i) {
    if (got[static_cast<std::size_t>(i)] != expected[static_cast<std::size_t>(i)]) {
      if (first < 0) first = i;
      ++mismatches;
    }
  }
  // Local memory per thread of the kernels used: shows where the compiler put the argument.
  std::string local = "local bytes per thread:";
  for (int site = nested ? 1 : 0; site <= (nested ? 2 : 0); ++site) {
    cudaFuncAttributes attr{};
    const void* f = site == 0 ? kernel_of<0>(kind) : (site == 1 ? kernel_of<1>(kind) : kernel_of<2>(kind));
    KA_CUDA(cudaFuncGetAttributes(&attr, f));
    local += " site " + std::to_string(site) + " = " + std::to_string(attr.localSizeBytes);
  }
  print_line("  " + local + "; sizeof(kernel_args) = " + std::to_string(sizeof(kernel_args)) + "; replays = " +
             std::to_string(replays));
  std::string launch_text = "launches per site:";
  for (int k = 0; k < kSites; ++k)
    launch_text += " " + std::to_string(launches[k]) + " (expected " + std::to_string(expected_launches[k]) + ")";
  print_line("  " + launch_text + "; loop counter " + std::to_string(counter));
  if (first >= 0) {
    print_line("  " + std::to_string(mismatches) + " of " + std::to_string(n) + " elements differ; first: element " +
               std::to_string(first) + " = " + std::to_string(got[static_cast<std::size_t>(first)]) + ", expected " +
               std::to_string(expected[static_cast<std::size_t>(first)]));
  }
  const bool pass = mismatches == 0 && counter == kIterations && launches[0] == expected_launches[0] &&
                    launches[1] == expected_launches[1] && launches[2] == expected_launches[2];
  print_line(std::string(name) + ": " + (pass ? "PASS" : "FAIL"));

  INFO("variant " << name);
  CHECK(mismatches == 0);
  CHECK(counter == kIterations);
  for (int k = 0; k < kSites; ++k) {
    INFO("site " << k);
    CHECK(launches[k] == expected_launches[k]);
  }
}

// One test case per variant, named for doctest's -tc filter (no commas, no spaces).
#define KA_VARIANT(NAME, KIND, PLACE, ALLOC) \
  TEST_CASE(NAME) { run_variant(NAME, argument::KIND, placement::PLACE, allocation::ALLOC); }

// The argument question: each way of passing the struct, in each placement, with the
// allocations settled (device synchronised) before the capture.
KA_VARIANT("ka/value/graph/malloc_sync", value, graph, malloc_sync)
KA_VARIANT("ka/value/while/malloc_sync", value, in_while, malloc_sync)
KA_VARIANT("ka/value/if_while/malloc_sync", value, in_if_while, malloc_sync)
KA_VARIANT("ka/value/explicit_while/malloc_sync", value, explicit_while, malloc_sync)
KA_VARIANT("ka/value_escaping/graph/malloc_sync", value_escaping, graph, malloc_sync)
KA_VARIANT("ka/value_escaping/while/malloc_sync", value_escaping, in_while, malloc_sync)
KA_VARIANT("ka/value_escaping/if_while/malloc_sync", value_escaping, in_if_while, malloc_sync)
KA_VARIANT("ka/value_escaping/explicit_while/malloc_sync", value_escaping, explicit_while, malloc_sync)
KA_VARIANT("ka/grid_constant/graph/malloc_sync", grid_constant, graph, malloc_sync)
KA_VARIANT("ka/grid_constant/while/malloc_sync", grid_constant, in_while, malloc_sync)
KA_VARIANT("ka/grid_constant/if_while/malloc_sync", grid_constant, in_if_while, malloc_sync)
KA_VARIANT("ka/grid_constant/explicit_while/malloc_sync", grid_constant, explicit_while, malloc_sync)
KA_VARIANT("ka/resident/graph/malloc_sync", resident, graph, malloc_sync)
KA_VARIANT("ka/resident/while/malloc_sync", resident, in_while, malloc_sync)
KA_VARIANT("ka/resident/if_while/malloc_sync", resident, in_if_while, malloc_sync)
KA_VARIANT("ka/resident/explicit_while/malloc_sync", resident, explicit_while, malloc_sync)

// The warp#1406 question: fresh allocations right before the capture, without and with a device
// synchronisation in between, for the by-value and the resident argument.
KA_VARIANT("ka/value/while/malloc_nosync", value, in_while, malloc_nosync)
KA_VARIANT("ka/value/while/async_nosync", value, in_while, async_nosync)
KA_VARIANT("ka/value/while/async_sync", value, in_while, async_sync)
KA_VARIANT("ka/value/if_while/malloc_nosync", value, in_if_while, malloc_nosync)
KA_VARIANT("ka/value/if_while/async_nosync", value, in_if_while, async_nosync)
KA_VARIANT("ka/value/if_while/async_sync", value, in_if_while, async_sync)
KA_VARIANT("ka/resident/while/malloc_nosync", resident, in_while, malloc_nosync)
KA_VARIANT("ka/resident/while/async_nosync", resident, in_while, async_nosync)
KA_VARIANT("ka/resident/while/async_sync", resident, in_while, async_sync)
KA_VARIANT("ka/resident/if_while/malloc_nosync", resident, in_if_while, malloc_nosync)
KA_VARIANT("ka/resident/if_while/async_nosync", resident, in_if_while, async_nosync)
KA_VARIANT("ka/resident/if_while/async_sync", resident, in_if_while, async_sync)

}  // namespace kernel_argument_test

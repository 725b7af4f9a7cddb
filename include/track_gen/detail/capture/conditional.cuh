#pragma once
/// @file
/// Records conditional nodes (IF, WHILE, SWITCH) into a running capture without ending it (docs/cuda-graphs.md):
/// the condition kernel on the capturing stream, the node on the capture's current
/// dependencies, its body captured on a dedicated body stream, then the capturing stream's
/// dependencies moved to the node.

#include <track_gen/detail/capture/query.hpp>
#include <track_gen/detail/cuda/error.hpp>
#include <track_gen/detail/capture/body_streams.hpp>
#include <track_gen/detail/lifetime/lifetime.hpp>

#include <string>
#include <utility>

namespace track_gen::detail {

/// Runs `f(body_stream)` with the body stream of the next nesting depth of this thread's
/// library conditional bodies. @throws capture_error nested deeper than `bodies.size()`.
template <class F>
void with_body_stream(const body_stream_set& bodies, F&& f) {
  int& depth = body_depth();
  if (depth >= static_cast<int>(bodies.size()))
    throw capture_error("track_gen: conditional bodies nested deeper than " + std::to_string(bodies.size()) +
                        " levels (a regenerate recorded inside a conditional body of ours, inside another)");
  ++depth;
  try {
    f(bodies[static_cast<std::size_t>(depth - 1)]);
  } catch (...) {
    --depth;
    throw;
  }
  --depth;
}

/// Adds a conditional node of `type` with `branches` bodies (1, or more for a SWITCH node) to the
/// capture `stream` belongs to. `set(handle, stream)` launches the kernel that sets the node's
/// value (right before the node, every replay); `body(body_stream, handle, branch)` records body
/// `branch` (never empty; kernels, memsets, memcpys only).
template <class Set, class Body>
void record_conditional_branches(cudaStream_t stream, cudaGraphConditionalNodeType type, int branches,
                                 const body_stream_set& bodies, cudaStreamCaptureMode mode, Set&& set, Body&& body) {
  capture_info info = query_capture(stream);
  cudaGraphConditionalHandle handle{};
  throw_on_cuda_error(cudaGraphConditionalHandleCreate(&handle, info.graph, 0u, 0u), "cudaGraphConditionalHandleCreate");
  set(handle, stream);
  throw_on_cuda_error(cudaGetLastError(), "launching the kernel that sets a conditional node's condition");
  info = query_capture(stream);
  cudaGraphNodeParams node_params{};
  node_params.type = cudaGraphNodeTypeConditional;
  node_params.conditional.handle = handle;
  node_params.conditional.type = type;
  node_params.conditional.size = static_cast<unsigned>(branches);
  cudaGraphNode_t node = nullptr;
  throw_on_cuda_error(cudaGraphAddNode(&node, info.graph, info.dependencies, info.edges, info.num_dependencies, &node_params),
                      type == cudaGraphCondTypeWhile ? "cudaGraphAddNode (WHILE conditional node)"
                      : type == cudaGraphCondTypeSwitch ? "cudaGraphAddNode (SWITCH conditional node)"
                                                        : "cudaGraphAddNode (IF conditional node)");
  // The bodies first, the stream's dependencies last: if recording a body fails, the capture
  // does not go on behind a conditional node with an empty body.
  for (int branch = 0; branch < branches; ++branch) {
    const cudaGraph_t body_graph = node_params.conditional.phGraph_out[branch];
    with_body_stream(bodies, [&](cudaStream_t body_stream) {
      throw_on_cuda_error(cudaStreamBeginCaptureToGraph(body_stream, body_graph, nullptr, nullptr, 0, mode),
                          "cudaStreamBeginCaptureToGraph (conditional body)");
      cudaError_t recorded = cudaSuccess;
      try {
        body(body_stream, handle, branch);
        recorded = cudaGetLastError();
      } catch (...) {
        cudaGraph_t discarded = nullptr;
        (void)cudaStreamEndCapture(body_stream, &discarded);  // the body stream is reused
        throw;
      }
      cudaGraph_t captured = nullptr;
      const cudaError_t ended = cudaStreamEndCapture(body_stream, &captured);
      throw_on_cuda_error(recorded, "recording a conditional body");
      throw_on_cuda_error(ended, "cudaStreamEndCapture (conditional body)");
    });
  }
  throw_on_cuda_error(cudaStreamUpdateCaptureDependencies(stream, &node, nullptr, 1, cudaStreamSetCaptureDependencies),
                      "cudaStreamUpdateCaptureDependencies");
}

/// Adds a conditional node of `type` (IF or WHILE: one body) to the capture `stream` belongs
/// to, as record_conditional_branches; `body(body_stream, handle)` records the body.
template <class Set, class Body>
void record_conditional(cudaStream_t stream, cudaGraphConditionalNodeType type, const body_stream_set& bodies,
                        cudaStreamCaptureMode mode, Set&& set, Body&& body) {
  record_conditional_branches(stream, type, 1, bodies, mode, std::forward<Set>(set),
                              [&](cudaStream_t body_stream, cudaGraphConditionalHandle handle, int) { body(body_stream, handle); });
}

}  // namespace track_gen::detail

#pragma once
/// @file
/// The single gatekeeper for compiler, language and CCCL versions, and for the
/// `__host__ __device__` annotation used by every function that runs on both backends.

#if __cplusplus < 201703L && !(defined(_MSVC_LANG) && _MSVC_LANG >= 201703L)
#error "track_gen needs C++17 or newer (pass -std=c++17)."
#endif

// TRACK_GEN_HD marks functions shared by the CUDA and host backends.
#if defined(__CUDACC__)
#define TRACK_GEN_HD __host__ __device__
#define TRACK_GEN_DEVICE __device__
#define TRACK_GEN_CUDA_COMPILER 1
#else
#define TRACK_GEN_HD
#define TRACK_GEN_DEVICE
#define TRACK_GEN_CUDA_COMPILER 0
#endif

// TRACK_GEN_NOINLINE keeps a function out of line in device code (nvcc's __noinline__); plain
// C++ compilers decide for themselves.
#if defined(__CUDACC__)
#define TRACK_GEN_NOINLINE __noinline__
#else
#define TRACK_GEN_NOINLINE
#endif

// TRACK_GEN_GRID_CONSTANT marks a kernel's by-value struct argument that device code takes by
// reference: nvcc then reads it where the launch put it (__grid_constant__) instead of copying
// it into every thread's stack frame first. __grid_constant__ needs compute capability 7.0.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#error "track_gen's device code needs compute capability 7.0 (sm_70) or newer: build for CUDA architectures 70 and above."
#endif
#if defined(__CUDACC__)
#define TRACK_GEN_GRID_CONSTANT __grid_constant__
#else
#define TRACK_GEN_GRID_CONSTANT
#endif

// TRACK_GEN_UNROLL unrolls the loop after it in device code; plain C++ compilers would warn
// about an unknown pragma.
#if defined(__CUDACC__)
#define TRACK_GEN_UNROLL _Pragma("unroll")
#else
#define TRACK_GEN_UNROLL
#endif

// Whether the CUDA runtime headers are reachable (a plain C++ compiler with the toolkit on its
// include path). The host backend never needs them.
#if defined(__CUDACC__)
#define TRACK_GEN_HAS_CUDA_RUNTIME 1
#elif defined(__has_include)
#if __has_include(<cuda_runtime_api.h>) && __has_include(<cuda/stream_ref>)
#define TRACK_GEN_HAS_CUDA_RUNTIME 1
#else
#define TRACK_GEN_HAS_CUDA_RUNTIME 0
#endif
#else
#define TRACK_GEN_HAS_CUDA_RUNTIME 0
#endif

#if TRACK_GEN_HAS_CUDA_RUNTIME
#include <cuda/stream_ref>
#include <cuda_runtime_api.h>
#include <vector_types.h>
// The graph machinery uses the CUDA 13 signatures of cudaStreamGetCaptureInfo (with edge data),
// cudaGraphAddNode and cudaStreamUpdateCaptureDependencies (12.x names them _v3 / _v2).
#if CUDART_VERSION < 13000 && defined(__CUDACC__)
#error "track_gen needs the CUDA 13 runtime headers (CUDART_VERSION >= 13000) for its CUDA backend."
#endif
#else
/// Layout-compatible stand-ins for CUDA's `float2`, `float3` and `float4` when the toolkit is
/// absent (host backend only).
struct alignas(8) float2 {
  float x, y;
};
struct float3 {
  float x, y, z;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
#endif

#if TRACK_GEN_CUDA_COMPILER
#include <cub/version.cuh>
// CCCL 3.0 removed cub::Sum/Max/Min; the kernels use cuda::std::plus<> and cuda::maximum<>.
#if CUB_VERSION < 300000
#error "track_gen needs CCCL (CUB) 3.0 or newer: use the CCCL shipped with CUDA 13.x."
#endif
#include <cuda/functional>
#endif

#define TRACK_GEN_VERSION_MAJOR 0
#define TRACK_GEN_VERSION_MINOR 1
#define TRACK_GEN_VERSION_PATCH 0

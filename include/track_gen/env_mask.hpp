#pragma once
/// @file
/// `env_mask`: a borrowed per-environment mask of int32, bool or uint8 elements, as
/// `course::regenerate` reads it.

#include <track_gen/detail/config.hpp>

#include <cstddef>
#include <cstdint>

namespace track_gen {

/// A borrowed view of a per-environment mask: `E` elements of 4 bytes (`std::int32_t`) or of
/// 1 byte (`bool`, `std::uint8_t`: e.g. a torch `bool` or `uint8` tensor), in the memory space of
/// the course that reads it (device memory for `backend::cuda`). Entry e is set when its element
/// is nonzero. A null view means "every environment". Trivially copyable; never owns, copies or
/// allocates. Built implicitly from a pointer, so `regenerate(mask, ...)` takes any of the three.
struct env_mask {
  const void* data = nullptr;  ///< first element, or null (every env)
  int element_bytes = 4;       ///< 4 (int32) or 1 (bool / uint8)

  constexpr env_mask() = default;
  constexpr env_mask(std::nullptr_t) {}
  constexpr env_mask(const std::int32_t* p) : data(p), element_bytes(4) {}
  constexpr env_mask(const std::uint8_t* p) : data(p), element_bytes(1) {}
  constexpr env_mask(const bool* p) : data(p), element_bytes(1) {}

  /// True for the null view (every environment is selected).
  TRACK_GEN_HD bool all() const { return data == nullptr; }
  /// Whether env e is selected (its element is nonzero; always true for the null view).
  TRACK_GEN_HD bool operator[](int e) const {
    if (data == nullptr) return true;
    if (element_bytes == 1) return static_cast<const unsigned char*>(data)[e] != 0;
    return static_cast<const std::int32_t*>(data)[e] != 0;
  }
};

}  // namespace track_gen

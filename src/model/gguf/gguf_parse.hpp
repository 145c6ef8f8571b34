#pragma once
// Parses a whole GGUF file held in memory into its header, metadata and tensor
// infos, checking every count, length, offset and size against the bytes.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "torsh/model/gguf.hpp"

namespace torsh::model::detail {

// Arrays of arrays deeper than this are refused (real files nest at most once;
// the limit bounds the reader's recursion).
inline constexpr int kMaxArrayDepth = 8;
// Values in all metadata together, array elements included. Each costs about
// 100 bytes in memory against as little as 1 in the file, so this bounds what
// a small hostile file can make the reader allocate (about 1.6 GB); real files
// hold well under a million (a 256k-token vocabulary with scores and types).
inline constexpr std::uint64_t kMaxMetadataValues = std::uint64_t{1} << 24;
// GGML_MAX_DIMS.
inline constexpr std::uint32_t kMaxTensorDims = 4;
inline constexpr std::uint64_t kDefaultAlignment = 32;

struct GgufContents {
  std::uint32_t version = 0;
  std::size_t alignment = kDefaultAlignment;
  std::size_t data_offset = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata;
  std::vector<GgufTensorInfo> tensors;
};

GgufContents parse_gguf(std::span<const std::byte> bytes, const std::string& file);

}  // namespace torsh::model::detail

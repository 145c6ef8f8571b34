#pragma once
#include <array>
#include <cstdint>

#include "torsh/model/tokenizer.hpp"

namespace torsh::model {

// Refuses TokenizerData that cannot make a tokenizer: InvalidArgument for
// inconsistent data (sizes, ids, token types, byte tokens), Unsupported for a
// model or pre-tokenizer this library does not have. Merges are checked as
// the BPE tables are built.
void check_tokenizer_data(const TokenizerData& data);

// The byte tokens (type 6, "<0xXX>") by byte value; -1 where there is none.
// InvalidArgument for a byte token with another spelling.
std::array<std::int32_t, 256> byte_tokens(const TokenizerData& data);

}  // namespace torsh::model

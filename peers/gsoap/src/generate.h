//! bench-proto's deterministic customer generator (bench-proto/src/customer/generate.rs), ported so the store
//! starts with the very records bench-server's does and `get` answers the same data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store.h"

namespace peer {

/// bench-server's PREFILL_SEED and PREFILL_FIRST_ID (bench-server/src/http/store.rs).
inline constexpr std::uint64_t PREFILL_SEED = 0x5753'4245'4e43'4821ULL;
inline constexpr std::uint64_t PREFILL_FIRST_ID = 1;

/// `count` customers with ids `first_id .. first_id + count`, allocated outside any soap context.
std::vector<CustomerPtr> generate(std::size_t count, std::uint64_t seed, std::uint64_t first_id);

/// Lower-case ASCII for an e-mail local part or domain (exposed for the self-check).
std::string ascii_slug(const std::string& utf8);

}  // namespace peer

//! The Customer service's store, as bench-server keeps it: a fixed-capacity ring (the oldest customers are
//! overwritten once it is full, so memory never grows past the cap), pre-filled deterministically.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "soapH.h"

namespace peer {

using CustomerPtr = std::shared_ptr<const cust__Customer>;

/// Takes ownership of a customer allocated with new outside any soap context.
CustomerPtr own(cust__Customer* heap);

/// A copy of `c` outside any soap context (gSOAP frees a request's data at the end of the request).
CustomerPtr detach(const cust__Customer& c);

/// No store-wide lock: an add reserves its slots with one atomic add, and every slot has its own mutex, held
/// only to swap or copy a pointer.
class CustomerStore {
  public:
    CustomerStore(std::size_t cap, std::size_t prefill);

    /// Stores the customers (overwriting the oldest when full); returns how many the store now holds.
    std::uint64_t add(std::vector<CustomerPtr> customers);

    /// `count` customers from position `offset` (modulo the store's size), wrapping around, appended to
    /// `out`. A slot reserved by a concurrent first add may still be empty and is skipped (at most the store's
    /// size of them).
    void get(std::uint32_t count, std::uint64_t offset, std::vector<CustomerPtr>& out) const;

  private:
    struct Slot {
        mutable std::mutex lock;
        CustomerPtr customer;
    };
    std::unique_ptr<Slot[]> slots_;
    std::size_t cap_;
    /// Customers ever inserted; the next add writes slot `inserted % cap` onwards.
    std::atomic<std::uint64_t> inserted_{0};
};

}  // namespace peer

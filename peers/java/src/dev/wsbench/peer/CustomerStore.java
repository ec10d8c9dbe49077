//! The Customer service's store, as bench-server keeps it: a fixed-capacity ring (the oldest customers are
//! overwritten once it is full, so memory never grows past the cap), pre-filled deterministically.
package dev.wsbench.peer;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

import dev.wsbench.peer.customer.Customer;

/** No store-wide lock: an add reserves its slots with one atomic add; each slot is an atomic reference. */
public final class CustomerStore {
    private final AtomicReferenceArray<Customer> slots;
    /** Customers ever inserted; the next add writes slot {@code inserted % cap} onwards. */
    private final AtomicLong inserted = new AtomicLong();

    /** A store of {@code cap} slots (at least one) holding {@code prefill} generated customers. */
    public CustomerStore(int cap, int prefill) {
        slots = new AtomicReferenceArray<>(Math.max(cap, 1));
        List<Customer> start = CustomerGenerator.generate(Math.min(prefill, slots.length()),
                CustomerGenerator.PREFILL_SEED, CustomerGenerator.PREFILL_FIRST_ID);
        add(start);
    }

    private long len() {
        return Math.min(inserted.get(), slots.length());
    }

    /** Stores the customers (overwriting the oldest when full); returns how many the store now holds. */
    public long add(List<Customer> customers) {
        int n = customers.size();
        long start = inserted.getAndAdd(n);
        int cap = slots.length();
        for (int i = 0; i < n; i++) {
            slots.set((int) ((start + i) % cap), customers.get(i));
        }
        return Math.min(start + n, cap);
    }

    /**
     * {@code count} customers from position {@code offset} (modulo the store's size), wrapping around; a slot
     * reserved by a concurrent first add may still be empty and is skipped (at most {@code len} of them).
     */
    public List<Customer> get(int count, BigInteger offset) {
        long len = len();
        List<Customer> out = new ArrayList<>(count);
        if (len == 0) {
            return out;
        }
        long pos = offset.mod(BigInteger.valueOf(len)).longValue();
        long skips = len;
        while (out.size() < count) {
            Customer c = slots.get((int) pos);
            if (c != null) {
                out.add(c);
            } else if (skips-- == 0) {
                break;
            }
            pos = (pos + 1) % len;
        }
        return out;
    }
}

// A bounded, thread-safe map that forgets its least recently used entry first (the engine's in-memory caches).
#pragma once
#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace adjoint::compile {

// Values are copied out, so a Value should be cheap to copy (a shared_ptr): an entry evicted while a caller
// still holds its value stays alive with that caller.
template <typename Key, typename Value>
class LruCache {
public:
    explicit LruCache(size_t capacity) : capacity_(capacity) {}

    // The value under `key`, which becomes the most recently used; none when absent.
    std::optional<Value> get(const Key& key) {
        std::lock_guard lock(mutex_);
        auto it = index_.find(key);
        if (it == index_.end()) return std::nullopt;
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
    }

    // Inserts or replaces, then forgets the least recently used entries beyond the capacity.
    void put(const Key& key, Value value) {
        std::lock_guard lock(mutex_);
        if (auto it = index_.find(key); it != index_.end()) {
            it->second->second = std::move(value);
            order_.splice(order_.begin(), order_, it->second);
        } else {
            order_.emplace_front(key, std::move(value));
            index_.emplace(key, order_.begin());
        }
        trim();
    }

    void clear() {
        std::lock_guard lock(mutex_);
        index_.clear();
        order_.clear();
    }
    size_t size() const {
        std::lock_guard lock(mutex_);
        return order_.size();
    }
    size_t capacity() const {
        std::lock_guard lock(mutex_);
        return capacity_;
    }
    // 0 keeps nothing.
    void set_capacity(size_t capacity) {
        std::lock_guard lock(mutex_);
        capacity_ = capacity;
        trim();
    }

private:
    void trim() {
        while (order_.size() > capacity_) {
            index_.erase(order_.back().first);
            order_.pop_back();
        }
    }

    mutable std::mutex mutex_;
    size_t capacity_;
    std::list<std::pair<Key, Value>> order_;   // most recently used first
    std::unordered_map<Key, typename std::list<std::pair<Key, Value>>::iterator> index_;
};

} // namespace adjoint::compile

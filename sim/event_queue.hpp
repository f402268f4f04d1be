// EventQueue: the one place where event order is defined: by time, then by sequence number
// (insertion order).
//
// A monotone radix heap with 8-bit digits (after Ahuja, Mehlhorn, Orlin and Tarjan, 1990).
// The engine never schedules before the time of the last entry taken out (`last_`), so an
// entry can be filed by the highest 8-bit digit in which its time differs from `last_` (its
// level) and by its own value of that digit: every entry of a lower level, or of the same
// level and a lower digit, is earlier. Taking the minimum empties the lowest bucket: its
// smallest time becomes `last_`, and its entries drop to lower levels. An entry therefore moves
// at most once per level it spans: about 3 times for a delay of 2^20 ns (1 ms) and at most 8,
// always as sequential appends, so the queue stays fast when it outgrows the cache.
// Buckets are chains of fixed-size blocks from one shared pool, so the memory one bucket frees
// serves the next: after warm-up the queue neither allocates nor touches new pages.
//
// Ties: entries of equal time may reach the ready batch out of sequence order (an older entry
// can sit in a higher bucket than a newer one), so a refilled batch is sorted by sequence
// unless it already is; entries pushed at time `last_` later carry larger sequences.
//
// Peeking (top() on an empty ready batch) advances `last_` to the next entry's time although
// the engine's clock may stay behind it (Engine::run_until). An entry pushed after that with a
// time below `last_` goes to `early_`, a small binary heap that is served first: all its entries
// are earlier than every entry filed in the buckets.
#pragma once
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/callback.hpp"

namespace dlsim::sim {

// One pending event: 64 bytes, one cache line.
struct QueueEntry {
  std::int64_t time;        // ns
  std::uint64_t key;        // sequence << 24 | slot, as built by Engine; orders ties
  InlineCallback callback;
};
static_assert(sizeof(QueueEntry) == 64);

class EventQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  // Requires entry.time >= the time of the last entry popped (checked by Engine).
  void push(const QueueEntry& e) {
    if (e.time < last_) {
      early_.push_back(e);
      std::push_heap(early_.begin(), early_.end(), later);
    } else {
      file(e);
    }
    ++size_;
  }

  // The earliest entry; the queue must not be empty.
  const QueueEntry& top() {
    if (!early_.empty()) return early_.front();
    if (ready_head_ == ready_.size()) refill();
    return ready_[ready_head_];
  }

  void pop() {
    --size_;
    if (!early_.empty()) {
      std::pop_heap(early_.begin(), early_.end(), later);
      early_.pop_back();
      return;
    }
    if (ready_head_ == ready_.size()) refill();
    ++ready_head_;
  }

  void reserve(std::size_t n) { ready_.reserve(n); }

 private:
  static constexpr int kDigitBits = 8;
  static constexpr int kDigits = 1 << kDigitBits;
  static constexpr int kLevels = 64 / kDigitBits;

  static constexpr std::uint32_t kNoBlock = ~std::uint32_t{0};
  // 32 entries (2 KiB) per block measured fastest of 8/16/32/64 in bench_engine_hold.
  static constexpr int kBlockEntries = 32;
  struct alignas(64) Block {
    std::uint32_t next = kNoBlock;
    std::uint32_t count = 0;
    QueueEntry entries[kBlockEntries];
  };
  struct Bucket {
    std::uint32_t head = kNoBlock;
    std::uint32_t tail = kNoBlock;
  };

  std::uint32_t new_block() {
    if (free_blocks_ != kNoBlock) {
      const std::uint32_t b = free_blocks_;
      free_blocks_ = blocks_[b]->next;
      blocks_[b]->next = kNoBlock;
      blocks_[b]->count = 0;
      return b;
    }
    blocks_.push_back(std::make_unique<Block>());
    return static_cast<std::uint32_t>(blocks_.size() - 1);
  }

  void append(Bucket& bucket, const QueueEntry& e) {
    if (bucket.tail == kNoBlock || blocks_[bucket.tail]->count == kBlockEntries) {
      const std::uint32_t b = new_block();
      if (bucket.tail == kNoBlock) bucket.head = b; else blocks_[bucket.tail]->next = b;
      bucket.tail = b;
    }
    Block& block = *blocks_[bucket.tail];
    block.entries[block.count++] = e;
  }

  // Heap order for early_: the root is the earliest (time, key).
  static bool later(const QueueEntry& a, const QueueEntry& b) {
    return a.time > b.time || (a.time == b.time && a.key > b.key);
  }

  static std::uint64_t ordered(std::int64_t t) {
    return static_cast<std::uint64_t>(t) ^ (std::uint64_t{1} << 63);  // order-preserving
  }

  void file(const QueueEntry& e) {
    const std::uint64_t t = ordered(e.time);
    const std::uint64_t diff = t ^ ordered(last_);
    if (diff == 0) {
      ready_.push_back(e);  // equal to last_: the newest sequence, goes at the end
      return;
    }
    const int level = (63 - std::countl_zero(diff)) / kDigitBits;
    const int digit = static_cast<int>((t >> (level * kDigitBits)) & (kDigits - 1));
    append(buckets_[level][digit], e);
    occupied_[level][digit >> 6] |= std::uint64_t{1} << (digit & 63);
    levels_occupied_ |= 1u << level;
  }

  void refill() {
    ready_.clear();
    ready_head_ = 0;
    const int level = std::countr_zero(levels_occupied_);
    auto& words = occupied_[level];
    int word = 0;
    while (words[word] == 0) ++word;
    const int digit = word * 64 + std::countr_zero(words[word]);
    words[word] &= words[word] - 1;
    if ((words[0] | words[1] | words[2] | words[3]) == 0) levels_occupied_ &= ~(1u << level);

    const Bucket from = buckets_[level][digit];
    buckets_[level][digit] = Bucket{};
    std::int64_t min_time = blocks_[from.head]->entries[0].time;
    for (std::uint32_t b = from.head; b != kNoBlock; b = blocks_[b]->next) {
      const Block& block = *blocks_[b];
      for (std::uint32_t i = 0; i < block.count; ++i) min_time = std::min(min_time, block.entries[i].time);
    }
    last_ = min_time;
    for (std::uint32_t b = from.head; b != kNoBlock;) {
      const Block& block = *blocks_[b];  // stable: blocks are never moved
      for (std::uint32_t i = 0; i < block.count; ++i) file(block.entries[i]);  // lands below `level`
      const std::uint32_t next = block.next;
      blocks_[b]->next = free_blocks_;
      free_blocks_ = b;
      b = next;
    }
    const auto by_sequence = [](const QueueEntry& x, const QueueEntry& y) { return x.key < y.key; };
    if (!std::is_sorted(ready_.begin(), ready_.end(), by_sequence)) {
      std::sort(ready_.begin(), ready_.end(), by_sequence);
    }
  }

  std::array<std::array<Bucket, kDigits>, kLevels> buckets_{};
  std::vector<std::unique_ptr<Block>> blocks_;  // the pool; a block's index never changes
  std::uint32_t free_blocks_ = kNoBlock;         // free list threaded through Block::next
  std::array<std::array<std::uint64_t, kDigits / 64>, kLevels> occupied_{};
  std::uint32_t levels_occupied_ = 0;  // bit l set when some bucket of level l is not empty
  std::vector<QueueEntry> ready_;      // entries with time == last_, sorted by key from head
  std::size_t ready_head_ = 0;
  std::vector<QueueEntry> early_;    // entries earlier than last_ (see the header comment)
  std::int64_t last_ = 0;
  std::size_t size_ = 0;
};

}  // namespace dlsim::sim

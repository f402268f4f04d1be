// Engine: the discrete-event kernel. Events are callbacks scheduled at a sim::Time; run()
// executes them in (time, insertion order) order. That order is defined here and nowhere else.
//
// Invariants and costs:
// - Time never goes back: scheduling before now() throws std::invalid_argument.
// - Ties in time run in the order they were scheduled (a sequence number breaks ties).
// - No heap allocation per event once the queue has grown: callbacks are stored by value in the
//   queue's 64-byte entries (InlineCallback: trivially copyable, <= 40 bytes of captures).
// - cancel() is O(1): each pending event owns a slot holding its sequence number; cancelling
//   clears the slot, and the queue entry is skipped when it surfaces.
// - Limits: 2^24 (16.7 M) events pending at once, 2^40 events scheduled over a run; both throw
//   std::length_error when exceeded rather than misorder events.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/callback.hpp"
#include "sim/event_queue.hpp"
#include "sim/interrupt.hpp"
#include "sim/time.hpp"

namespace dlsim::sim {

// Handle to a scheduled event. A default-constructed id refers to no event.
struct EventId {
  std::uint32_t slot = 0;
  std::uint64_t sequence = 0;  // 0 = none; sequences start at 1
  bool valid() const { return sequence != 0; }
  bool operator==(const EventId&) const = default;
};

class Engine {
 public:
  Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Time now() const { return now_; }

  template <class F>
  EventId schedule_at(Time when, F&& callback) {
    check_not_past(when);
    const std::uint32_t slot = acquire_slot();
    const std::uint64_t seq = next_sequence();
    slot_sequences_[slot] = seq;
    queue_.push({when.count_ns(), (seq << kSlotBits) | slot,
                 InlineCallback::wrap(std::forward<F>(callback))});
    return {slot, seq};
  }
  template <class F>
  EventId schedule_in(Time delay, F&& callback) {
    return schedule_at(now_ + delay, std::forward<F>(callback));
  }

  // Cancels a pending event; returns false if it already ran, was cancelled, or is invalid.
  bool cancel(EventId id);
  bool is_pending(EventId id) const;

  // Runs events until none is left or stop() is called.
  void run();
  // Runs events with time <= until, then advances now() to `until` (unless stopped).
  void run_until(Time until);
  // Makes run()/run_until() return after the current event; the queue is kept.
  void stop() { stop_requested_ = true; }

  std::size_t pending_count() const { return pending_; }
  std::uint64_t events_executed() const { return executed_; }
  // Checks `flag` every kInterruptCheckEvents events of run()/run_until() and throws
  // sim::Interrupted once it is set (null: never). The engine is left mid-run: discard it.
  void set_interrupt(const InterruptFlag* flag) { interrupt_ = flag; }
  static constexpr std::uint64_t kInterruptCheckEvents = 4096;
  // Pre-sizes the queue and slot storage so that a run of up to n pending events never grows.
  void reserve(std::size_t n);

 private:
  static constexpr int kSlotBits = 24;
  static constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
  static constexpr std::uint64_t kMaxSequence = (std::uint64_t{1} << (64 - kSlotBits)) - 1;


  void check_not_past(Time when) const;
  std::uint32_t acquire_slot();
  std::uint64_t next_sequence();
  // Pops stale (cancelled) entries off the top; returns false when the queue is empty.
  bool settle_top();
  void execute_top();

  EventQueue queue_;
  // Slot i holds the sequence of one pending event, 0 when free: the liveness word that
  // cancel() clears and EventId checks against.
  std::vector<std::uint64_t> slot_sequences_;
  std::vector<std::uint32_t> free_slots_;
  Time now_;
  std::uint64_t last_sequence_ = 0;
  std::uint64_t executed_ = 0;
  std::size_t pending_ = 0;
  std::size_t stale_entries_ = 0;  // cancelled events whose entries are still in the queue
  bool stop_requested_ = false;
  const InterruptFlag* interrupt_ = nullptr;
};

}  // namespace dlsim::sim

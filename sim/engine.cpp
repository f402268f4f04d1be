#include "sim/engine.hpp"

#include <stdexcept>
#include <string>

namespace dlsim::sim {

void Engine::check_not_past(Time when) const {
  if (when < now_) {
    throw std::invalid_argument("Engine: event scheduled at " + std::to_string(when.count_ns()) +
                                " ns, before now (" + std::to_string(now_.count_ns()) + " ns)");
  }
}

std::uint32_t Engine::acquire_slot() {
  if (!free_slots_.empty()) {
    const std::uint32_t slot = free_slots_.back();
    free_slots_.pop_back();
    return slot;
  }
  if (slot_sequences_.size() > kSlotMask) throw std::length_error("Engine: more than 2^24 pending events");
  slot_sequences_.push_back(0);
  return static_cast<std::uint32_t>(slot_sequences_.size() - 1);
}

std::uint64_t Engine::next_sequence() {
  if (last_sequence_ == kMaxSequence) throw std::length_error("Engine: more than 2^40 events scheduled");
  ++pending_;
  return ++last_sequence_;
}

void Engine::reserve(std::size_t n) {
  queue_.reserve(n);
  slot_sequences_.reserve(n);
  free_slots_.reserve(n);
}

bool Engine::is_pending(EventId id) const {
  return id.valid() && id.slot < slot_sequences_.size() && slot_sequences_[id.slot] == id.sequence;
}

bool Engine::cancel(EventId id) {
  if (!is_pending(id)) return false;
  slot_sequences_[id.slot] = 0;  // the queue entry becomes stale and is dropped when it surfaces
  free_slots_.push_back(id.slot);
  --pending_;
  ++stale_entries_;
  return true;
}

bool Engine::settle_top() {
  // Without cancelled entries in the queue the top is live: skip the (cache-missing) check.
  while (!queue_.empty()) {
    if (stale_entries_ == 0) return true;
    const QueueEntry& top = queue_.top();
    if (slot_sequences_[top.key & kSlotMask] == (top.key >> kSlotBits)) return true;
    queue_.pop();  // cancelled event
    --stale_entries_;
  }
  return false;
}

void Engine::execute_top() {
  // Copy the entry out first: its callback may schedule events, which can reuse the slot or
  // grow the queue's storage.
  QueueEntry top = queue_.top();
  queue_.pop();
  const auto slot = static_cast<std::uint32_t>(top.key & kSlotMask);
  slot_sequences_[slot] = 0;
  free_slots_.push_back(slot);
  --pending_;
  now_ = Time::ns(top.time);
  ++executed_;
  top.callback();
}

void Engine::run() {
  stop_requested_ = false;
  while (!stop_requested_ && settle_top()) {
    execute_top();
    if (executed_ % kInterruptCheckEvents == 0) check_interrupt(interrupt_);
  }
}

void Engine::run_until(Time until) {
  check_not_past(until);
  stop_requested_ = false;
  while (!stop_requested_ && settle_top() && queue_.top().time <= until.count_ns()) {
    execute_top();
    if (executed_ % kInterruptCheckEvents == 0) check_interrupt(interrupt_);
  }
  if (!stop_requested_) now_ = until;
}

}  // namespace dlsim::sim

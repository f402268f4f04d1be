// InlineCallback: a `void()` callable stored by value in 48 bytes, without heap allocation.
// The engine keeps it inside the queue entry of its event, so scheduling never allocates and
// running an event touches no memory outside the queue. To make entries cheap to move, the
// callable must be trivially copyable and destructible and at most kCapacity bytes: lambdas
// that capture `this`, ids, numbers, Time and pointers qualify; capture containers or
// shared_ptr by pointer to an owner instead. Violations fail at compile time.
#pragma once
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace dlsim::sim {

class InlineCallback {
 public:
  static constexpr std::size_t kCapacity = 40;

  InlineCallback() = default;

  template <class F>
  static InlineCallback wrap(F&& f) {
    using Fn = std::decay_t<F>;
    static_assert(sizeof(Fn) <= kCapacity,
                  "event callback captures too much (max 40 bytes): capture ids or pointers");
    static_assert(alignof(Fn) <= alignof(std::max_align_t) && alignof(Fn) <= 8,
                  "over-aligned event callback");
    static_assert(std::is_trivially_copyable_v<Fn> && std::is_trivially_destructible_v<Fn>,
                  "event callback must be trivially copyable: capture ids or pointers, "
                  "not containers or smart pointers");
    InlineCallback cb;
    ::new (static_cast<void*>(cb.storage_)) Fn(std::forward<F>(f));
    cb.invoke_ = [](void* p) { (*std::launder(static_cast<Fn*>(p)))(); };
    return cb;
  }

  explicit operator bool() const { return invoke_ != nullptr; }
  void operator()() { invoke_(storage_); }

 private:
  void (*invoke_)(void*) = nullptr;
  alignas(8) unsigned char storage_[kCapacity];
};

static_assert(sizeof(InlineCallback) == 48);
static_assert(std::is_trivially_copyable_v<InlineCallback>);

}  // namespace dlsim::sim

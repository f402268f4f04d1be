// Tests for sim::Engine with small hand-written scenarios: time order, insertion order of ties,
// errors, cancellation, run_until, stop, bookkeeping, and times large enough to reach every
// radix level of the event queue. The randomized determinism and differential tests live in
// test_engine_differential.cpp.
#include "sim/engine.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

namespace dlsim::sim {
namespace {

using Trace = std::vector<int>;

// Schedules an event that appends `label` to `trace` when it runs.
EventId push(Engine& e, Time at, Trace& trace, int label) {
  return e.schedule_at(at, [&trace, label] { trace.push_back(label); });
}

TEST(Engine, RunsEventsInTimeOrder) {
  Engine e;
  Trace trace;
  std::vector<std::int64_t> seen;
  const std::int64_t times[] = {50, 10, 30, 20, 40, 0, 1'000'000'000'000};
  for (int i = 0; i < 7; ++i) {
    e.schedule_at(Time::ns(times[i]), [&trace, &seen, &e, i] {
      trace.push_back(i);
      seen.push_back(e.now().count_ns());
    });
  }
  e.run();
  EXPECT_EQ(trace, (Trace{5, 1, 3, 2, 4, 0, 6}));
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 10, 20, 30, 40, 50, 1'000'000'000'000}));
  EXPECT_EQ(e.now(), Time::ns(1'000'000'000'000));
}

TEST(Engine, ScheduleInIsRelativeToNow) {
  Engine e;
  std::vector<std::int64_t> seen;
  e.schedule_at(Time::us(5), [&e, &seen] {
    e.schedule_in(Time::ns(7), [&e, &seen] { seen.push_back(e.now().count_ns()); });
  });
  e.run();
  EXPECT_EQ(seen, (std::vector<std::int64_t>{5'007}));
}

TEST(Engine, TiesRunInInsertionOrder) {
  Engine e;
  Trace trace;
  // 1,000 events at t = 300 interleaved with events at earlier and later times, so the tied
  // events share buckets with others and span many pool blocks.
  for (int i = 0; i < 1'000; ++i) {
    push(e, Time::ns(300), trace, i);
    if (i % 7 == 0) push(e, Time::ns(299), trace, -1);
    if (i % 5 == 0) push(e, Time::ns(70'000), trace, -2);
  }
  e.run();
  ASSERT_EQ(trace.size(), 1'000u + 143u + 200u);
  Trace tied;
  for (std::size_t k = 143; k < 1'143; ++k) tied.push_back(trace[k]);
  Trace expected(1'000);
  for (int i = 0; i < 1'000; ++i) expected[i] = i;
  EXPECT_EQ(tied, expected);
  EXPECT_TRUE(std::all_of(trace.begin(), trace.begin() + 143, [](int x) { return x == -1; }));
  EXPECT_TRUE(std::all_of(trace.begin() + 1'143, trace.end(), [](int x) { return x == -2; }));
}

TEST(Engine, TiesScheduledFromACallbackAtNowRunAfterEarlierTies) {
  Engine e;
  Trace trace;
  // A (t=10) schedules C and D at now(); B was already waiting at t=10, so the order is
  // A, B, C, D, and C's own child E (also at now) runs after D.
  e.schedule_at(Time::ns(10), [&e, &trace] {
    trace.push_back(0);
    e.schedule_in(Time::zero(), [&e, &trace] {
      trace.push_back(2);
      e.schedule_at(e.now(), [&trace] { trace.push_back(4); });
    });
    e.schedule_at(e.now(), [&trace] { trace.push_back(3); });
  });
  push(e, Time::ns(10), trace, 1);
  push(e, Time::ns(11), trace, 5);
  e.run();
  EXPECT_EQ(trace, (Trace{0, 1, 2, 3, 4, 5}));
}

TEST(Engine, ManySelfReschedulingTiesAtOneTime) {
  Engine e;
  Trace trace;
  // Each of 64 chains re-schedules itself at now() 50 times: round-robin order by sequence.
  struct Chain {
    Engine* e;
    Trace* trace;
    int id;
    int left;
  };
  std::vector<Chain> chains;
  chains.reserve(64);
  for (int i = 0; i < 64; ++i) chains.push_back({&e, &trace, i, 50});
  struct Step {
    static void go(Chain* c) {
      c->trace->push_back(c->id);
      if (--c->left > 0) c->e->schedule_in(Time::zero(), [c] { go(c); });
    }
  };
  for (auto& c : chains) e.schedule_at(Time::ms(3), [p = &c] { Step::go(p); });
  e.run();
  ASSERT_EQ(trace.size(), 64u * 50u);
  for (std::size_t k = 0; k < trace.size(); ++k) ASSERT_EQ(trace[k], static_cast<int>(k % 64)) << k;
  EXPECT_EQ(e.now(), Time::ms(3));
}

TEST(Engine, SchedulingInThePastThrows) {
  Engine e;
  EXPECT_THROW(e.schedule_at(Time::ns(-1), [] {}), std::invalid_argument);
  EXPECT_THROW(e.schedule_in(Time::ns(-5), [] {}), std::invalid_argument);
  bool threw_inside = false;
  e.schedule_at(Time::ns(100), [&e, &threw_inside] {
    try {
      e.schedule_at(Time::ns(99), [] {});
    } catch (const std::invalid_argument&) {
      threw_inside = true;
    }
  });
  e.run();
  EXPECT_TRUE(threw_inside);
  EXPECT_THROW(e.schedule_at(Time::ns(99), [] {}), std::invalid_argument);
  EXPECT_THROW(e.schedule_in(Time::ns(-1), [] {}), std::invalid_argument);
  EXPECT_THROW(e.run_until(Time::ns(50)), std::invalid_argument);
  // A failed schedule leaves nothing behind.
  EXPECT_EQ(e.pending_count(), 0u);
  EXPECT_EQ(e.events_executed(), 1u);
  // Exactly now() is allowed.
  Trace trace;
  push(e, Time::ns(100), trace, 7);
  e.run();
  EXPECT_EQ(trace, (Trace{7}));
}

TEST(Engine, CancelledEventNeverRuns) {
  Engine e;
  Trace trace;
  push(e, Time::ns(10), trace, 0);
  const EventId b = push(e, Time::ns(20), trace, 1);
  push(e, Time::ns(30), trace, 2);
  EXPECT_TRUE(e.is_pending(b));
  EXPECT_TRUE(e.cancel(b));
  EXPECT_FALSE(e.is_pending(b));
  EXPECT_FALSE(e.cancel(b));  // second time
  EXPECT_EQ(e.pending_count(), 2u);
  e.run();
  EXPECT_EQ(trace, (Trace{0, 2}));
  EXPECT_EQ(e.events_executed(), 2u);
  EXPECT_EQ(e.now(), Time::ns(30));
}

TEST(Engine, CancelAfterRunAndInvalidIdsReturnFalse) {
  Engine e;
  Trace trace;
  const EventId a = push(e, Time::ns(5), trace, 0);
  EXPECT_TRUE(e.is_pending(a));
  e.run();
  EXPECT_FALSE(e.is_pending(a));
  EXPECT_FALSE(e.cancel(a));
  // The slot of `a` is reused by the next event; the old id must not cancel it.
  const EventId b = push(e, Time::ns(6), trace, 1);
  EXPECT_EQ(b.slot, a.slot);
  EXPECT_FALSE(e.is_pending(a));
  EXPECT_FALSE(e.cancel(a));
  EXPECT_TRUE(e.is_pending(b));
  EXPECT_FALSE(e.cancel(EventId{}));
  EXPECT_FALSE(e.is_pending(EventId{}));
  EXPECT_FALSE(e.cancel(EventId{12345, 1}));  // slot out of range
  e.run();
  EXPECT_EQ(trace, (Trace{0, 1}));
}

TEST(Engine, EventIsNotPendingInsideItsOwnCallback) {
  Engine e;
  EventId self;
  bool pending_inside = true;
  bool cancel_inside = true;
  self = e.schedule_at(Time::ns(1), [&] {
    pending_inside = e.is_pending(self);
    cancel_inside = e.cancel(self);
  });
  e.run();
  EXPECT_FALSE(pending_inside);
  EXPECT_FALSE(cancel_inside);
  EXPECT_EQ(e.events_executed(), 1u);
}

TEST(Engine, CallbackCanCancelALaterEventAtTheSameTime) {
  Engine e;
  Trace trace;
  EventId victim;
  e.schedule_at(Time::ns(10), [&] {
    trace.push_back(0);
    EXPECT_TRUE(e.cancel(victim));
  });
  victim = push(e, Time::ns(10), trace, 1);
  push(e, Time::ns(10), trace, 2);
  e.run();
  EXPECT_EQ(trace, (Trace{0, 2}));
}

TEST(Engine, SlotReuseAfterManyCancelsKeepsOrder) {
  Engine e;
  Trace trace;
  std::vector<EventId> first;
  for (int i = 0; i < 2'000; ++i) first.push_back(push(e, Time::ns(1'000 + 3 * i), trace, -1 - i));
  for (const EventId& id : first) ASSERT_TRUE(e.cancel(id));
  EXPECT_EQ(e.pending_count(), 0u);
  // New events reuse the freed slots, in reverse time order and with ties.
  std::vector<EventId> second;
  for (int i = 0; i < 2'000; ++i) second.push_back(push(e, Time::ns(9'000 - 2 * (i / 2)), trace, i));
  for (const EventId& old : first) EXPECT_FALSE(e.is_pending(old));
  for (const EventId& id : second) ASSERT_TRUE(e.is_pending(id));
  // Cancel every third of the new ones too.
  for (int i = 0; i < 2'000; i += 3) ASSERT_TRUE(e.cancel(second[i]));
  e.run();
  Trace expected;
  for (int pair = 999; pair >= 0; --pair) {
    for (int i : {2 * pair, 2 * pair + 1}) {
      if (i % 3 != 0) expected.push_back(i);
    }
  }
  EXPECT_EQ(trace, expected);
  EXPECT_EQ(e.events_executed(), expected.size());
  EXPECT_EQ(e.pending_count(), 0u);
}

TEST(Engine, RunUntilRunsExactlyTheEventsUpToT) {
  Engine e;
  Trace trace;
  push(e, Time::ns(10), trace, 0);
  push(e, Time::ns(20), trace, 1);
  const EventId c = push(e, Time::ns(21), trace, 2);
  push(e, Time::ns(20), trace, 3);
  e.run_until(Time::ns(20));
  EXPECT_EQ(trace, (Trace{0, 1, 3}));
  EXPECT_EQ(e.now(), Time::ns(20));
  EXPECT_TRUE(e.is_pending(c));
  EXPECT_EQ(e.pending_count(), 1u);
  EXPECT_EQ(e.events_executed(), 3u);
  // Past the last event now() still lands on `until`.
  e.run_until(Time::s(1));
  EXPECT_EQ(trace, (Trace{0, 1, 3, 2}));
  EXPECT_EQ(e.now(), Time::s(1));
  EXPECT_EQ(e.pending_count(), 0u);
}

TEST(Engine, RunUntilOnEmptyQueueAdvancesTime) {
  Engine e;
  e.run_until(Time::ms(4));
  EXPECT_EQ(e.now(), Time::ms(4));
  e.run_until(Time::ms(4));
  EXPECT_EQ(e.now(), Time::ms(4));
  Trace trace;
  push(e, Time::ms(4), trace, 1);  // at now(), after run_until
  e.run();
  EXPECT_EQ(trace, (Trace{1}));
}

TEST(Engine, RunUntilWithNothingDueLeavesLaterEventsPending) {
  Engine e;
  Trace trace;
  push(e, Time::ns(100), trace, 0);
  e.run_until(Time::ns(99));
  EXPECT_TRUE(trace.empty());
  EXPECT_EQ(e.now(), Time::ns(99));
  EXPECT_EQ(e.pending_count(), 1u);
  e.run();
  EXPECT_EQ(trace, (Trace{0}));
  EXPECT_EQ(e.now(), Time::ns(100));
}

// Scheduling after run_until(t) at a time in [t, next pending event) is legal (it is not in
// the past), and must run before that pending event.
TEST(Engine, ScheduleAfterRunUntilBeforeNextPendingEventKeepsTimeOrder) {
  Engine e;
  std::vector<std::int64_t> seen;
  auto record = [&e, &seen] { seen.push_back(e.now().count_ns()); };
  e.schedule_at(Time::ns(100), record);
  e.run_until(Time::ns(50));
  ASSERT_EQ(e.now(), Time::ns(50));
  e.schedule_at(Time::ns(70), record);
  e.schedule_in(Time::zero(), record);  // at 50
  e.run();
  EXPECT_EQ(seen, (std::vector<std::int64_t>{50, 70, 100}));
}

// Same, with a cancelled event that run_until skipped over.
TEST(Engine, ScheduleAfterRunUntilPastCancelledEventKeepsTimeOrder) {
  Engine e;
  std::vector<std::int64_t> seen;
  auto record = [&e, &seen] { seen.push_back(e.now().count_ns()); };
  const EventId a = e.schedule_at(Time::ns(100), record);
  e.schedule_at(Time::ns(200), record);
  ASSERT_TRUE(e.cancel(a));
  e.run_until(Time::ns(50));
  e.schedule_at(Time::ns(150), record);
  e.run();
  EXPECT_EQ(seen, (std::vector<std::int64_t>{150, 200}));
}

// After run_until peeked at t=100: ties below 100, ties at 100 with the peeked event, and events
// scheduled from those callbacks (still below 100) all keep (time, insertion) order.
TEST(Engine, EventsBetweenRunUntilAndNextPendingEventKeepTiesAndNesting) {
  Engine e;
  std::vector<std::pair<std::int64_t, int>> seen;
  auto at = [&e, &seen](std::int64_t t, int label) {
    e.schedule_at(Time::ns(t), [&e, &seen, label] { seen.emplace_back(e.now().count_ns(), label); });
  };
  at(100, 0);
  at(300, 1);
  e.run_until(Time::ns(50));
  at(100, 2);  // ties with the peeked event, runs after it
  at(70, 3);
  at(60, 4);
  at(70, 5);
  e.schedule_at(Time::ns(60), [&e, &seen, &at] {
    seen.emplace_back(e.now().count_ns(), 6);
    at(60, 7);   // at now(), after 4 and 6
    at(80, 8);   // still below the peeked 100
    at(100, 9);  // after 0 and 2
  });
  at(50, 10);
  e.run_until(Time::ns(200));
  EXPECT_EQ(seen, (std::vector<std::pair<std::int64_t, int>>{
                      {50, 10}, {60, 4}, {60, 6}, {60, 7}, {70, 3}, {70, 5}, {80, 8},
                      {100, 0}, {100, 2}, {100, 9}}));
  EXPECT_EQ(e.now(), Time::ns(200));
  EXPECT_EQ(e.pending_count(), 1u);
  e.run();
  EXPECT_EQ(seen.back(), (std::pair<std::int64_t, int>{300, 1}));
}

TEST(Engine, StopInsideCallbackStopsAfterThatEventAndRunResumes) {
  Engine e;
  Trace trace;
  push(e, Time::ns(1), trace, 0);
  e.schedule_at(Time::ns(2), [&e, &trace] {
    trace.push_back(1);
    e.stop();
  });
  push(e, Time::ns(2), trace, 2);  // same time as the stopping event, still not run
  push(e, Time::ns(3), trace, 3);
  e.run();
  EXPECT_EQ(trace, (Trace{0, 1}));
  EXPECT_EQ(e.now(), Time::ns(2));
  EXPECT_EQ(e.pending_count(), 2u);
  EXPECT_EQ(e.events_executed(), 2u);
  e.run();  // a stop request does not outlive the run it stopped
  EXPECT_EQ(trace, (Trace{0, 1, 2, 3}));
  EXPECT_EQ(e.pending_count(), 0u);
}

TEST(Engine, StopInsideRunUntilKeepsNowAtTheStoppingEvent) {
  Engine e;
  Trace trace;
  e.schedule_at(Time::ns(5), [&e, &trace] {
    trace.push_back(0);
    e.stop();
  });
  push(e, Time::ns(6), trace, 1);
  e.run_until(Time::ns(100));
  EXPECT_EQ(trace, (Trace{0}));
  EXPECT_EQ(e.now(), Time::ns(5));
  e.run_until(Time::ns(100));
  EXPECT_EQ(trace, (Trace{0, 1}));
  EXPECT_EQ(e.now(), Time::ns(100));
}

TEST(Engine, StopBeforeRunIsCleared) {
  Engine e;
  Trace trace;
  push(e, Time::ns(1), trace, 0);
  e.stop();
  e.run();
  EXPECT_EQ(trace, (Trace{0}));
}

TEST(Engine, PendingAndExecutedBookkeeping) {
  Engine e;
  EXPECT_EQ(e.pending_count(), 0u);
  EXPECT_EQ(e.events_executed(), 0u);
  EXPECT_EQ(e.now(), Time::zero());
  std::vector<EventId> ids;
  for (int i = 0; i < 10; ++i) ids.push_back(e.schedule_at(Time::ns(i), [] {}));
  EXPECT_EQ(e.pending_count(), 10u);
  e.cancel(ids[3]);
  e.cancel(ids[3]);
  e.cancel(ids[7]);
  EXPECT_EQ(e.pending_count(), 8u);
  std::size_t pending_seen_inside = 0;
  e.schedule_at(Time::ns(4), [&] {
    pending_seen_inside = e.pending_count();
    e.schedule_in(Time::ns(100), [] {});
  });
  e.run_until(Time::ns(4));
  // Ran 0, 1, 2, 4 and the new event at 4, which while running saw 5, 6, 8, 9 pending.
  EXPECT_EQ(e.events_executed(), 5u);
  EXPECT_EQ(pending_seen_inside, 4u);
  EXPECT_EQ(e.pending_count(), 5u);
  e.run();
  EXPECT_EQ(e.events_executed(), 10u);
  EXPECT_EQ(e.pending_count(), 0u);
}

TEST(Engine, EventIdsAreDistinctAndValid) {
  Engine e;
  const EventId a = e.schedule_at(Time::ns(1), [] {});
  const EventId b = e.schedule_at(Time::ns(1), [] {});
  EXPECT_TRUE(a.valid());
  EXPECT_TRUE(b.valid());
  EXPECT_FALSE(a == b);
  EXPECT_FALSE(EventId{}.valid());
}

// Times whose 8-bit digits differ at every level, around every byte boundary up to 2^62, in
// shuffled insertion order: the run must visit them sorted (ties by insertion order).
TEST(Engine, TimesAtEveryRadixLevelRunSorted) {
  std::vector<std::int64_t> times;
  for (int bit = 0; bit <= 62; ++bit) {
    const std::int64_t p = std::int64_t{1} << bit;
    for (std::int64_t d : {-1, 0, 1}) times.push_back(std::max<std::int64_t>(0, p + d));
  }
  times.push_back(std::numeric_limits<std::int64_t>::max());
  times.push_back(std::numeric_limits<std::int64_t>::max() - 1);
  times.push_back((std::int64_t{1} << 40) + 12345);
  times.push_back((std::int64_t{1} << 40) + 12345);  // a tie far out
  std::mt19937_64 rng(7);
  std::shuffle(times.begin(), times.end(), rng);

  Engine e;
  std::vector<std::pair<std::int64_t, int>> expected;
  std::vector<std::pair<std::int64_t, int>> seen;
  for (int i = 0; i < static_cast<int>(times.size()); ++i) {
    expected.emplace_back(times[i], i);
    e.schedule_at(Time::ns(times[i]), [&e, &seen, i] { seen.emplace_back(e.now().count_ns(), i); });
  }
  std::stable_sort(expected.begin(), expected.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  e.run();
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(e.now(), Time::max());
}

// Many events in one far bucket (several pool blocks), drained and refilled repeatedly while
// the pool recycles blocks; nested events jump ahead by up to 2^45 ns.
TEST(Engine, LargeJumpsAndBlockReuse) {
  Engine e;
  std::mt19937_64 rng(99);
  std::vector<std::pair<std::int64_t, int>> expected;
  std::vector<std::pair<std::int64_t, int>> seen;
  int label = 0;
  std::int64_t base = (std::int64_t{1} << 40) - 500;
  for (int round = 0; round < 6; ++round) {
    const std::int64_t start = e.now().count_ns();
    for (int i = 0; i < 600; ++i) {
      // A cluster of ties plus spread-out times up to 2^45 ahead.
      const std::int64_t t = (i % 3 == 0) ? base : base + static_cast<std::int64_t>(rng() >> 19);
      expected.emplace_back(t, label);
      e.schedule_at(Time::ns(t), [&e, &seen, l = label] { seen.emplace_back(e.now().count_ns(), l); });
      ++label;
    }
    e.run();
    EXPECT_GE(e.now().count_ns(), start);
    base = e.now().count_ns() + (std::int64_t{1} << (41 + round));
  }
  std::stable_sort(expected.begin(), expected.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(e.events_executed(), 3'600u);
}

TEST(Engine, ReserveDoesNotChangeBehaviour) {
  Engine e;
  e.reserve(10'000);
  Trace trace;
  for (int i = 0; i < 100; ++i) push(e, Time::ns(100 - i), trace, i);
  e.run();
  ASSERT_EQ(trace.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(trace[i], 99 - i);
}

}  // namespace
}  // namespace dlsim::sim

namespace {

// A self-rescheduling event: runs forever unless something stops the engine.
struct Forever {
  dlsim::sim::Engine* engine;
  std::uint64_t* count;
  void operator()() const {
    ++*count;
    engine->schedule_in(dlsim::sim::Time::from_seconds(1), Forever{engine, count});
  }
};

}  // namespace

TEST(EngineInterrupt, ASetFlagStopsAnEndlessRunWithInterrupted) {
  dlsim::sim::Engine engine;
  dlsim::sim::InterruptFlag flag{false};
  engine.set_interrupt(&flag);
  std::uint64_t count = 0;
  // The event sets the flag itself at its 10,000th run: the engine must throw at its next check,
  // at the first multiple of kInterruptCheckEvents (12,288), not run on.
  struct Setter {
    dlsim::sim::Engine* engine;
    std::uint64_t* count;
    dlsim::sim::InterruptFlag* flag;
    void operator()() const {
      if (++*count == 10000) flag->store(true);
      engine->schedule_in(dlsim::sim::Time::from_seconds(1), Setter{engine, count, flag});
    }
  };
  engine.schedule_at(dlsim::sim::Time::from_seconds(0), Setter{&engine, &count, &flag});
  EXPECT_THROW(engine.run(), dlsim::sim::Interrupted);
  EXPECT_EQ(count, 3 * dlsim::sim::Engine::kInterruptCheckEvents);
}

TEST(EngineInterrupt, AnUnsetOrAbsentFlagNeverInterrupts) {
  for (bool with_flag : {false, true}) {
    dlsim::sim::Engine engine;
    dlsim::sim::InterruptFlag flag{false};
    if (with_flag) engine.set_interrupt(&flag);
    std::uint64_t count = 0;
    engine.schedule_at(dlsim::sim::Time::from_seconds(0), Forever{&engine, &count});
    engine.run_until(dlsim::sim::Time::from_seconds(20000));
    EXPECT_EQ(count, 20001u);  // events at t = 0, 1, ..., 20000
  }
}

// Tests for Recorder: counter and series registration (idempotent, in registration order),
// accumulation, series recorded in time order, and the answers for unknown names.
#include "sim/recorder.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace dlsim::sim {
namespace {

TEST(Recorder, CounterRegistrationIsIdempotent) {
  Recorder r;
  const CounterId a = r.counter("jobs_done");
  const CounterId b = r.counter("bytes_sent");
  const CounterId a2 = r.counter("jobs_done");
  EXPECT_EQ(a.index, a2.index);
  EXPECT_NE(a.index, b.index);
  EXPECT_EQ(r.counter_names(), (std::vector<std::string>{"jobs_done", "bytes_sent"}));
}

TEST(Recorder, AddAccumulatesPerCounter) {
  Recorder r;
  const CounterId jobs = r.counter("jobs");
  const CounterId bytes = r.counter("bytes");
  EXPECT_EQ(r.value("jobs"), 0.0);  // registered, never added to
  r.add(jobs);
  r.add(jobs);
  r.add(bytes, 1.5e9);
  r.add(jobs, 0.25);
  r.add(r.counter("bytes"), 0.5e9);  // through a second lookup of the same name
  EXPECT_DOUBLE_EQ(r.value("jobs"), 2.25);
  EXPECT_DOUBLE_EQ(r.value("bytes"), 2.0e9);
  r.add(jobs, -2.25);
  EXPECT_DOUBLE_EQ(r.value("jobs"), 0.0);
}

TEST(Recorder, UnknownNamesGiveZeroAndNull) {
  Recorder r;
  EXPECT_EQ(r.value("nothing"), 0.0);
  EXPECT_EQ(r.find_series("nothing"), nullptr);
  r.counter("c");
  r.series("s");
  EXPECT_EQ(r.value("s"), 0.0);             // a series is not a counter
  EXPECT_EQ(r.find_series("c"), nullptr);   // a counter is not a series
  EXPECT_EQ(r.value("C"), 0.0);             // names are case-sensitive
  EXPECT_EQ(r.counter_names().size(), 1u);  // lookups register nothing
  EXPECT_EQ(r.all_series().size(), 1u);
}

TEST(Recorder, SeriesRecordsInOrder) {
  Recorder r;
  const SeriesId util = r.series("gpu_util");
  r.record(util, Time::ms(1), 0.5);
  r.record(util, Time::ms(2), 0.75);
  r.record(util, Time::ms(2), 0.8);  // equal times are allowed
  r.record(util, Time::s(1), 0.0);
  const TimeSeries* s = r.find_series("gpu_util");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name, "gpu_util");
  EXPECT_EQ(s->times, (std::vector<Time>{Time::ms(1), Time::ms(2), Time::ms(2), Time::s(1)}));
  EXPECT_EQ(s->values, (std::vector<double>{0.5, 0.75, 0.8, 0.0}));
  EXPECT_EQ(r.series("gpu_util").index, util.index);
}

TEST(Recorder, OutOfOrderRecordThrowsAndKeepsTheSeries) {
  Recorder r;
  const SeriesId q = r.series("queue_len");
  r.record(q, Time::ms(5), 3);
  EXPECT_THROW(r.record(q, Time::ms(4), 2), std::invalid_argument);
  EXPECT_THROW(r.record(q, Time::ns(4'999'999), 2), std::invalid_argument);
  const TimeSeries* s = r.find_series("queue_len");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->times.size(), 1u);
  EXPECT_EQ(s->values.size(), 1u);
  // Order is per series: another series may start earlier.
  const SeriesId other = r.series("other");
  EXPECT_NO_THROW(r.record(other, Time::ms(1), 1));
  EXPECT_NO_THROW(r.record(q, Time::ms(5), 4));
}

TEST(Recorder, RegistrationOrderIsKept) {
  Recorder r;
  const std::vector<std::string> names = {"zeta", "alpha", "mid", "beta", "omega"};
  for (const auto& n : names) {
    r.counter(n);
    r.series("s_" + n);
  }
  r.counter("alpha");  // re-registering moves nothing
  r.series("s_zeta");
  EXPECT_EQ(r.counter_names(), names);
  ASSERT_EQ(r.all_series().size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(r.all_series()[i].name, "s_" + names[i]);
    EXPECT_EQ(r.counter(names[i]).index, i);
    EXPECT_EQ(r.series("s_" + names[i]).index, i);
  }
}

TEST(Recorder, SeriesPointerSeesLaterRecords) {
  Recorder r;
  const SeriesId id = r.series("x");
  r.record(id, Time::ns(1), 1.0);
  r.record(id, Time::ns(2), 2.0);
  const TimeSeries* s = r.find_series("x");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s, &r.all_series()[id.index]);
  EXPECT_EQ(s->values.back(), 2.0);
}

}  // namespace
}  // namespace dlsim::sim

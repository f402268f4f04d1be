// ProgressBar: one redrawn line on a terminal for long runs (cluster jobs done, training
// configurations done, sweep variants done): label, bar, done/total, rate per second and the
// time remaining ("ETA 3 min 20 s"). It redraws at most every 0.2 s (steady clock), so calling
// update() often costs a clock read. Disabled, it prints nothing at all; finish() ends the line
// only when something was drawn.
//
// Not thread-safe by design: call update() and finish() from one thread (a sweep's workers
// report to the thread that owns the bar). It never writes outside `out`.
#pragma once
#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

namespace dlsim::experiment {

// "42 s", "3 min 20 s", "2 h 05 min", "3 d 4 h"; "?" when unknown (negative, NaN, infinite).
std::string format_eta(double seconds);

// Items per second, three significant figures: "0.512/s", "12.3/s", "4,560/s", "12.3 k/s",
// "1.23 M/s"; "-/s" when unknown (not positive or not finite).
std::string format_rate(double per_second);

// A count: an integer when it is one ("1,234"), else one decimal ("12.5").
std::string format_count(double value);

// Whether standard error is a terminal (isatty(2)): where a progress bar belongs.
bool stderr_is_terminal();

class ProgressBar {
 public:
  ProgressBar(std::ostream& out, std::string label, double total, bool enabled);
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // `done` of `total` so far. The first call draws; later ones at most every 0.2 s.
  void update(double done);
  // Draws the last state and a newline, once, if anything was drawn; later updates draw nothing.
  void finish();

  bool enabled() const { return enabled_; }
  // The line as update() would draw it for `done` after `elapsed_s` (without the leading '\r').
  std::string line(double done, double elapsed_s) const;

 private:
  using Clock = std::chrono::steady_clock;
  void draw(double done);

  std::ostream& out_;
  std::string label_;
  double total_;
  bool enabled_;
  bool drawn_ = false;
  bool finished_ = false;
  double last_done_ = 0;
  std::size_t last_width_ = 0;
  Clock::time_point start_, last_draw_;
};

}  // namespace dlsim::experiment

#include "experiment/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace dlsim::experiment {
namespace {

constexpr double kRedrawS = 0.2;
constexpr int kBarWidth = 24;

// Thousands separated by commas: 1234567 -> "1,234,567".
std::string grouped(long long n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string printf_string(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

}  // namespace

std::string format_eta(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long long s = std::llround(seconds);
  if (s < 60) return std::to_string(s) + " s";
  if (s < 3600) return std::to_string(s / 60) + " min " + std::to_string(s % 60) + " s";
  if (s < 86400) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%lld h %02lld min", s / 3600, (s % 3600) / 60);
    return buf;
  }
  return std::to_string(s / 86400) + " d " + std::to_string((s % 86400) / 3600) + " h";
}

std::string format_rate(double per_second) {
  if (!std::isfinite(per_second) || per_second <= 0) return "-/s";
  if (per_second < 1) return printf_string("%.3f/s", per_second);
  if (per_second < 100) return printf_string("%.1f/s", per_second);
  if (per_second < 10'000) return grouped(std::llround(per_second)) + "/s";
  if (per_second < 1e6) return printf_string("%.1f k/s", per_second / 1e3);
  return printf_string("%.2f M/s", per_second / 1e6);
}

std::string format_count(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9e15) return grouped(static_cast<long long>(value));
  return printf_string("%.1f", value);
}

bool stderr_is_terminal() { return isatty(2) == 1; }

ProgressBar::ProgressBar(std::ostream& out, std::string label, double total, bool enabled)
    : out_(out), label_(std::move(label)), total_(total), enabled_(enabled), start_(Clock::now()), last_draw_(start_) {}

std::string ProgressBar::line(double done, double elapsed_s) const {
  const double fraction = total_ > 0 ? std::clamp(done / total_, 0.0, 1.0) : 0.0;
  const int filled = static_cast<int>(fraction * kBarWidth);
  std::string s = label_ + " [" + std::string(static_cast<std::size_t>(filled), '#') +
                  std::string(static_cast<std::size_t>(kBarWidth - filled), '.') + "] " + format_count(done) + "/" +
                  format_count(total_);
  const double rate = elapsed_s > 0 ? done / elapsed_s : 0.0;
  s += "  " + format_rate(rate);
  if (total_ > 0 && done >= total_) return s + "  done in " + format_eta(elapsed_s);
  s += "  ETA " + format_eta(rate > 0 ? (total_ - done) / rate : -1.0);
  return s;
}

void ProgressBar::update(double done) {
  if (!enabled_ || finished_) return;
  last_done_ = done;
  const Clock::time_point now = Clock::now();
  if (drawn_ && std::chrono::duration<double>(now - last_draw_).count() < kRedrawS) return;
  draw(done);
}

void ProgressBar::draw(double done) {
  const Clock::time_point now = Clock::now();
  std::string text = line(done, std::chrono::duration<double>(now - start_).count());
  const std::size_t width = text.size();
  // Blank what a longer previous line left behind.
  if (width < last_width_) text += std::string(last_width_ - width, ' ');
  out_ << '\r' << text << std::flush;
  last_width_ = width;
  last_draw_ = now;
  drawn_ = true;
}

void ProgressBar::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  if (!drawn_) return;
  draw(last_done_);
  out_ << '\n' << std::flush;
}

}  // namespace dlsim::experiment

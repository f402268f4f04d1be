// KernelFamily names and the work of one kernel call (backend.hpp).
#include <stdexcept>

#include "calibration/backend.hpp"

namespace dlsim::calibration {

std::string to_string(KernelFamily f) {
  switch (f) {
    case KernelFamily::gemm: return "gemm";
    case KernelFamily::gemm_naive: return "gemm_naive";
    case KernelFamily::copy: return "copy";
    case KernelFamily::read: return "read";
    case KernelFamily::write: return "write";
    case KernelFamily::elementwise: return "elementwise";
    case KernelFamily::activation: return "activation";
    case KernelFamily::reduction: return "reduction";
    case KernelFamily::softmax: return "softmax";
    case KernelFamily::layernorm: return "layernorm";
    case KernelFamily::host_to_device: return "host_to_device";
    case KernelFamily::device_to_host: return "device_to_host";
    case KernelFamily::launch: return "launch";
  }
  throw std::logic_error("unknown KernelFamily");
}

double KernelCase::flops() const {
  const double e = static_cast<double>(elements);
  const double rows_cols = static_cast<double>(m) * static_cast<double>(n);
  switch (family) {
    case KernelFamily::gemm:
    case KernelFamily::gemm_naive: return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    case KernelFamily::elementwise: return 2.0 * e;  // one multiply, one add
    case KernelFamily::activation: return 8.0 * e;   // tanh-form gelu: nominal count, memory-bound anyway
    case KernelFamily::reduction: return e;
    case KernelFamily::softmax: return 4.0 * rows_cols;    // max, exp, sum, divide
    case KernelFamily::layernorm: return 7.0 * rows_cols;  // mean, variance, normalize
    default: return 0.0;
  }
}

double KernelCase::bytes() const {
  const double es = models::bytes_per_element(precision);
  const double e = static_cast<double>(elements) * es;
  const double rows_cols = static_cast<double>(m) * static_cast<double>(n) * es;
  switch (family) {
    case KernelFamily::gemm:
    case KernelFamily::gemm_naive:
      return es * (static_cast<double>(m) * static_cast<double>(k) + static_cast<double>(k) * static_cast<double>(n) +
                   static_cast<double>(m) * static_cast<double>(n));
    case KernelFamily::copy: return 2.0 * e;         // read one buffer, write another
    case KernelFamily::read:
    case KernelFamily::write:
    case KernelFamily::reduction:
    case KernelFamily::host_to_device:
    case KernelFamily::device_to_host: return e;
    case KernelFamily::elementwise: return 3.0 * e;  // read x and y, write y
    case KernelFamily::activation: return 2.0 * e;   // read x, write y
    case KernelFamily::softmax:
    case KernelFamily::layernorm: return 2.0 * rows_cols;
    case KernelFamily::launch: return 0.0;
  }
  return 0.0;
}

}  // namespace dlsim::calibration

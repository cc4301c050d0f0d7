// Fused bias + GELU (exact, erf form) and its backward, for float32 and float64.
//
// Inputs arrive as NumPy arrays that share memory with the torchplug tensors (zero-copy: the
// Python side passes contiguous tensors' .numpy()); outputs are allocated here and wrapped by
// torchplug.from_numpy without a copy.  The loops run with the GIL released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

template <typename T>
using carray = py::array_t<T, py::array::c_style>;

template <typename T>
void check_bias(const carray<T>& x, const carray<T>& bias, const char* op) {
  if (bias.ndim() != 1 || x.ndim() < 1 || x.shape(x.ndim() - 1) != bias.shape(0)) {
    throw std::invalid_argument(std::string(op) + ": bias must be 1-D with as many elements as the last dimension of x");
  }
}

// erf for float32 as a rational function on [-4, 4] (Eigen's generic_fast_erf_float
// coefficients; max error ~4e-7, i.e. a few float32 ulps): branch-free, so the loop below
// vectorizes, unlike a call to std::erf per element.  float64 keeps std::erf.
inline float erf_of(float a) {
  const float x = std::min(4.0f, std::max(-4.0f, a));
  const float x2 = x * x;
  float p = -2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 + -2.10102402082508e-06f;
  p = p * x2 + -5.69250639462346e-05f;
  p = p * x2 + -7.34990630326855e-04f;
  p = p * x2 + -2.95459980854025e-03f;
  p = p * x2 + -1.60960333262415e-02f;
  p = p * x;
  float q = -1.45660718464996e-05f;
  q = q * x2 + -2.13374055278905e-04f;
  q = q * x2 + -1.68282697438203e-03f;
  q = q * x2 + -7.37332916720468e-03f;
  q = q * x2 + -1.42647390514189e-02f;
  return p / q;
}

inline double erf_of(double x) { return std::erf(x); }

std::vector<py::ssize_t> shape_of(const py::array& a) {
  return std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim());
}

template <typename T>
py::array_t<T> bias_gelu(carray<T> x, carray<T> bias) {
  check_bias(x, bias, "bias_gelu");
  py::array_t<T> out(shape_of(x));
  const T* xp = x.data();
  const T* bp = bias.data();
  T* op = out.mutable_data();
  const py::ssize_t n = x.size(), h = bias.shape(0);
  {
    py::gil_scoped_release release;
    const T inv_sqrt2 = static_cast<T>(M_SQRT1_2);
    // rows x h, so the inner loop has unit stride in x, bias and out (vectorizable)
    for (py::ssize_t row = 0; row < n; row += h) {
      const T* xr = xp + row;
      T* orow = op + row;
      for (py::ssize_t j = 0; j < h; ++j) {
        const T v = xr[j] + bp[j];
        orow[j] = T(0.5) * v * (T(1) + erf_of(v * inv_sqrt2));
      }
    }
  }
  return out;
}

// d/dv gelu(v) = Phi(v) + v * phi(v); returns grad * that (the gradient w.r.t. x; the bias
// gradient is its sum over the leading dimensions).
template <typename T>
py::array_t<T> bias_gelu_backward(carray<T> grad, carray<T> x, carray<T> bias) {
  check_bias(x, bias, "bias_gelu_backward");
  if (grad.size() != x.size()) throw std::invalid_argument("bias_gelu_backward: grad and x must have the same shape");
  py::array_t<T> out(shape_of(x));
  const T* gp = grad.data();
  const T* xp = x.data();
  const T* bp = bias.data();
  T* op = out.mutable_data();
  const py::ssize_t n = x.size(), h = bias.shape(0);
  {
    py::gil_scoped_release release;
    const T inv_sqrt2 = static_cast<T>(M_SQRT1_2);
    const T inv_sqrt2pi = static_cast<T>(0.3989422804014327);
    for (py::ssize_t row = 0; row < n; row += h) {
      for (py::ssize_t j = 0; j < h; ++j) {
        const py::ssize_t i = row + j;
        const T v = xp[i] + bp[j];
        const T cdf = T(0.5) * (T(1) + erf_of(v * inv_sqrt2));
        const T pdf = inv_sqrt2pi * std::exp(T(-0.5) * v * v);
        op[i] = gp[i] * (cdf + v * pdf);
      }
    }
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "C++ kernels of torchplug-fused-ops";
  // Overloads are tried without conversion first, so each dtype picks its own instantiation
  // and no input is copied.
  m.def("bias_gelu", &bias_gelu<float>, py::arg("x"), py::arg("bias"));
  m.def("bias_gelu", &bias_gelu<double>, py::arg("x"), py::arg("bias"));
  m.def("bias_gelu_backward", &bias_gelu_backward<float>, py::arg("grad"), py::arg("x"), py::arg("bias"));
  m.def("bias_gelu_backward", &bias_gelu_backward<double>, py::arg("grad"), py::arg("x"), py::arg("bias"));
}

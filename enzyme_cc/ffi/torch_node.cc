// The autograd node of a torch op's split-mode call, in C++: the recorded forward runs the
// augmented forward entry ecc_augfwd_<name> and gives its outputs a node whose backward runs
// ecc_reverse_<name> on the tapes it kept, with no Python on the way (issue 25: a Python
// autograd.Function costs about twice a C++ one per step on small tensors). Every case the
// plain path does not cover (create_graph, batched or non-CPU cotangents, an output changed in
// place, a second backward, a gradient asked of a diff=False input) calls the op's Python
// fallback, which runs the combined VJP as enzyme_cc/torch.py does. Built once per torch
// version (enzyme_cc/torch_node.py).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/csrc/utils/pybind.h>

namespace py = pybind11;
using torch::autograd::Node;
using torch::autograd::SavedVariable;
using torch::autograd::variable_list;
typedef void (*Entry)(int64_t, const int64_t *, void *const *, const int64_t *);

// One prepared split call (runtime.Prepared): what depends only on the shapes.
struct Plan {
  Entry aug, rev;
  int64_t batch, tape_bytes;
  std::vector<int64_t> ints, strides;
  std::vector<std::vector<int64_t>> shapes;   // results: outputs, diff inputs' shadows,
  std::vector<at::ScalarType> dtypes;         //   outputs' shadows
  size_t nout;
  std::vector<bool> diff;                     // per input
  int8_t *split_on;                           // the op's flag: cleared when a graph is dropped
  py::object fallback;                        // (inputs, cotangents, needs) -> gradients

  ~Plan() {  // (the fallback is a Python object; at exit, left to the interpreter)
#if PY_VERSION_HEX >= 0x030D0000
    bool exiting = Py_IsFinalizing();
#else
    bool exiting = _Py_IsFinalizing();
#endif
    if (!Py_IsInitialized() || exiting) {
      fallback.release();
      return;
    }
    py::gil_scoped_acquire gil;
    fallback = py::object();
  }
};

static const c10::DispatchKeySet kNotPlain({
    c10::DispatchKey::FuncTorchBatched, c10::DispatchKey::FuncTorchGradWrapper,
    c10::DispatchKey::Batched, c10::DispatchKey::Python, c10::DispatchKey::Functionalize,
    c10::DispatchKey::Conjugate, c10::DispatchKey::Negative, c10::DispatchKey::ZeroTensor,
    c10::DispatchKey::FuncTorchVmapMode, c10::DispatchKey::PythonTLSSnapshot});

struct SplitBackward : public Node {
  std::shared_ptr<Plan> plan;
  std::vector<SavedVariable> saved;         // the inputs, as torch saves them (hooks, versions)
  std::vector<at::Tensor> keep;             // inputs, results and tape: the pointers stay valid
  std::vector<void *> ptrs;                 // the augmented forward's buffers, for the reverse
  std::vector<c10::VariableVersion> out_versions;
  std::vector<uint32_t> out_seen;
  bool pending = true;                      // the reverse has not run yet

  std::string name() const override { return "EnzymeCcSplitBackward"; }

  // Zero cotangents into the outputs' shadows and the reverse: frees the tapes and what the
  // augmented forward kept for the reverse.
  void discard() {
    if (!pending) return;
    pending = false;
    for (size_t k = 0; k < plan->nout; k++) dout(k).zero_();
    run_reverse();
  }

  void run_reverse() {
    plan->rev(plan->batch, plan->ints.data(), ptrs.data(), plan->strides.data());
    keep.clear();
    ptrs.clear();
  }

  at::Tensor &dout(size_t k) { return keep[keep.size() - 1 - plan->nout + k]; }
  at::Tensor &din(size_t j) { return keep[saved.size() + plan->nout + j]; }

  bool plain(const variable_list &grads) {
    if (!pending || at::GradMode::is_enabled()) return false;
    for (size_t k = 0; k < plan->nout; k++)
      if (out_versions[k].current_version() != out_seen[k]) return false;
    for (size_t i = 0; i < saved.size(); i++)
      if (!plan->diff[i] && task_should_compute_output(i)) return false;
    for (size_t k = 0; k < grads.size(); k++) {
      const at::Tensor &g = grads[k];
      if (!g.defined()) continue;
      if (g.layout() != at::kStrided || !g.device().is_cpu() ||
          g.scalar_type() != plan->dtypes[k] || g.sizes() != at::IntArrayRef(plan->shapes[k]) ||
          !(g.key_set() & kNotPlain).empty())
        return false;
    }
    return true;
  }

  variable_list apply(variable_list &&grads) override {
    std::vector<at::Tensor> xs;
    for (auto &s : saved) xs.push_back(s.unpack(getptr()));  // (once: checkpoint)
    if (!plain(grads)) {
      discard();
      py::gil_scoped_acquire gil;
      py::tuple needs(saved.size());
      for (size_t i = 0; i < saved.size(); i++) needs[i] = task_should_compute_output(i);
      auto res = plan->fallback(xs, grads, needs).cast<std::vector<std::optional<at::Tensor>>>();
      variable_list out;
      for (auto &r : res) out.push_back(r ? *r : at::Tensor());
      return out;
    }
    for (size_t k = 0; k < plan->nout; k++) {
      if (grads[k].defined())
        dout(k).copy_(grads[k]);
      else
        dout(k).zero_();
    }
    pending = false;
    variable_list out(saved.size());
    size_t j = 0;
    for (size_t i = 0; i < saved.size(); i++)
      if (plan->diff[i]) out[i] = din(j++);
    if (PyGILState_Check()) {  // (the engine usually runs without it)
      py::gil_scoped_release nogil;
      run_reverse();
    } else {
      run_reverse();
    }
    return out;
  }

  void release_variables() override {
    for (auto &s : saved) s.reset_data();
  }

  ~SplitBackward() override {
    if (pending) {  // the graph was dropped without a backward
      *plan->split_on = 0;
      discard();
    }
  }
};

static std::shared_ptr<Plan> make_plan(int64_t aug, int64_t rev, int64_t batch,
                                       int64_t tape_bytes, std::vector<int64_t> ints,
                                       std::vector<int64_t> strides,
                                       std::vector<std::vector<int64_t>> shapes,
                                       std::vector<at::ScalarType> dtypes, size_t nout,
                                       std::vector<bool> diff, int64_t split_on,
                                       py::object fallback) {
  auto p = std::make_shared<Plan>();
  p->aug = reinterpret_cast<Entry>(aug);
  p->rev = reinterpret_cast<Entry>(rev);
  p->batch = batch;
  p->tape_bytes = tape_bytes;
  ints.push_back(0);  // never an empty array
  p->ints = std::move(ints);
  p->strides = std::move(strides);
  p->shapes = std::move(shapes);
  p->dtypes = std::move(dtypes);
  p->nout = nout;
  p->diff = std::move(diff);
  p->split_on = reinterpret_cast<int8_t *>(split_on);
  p->fallback = std::move(fallback);
  return p;
}

// The recorded call: inputs are CPU tensors of the declared dtypes, contiguous (the caller
// checked); returns the outputs, recorded with one SplitBackward node.
static py::object split_call(const std::shared_ptr<Plan> &plan, const py::tuple &args) {
  const Plan &p = *plan;
  size_t n = args.size();
  std::vector<at::Tensor> inputs;
  inputs.reserve(n);
  for (auto a : args) inputs.push_back(THPVariable_Unpack(a.ptr()));
  auto node = c10::make_intrusive<SplitBackward>();
  node->plan = plan;
  node->keep = inputs;
  for (size_t k = 0; k < p.shapes.size(); k++)
    node->keep.push_back(at::empty(p.shapes[k], at::TensorOptions().dtype(p.dtypes[k])));
  node->keep.push_back(at::empty({p.tape_bytes}, at::TensorOptions().dtype(at::kByte)));
  for (auto &t : node->keep) node->ptrs.push_back(t.data_ptr());
  {
    py::gil_scoped_release nogil;
    p.aug(p.batch, p.ints.data(), node->ptrs.data(), p.strides.data());
  }
  node->set_next_edges(torch::autograd::collect_next_edges(at::ArrayRef<at::Tensor>(inputs)));
  for (auto &x : inputs) node->saved.emplace_back(x, false);
  py::tuple outs(p.nout);
  for (size_t k = 0; k < p.nout; k++) {
    // the node must not own its outputs (a cycle through their grad_fn): it keeps an alias
    // with the same storage and version counter
    at::Tensor o = node->keep[n + k];
    node->keep[n + k] = o.detach();
    node->out_versions.push_back(torch::autograd::impl::version_counter(o));
    node->out_seen.push_back(node->out_versions.back().current_version());
    torch::autograd::set_history(o, node);
    outs[k] = py::reinterpret_steal<py::object>(THPVariable_Wrap(o));
  }
  if (p.nout == 1) return outs[0];
  return outs;
}

PYBIND11_MODULE(enzyme_cc_torch_node, m) {
  py::class_<Plan, std::shared_ptr<Plan>>(m, "Plan");
  m.def("make_plan", &make_plan);
  m.def("split_call", &split_call);
}

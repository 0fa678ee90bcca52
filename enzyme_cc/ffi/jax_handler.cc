// One XLA FFI handler for every enzyme_cc function: it hands the call's buffers to an entry point
// ecc_{primal,vjp,jvp}_<name> (whose address is the attribute `fn`) with the batch size, the Int
// values and the buffers' batch strides. Built once per jaxlib against the headers it ships.
#include <cstdint>
#include <vector>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
typedef void (*Entry)(int64_t, const int64_t *, void *const *, const int64_t *);

static ffi::Error Call(ffi::RemainingArgs args, ffi::RemainingRets rets, int64_t fn,
                       int64_t batch, ffi::Span<const int64_t> ints,
                       ffi::Span<const int64_t> strides) {
  std::vector<void *> bufs;
  for (size_t i = 0; i < args.size(); i++) {
    auto b = args.get<ffi::AnyBuffer>(i);
    if (b.has_error()) return b.error();
    bufs.push_back(b->untyped_data());
  }
  for (size_t i = 0; i < rets.size(); i++) {
    auto r = rets.get<ffi::AnyBuffer>(i);
    if (r.has_error()) return r.error();
    bufs.push_back((*r)->untyped_data());
  }
  if (strides.size() != bufs.size())
    return ffi::Error(ffi::ErrorCode::kInvalidArgument, "enzyme_cc: stride count mismatch");
  std::vector<int64_t> iv(ints.begin(), ints.end());
  iv.push_back(0);  // never an empty array
  reinterpret_cast<Entry>(fn)(batch, iv.data(), bufs.data(), strides.begin());
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(EnzymeCcCall, Call,
                              ffi::Ffi::Bind()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attr<int64_t>("fn")
                                  .Attr<int64_t>("batch")
                                  .Attr<ffi::Span<const int64_t>>("ints")
                                  .Attr<ffi::Span<const int64_t>>("strides"));

// --check-tensors: every tensor's data is checked before the model serves, as the
// reference's ggml_validate_row_data checks it: no NaN or infinity among the values of
// F32, F16, BF16 and F64 tensors, and none in the block scales of quantized ones (the f16/f32
// `d`, `m` and `dmin` fields of each block; MXFP4's E8M0 exponent may not be 0xff).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "gguf/file.h"

namespace hearth::engine {

// What is wrong with one tensor's data ("NaN at row 2, column 5", "infinite block scale dmin
// in row 0, block 3"), or nullopt when it is valid.
std::optional<std::string> find_invalid_data(const gguf::TensorInfo& tensor);

// Checks every tensor of the archive on `n_threads` threads (0: the hardware's). kCorruptFile
// "tensor '<name>' has invalid data: <what>" for the first bad tensor in file order, counting
// the others.
Status check_tensor_data(const gguf::Archive& archive, int n_threads = 0);

}  // namespace hearth::engine

#include "engine/model.h"

#include <algorithm>

#include "engine/forward.h"
#include "engine/ops.h"
#include "kernels/quant.h"

namespace hearth::engine {

void Model::embed_input(ForwardState& st) const {
  const WeightMatrix& emb = weights_.token_embd;
  const int64_t E = hparams_.n_embd;
  for (int64_t i = 0; i < st.n_tokens(); ++i) {
    const BatchToken& bt = st.tokens[static_cast<size_t>(i)];
    if (bt.embd != nullptr) {  // a media row: its embedding as given
      std::copy_n(bt.embd, E, st.s.x.data() + i * E);
      continue;
    }
    const auto* row =
        static_cast<const uint8_t*>(emb.data) + static_cast<size_t>(bt.token) * emb.row_stride;
    kernels::dequantize_row(emb.type, row, st.s.x.data() + i * E, E);
  }
}

void Model::final_hidden(const float* x, float* out) const {
  ops::rms_norm(x, weights_.output_norm.data(), out, hparams_.n_embd, hparams_.rms_eps);
}

}  // namespace hearth::engine

// The projector outputs the reference's dumpers wrote (data/README.md and
// tests/data/media/audio_encoder/README.md): a header line "# ...", then "sum t S L" for every
// token t (sum and L2 norm of its row) and "row t v0 v1 ..." for the dumped tokens.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/test_paths.h"

namespace hearth::media::test_rows {

struct ReferenceRows {
  int32_t n_tokens = 0, n_embd = 0;
  // The header's value after n_embd: non_causal (one image), image_chunks (several), or for
  // audio non_causal; -1 when the header has none.
  int32_t header_value = -1;
  std::vector<double> sums, norms;                           // per token
  std::vector<std::pair<int32_t, std::vector<float>>> rows;  // (token, row) of the dumped ones
};

// Reads the rest of a "# ..." line into r (the text after the '#').
using HeaderReader = std::function<void(std::istringstream& line, ReferenceRows& r)>;

// The vision dumpers' header: "n_tokens N n_embd M [key V]".
inline void read_vision_header(std::istringstream& line, ReferenceRows& r) {
  std::string k1, k2, k3;
  line >> k1 >> r.n_tokens >> k2 >> r.n_embd;
  if (!(line >> k3 >> r.header_value)) r.header_value = -1;
}

inline ReferenceRows read_reference_rows(const std::string& path,
                                         const HeaderReader& header = read_vision_header) {
  ReferenceRows r;
  std::istringstream in(test::read_file(path));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "#") {
      header(ls, r);
    } else if (tag == "sum") {
      int t = 0;
      double s = 0, q = 0;
      ls >> t >> s >> q;
      r.sums.push_back(s);
      r.norms.push_back(q);
    } else if (tag == "row") {
      int t = 0;
      ls >> t;
      std::vector<float> row;
      float v = 0;
      while (ls >> v) row.push_back(v);
      r.rows.emplace_back(t, std::move(row));
    }
  }
  return r;
}

inline double cosine(const float* a, const float* b, size_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < n; ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

}  // namespace hearth::media::test_rows

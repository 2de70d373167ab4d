// The media encoder's pieces: an image becomes one chunk between the projector's texts
// (gemma3 style), one chunk of joined tiles (internvl) or, for idefics3 and lfm2, a chunk per
// tile and for the overview with mtmd's slice-template texts between them; every chunk of a content
// has a placeholder of its own, the same each time that content comes back (also once its
// embeddings left the cache), and never one another content has.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "media/projector.h"
#include "scheduler/media_encoder.h"
#include "support/test_paths.h"
#include "tools/synth/synth.h"

namespace hearth::scheduler::detail {
namespace {

std::span<const uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string media_file(const std::string& name) {
  return test::read_file(std::string(HEARTH_SOURCE_DIR) + "/tests/data/media/" + name);
}

// "text(..)", "token(..)" and "chunkN" (N tokens) for each piece.
std::string describe(const EncodedMedia& m) {
  std::string out;
  for (const MediaPiece& p : m.pieces) {
    if (p.kind == MediaPiece::Kind::kText) out += "text(" + p.text + ") ";
    if (p.kind == MediaPiece::Kind::kToken) out += "token(" + p.text + ") ";
    if (p.kind == MediaPiece::Kind::kChunk) out += "chunk" + std::to_string(p.chunk.n_tokens) + " ";
  }
  return out;
}

std::vector<int32_t> placeholders(const EncodedMedia& m) {
  std::vector<int32_t> out;
  for (const MediaPiece& p : m.pieces)
    if (p.kind == MediaPiece::Kind::kChunk) out.push_back(p.chunk.placeholder);
  return out;
}

class MediaEncoderTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("media-encoder"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // 32-px tiles of 8-px patches merged 2x2 (4 tokens a tile); idefics3 resizes the longest
  // edge to 64 first. lfm2: 32-px patches (its tiles are always 512 px: 64 tokens each) and at
  // most 64 tokens an image, so a 1024x768 image is tiled.
  std::unique_ptr<MediaEncoder> encoder(const std::string& family, size_t cache_bytes) {
    synth::SynthParams p;
    p.projector = family;
    p.text_n_embd = 64;
    p.n_embd = 64;
    p.n_layer = 1;
    p.n_head = 4;
    p.n_ff = 128;
    p.image_size = 32;
    p.patch_size = 8;
    p.n_merge = 2;
    p.preproc_image_size = family == "idefics3" ? 64 : 0;
    if (family == "lfm2") {
      p.image_size = 512;
      p.patch_size = 32;
    }
    p.type = TensorType::kF32;
    const std::string path = dir_ + "/" + family + ".gguf";
    EXPECT_TRUE(synth::synthesize(p, path).is_ok());
    auto proj = media::Projector::load(path, 64);
    EXPECT_TRUE(proj.is_ok()) << proj.status().to_string();
    if (!proj.is_ok()) return nullptr;
    MediaConfig config;
    config.projector = std::move(*proj);
    config.cache_bytes = cache_bytes;
    if (family == "lfm2") config.image_max_tokens = 64;
    auto enc = MediaEncoder::create(config, 1);
    EXPECT_TRUE(enc.is_ok()) << enc.status().to_string();
    return enc.is_ok() ? std::move(*enc) : nullptr;
  }

  std::string dir_;
};

// grad_37x23.png: longest edge 64 gives 64x40, rounded up to 64x64: 2x2 tiles.
TEST_F(MediaEncoderTest, Idefics3GivesAChunkPerTileWithTextsBetween) {
  auto enc = encoder("idefics3", size_t{64} << 20);
  ASSERT_NE(enc, nullptr);
  const std::string png = media_file("grad_37x23.png");
  auto first = enc->encode(as_bytes(png), nullptr);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  EXPECT_EQ(describe(*first),
            "text(<fake_token_around_image><row_1_col_1>) chunk4 "
            "text(<fake_token_around_image><row_1_col_2>) chunk4 token(\n) "
            "text(<fake_token_around_image><row_2_col_1>) chunk4 "
            "text(<fake_token_around_image><row_2_col_2>) chunk4 "
            "token(\n\n) token(<fake_token_around_image>) token(<global-img>) chunk4 "
            "token(<fake_token_around_image>) ");
  const std::vector<int32_t> ids = placeholders(*first);
  ASSERT_EQ(ids.size(), 5u);
  EXPECT_EQ(std::set<int32_t>(ids.begin(), ids.end()).size(), 5u) << "placeholders are distinct";
  for (int32_t id : ids) EXPECT_LT(id, 0);
  for (const MediaPiece& p : first->pieces)
    if (p.kind == MediaPiece::Kind::kChunk) {
      ASSERT_NE(p.chunk.embd, nullptr);
      EXPECT_EQ(p.chunk.embd->size(), size_t{4} * 64);
      EXPECT_FALSE(p.chunk.non_causal);
    }

  // The same bytes again: the same placeholders, the remembered embeddings.
  auto again = enc->encode(as_bytes(png), nullptr);
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(placeholders(*again), ids);
  EXPECT_EQ(again->pieces[1].chunk.embd, first->pieces[1].chunk.embd);

  // Another image: none of the first one's placeholders.
  auto other = enc->encode(as_bytes(media_file("palette_40x26.png")), nullptr);
  ASSERT_TRUE(other.is_ok()) << other.status().to_string();
  for (int32_t id : placeholders(*other))
    EXPECT_EQ(std::count(ids.begin(), ids.end(), id), 0) << id;
}

// Without room in the cache the embeddings are encoded again, but the placeholders stay the
// content's, so the prefix cache still matches the image.
TEST_F(MediaEncoderTest, PlaceholdersOutliveTheEmbeddingCache) {
  auto enc = encoder("idefics3", 0);
  ASSERT_NE(enc, nullptr);
  const std::string png = media_file("grad_37x23.png");
  auto first = enc->encode(as_bytes(png), nullptr);
  auto other = enc->encode(as_bytes(media_file("pixel_1x1.png")), nullptr);
  auto again = enc->encode(as_bytes(png), nullptr);
  ASSERT_TRUE(first.is_ok() && other.is_ok() && again.is_ok());
  EXPECT_EQ(placeholders(*again), placeholders(*first));
  EXPECT_NE(again->pieces[1].chunk.embd, first->pieces[1].chunk.embd) << "encoded again";
  EXPECT_EQ(*again->pieces[1].chunk.embd, *first->pieces[1].chunk.embd);
}

// lfm2 (mtmd's lfm2 slice template): the image between "<|image_start|>" and "<|image_end|>";
// big_1024x768.jpg is cut into 3x2 tiles, each its own chunk after "<|img_row_R_col_C|>",
// then the thumbnail after the "<|img_thumbnail|>" token; a small image is one chunk.
TEST_F(MediaEncoderTest, Lfm2GivesAChunkPerTileAndTheThumbnail) {
  auto enc = encoder("lfm2", size_t{64} << 20);
  ASSERT_NE(enc, nullptr);
  auto m = enc->encode(as_bytes(media_file("big_1024x768.jpg")), nullptr);
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  ASSERT_EQ(m->pieces.size(), 16u);
  const int32_t thumbnail = m->pieces[14].chunk.n_tokens;
  EXPECT_GT(thumbnail, 0);
  EXPECT_EQ(describe(*m),
            "text(<|image_start|>) text(<|img_row_1_col_1|>) chunk64 text(<|img_row_1_col_2|>) "
            "chunk64 text(<|img_row_1_col_3|>) chunk64 text(<|img_row_2_col_1|>) chunk64 "
            "text(<|img_row_2_col_2|>) chunk64 text(<|img_row_2_col_3|>) chunk64 "
            "token(<|img_thumbnail|>) chunk" +
                std::to_string(thumbnail) + " text(<|image_end|>) ");
  auto small = enc->encode(as_bytes(media_file("grad_37x23.png")), nullptr);
  ASSERT_TRUE(small.is_ok()) << small.status().to_string();
  ASSERT_EQ(small->pieces.size(), 3u);
  EXPECT_EQ(small->pieces[0].text, "<|image_start|>");
  EXPECT_EQ(small->pieces[1].kind, MediaPiece::Kind::kChunk);
  EXPECT_EQ(small->pieces[2].text, "<|image_end|>");
}

// internvl keeps its tiles in one chunk between "<img>" and "</img>" (wide_1100x60.jpg is
// cut into tiles), as before pieces existed.
TEST_F(MediaEncoderTest, InternVlJoinsItsTilesIntoOneChunk) {
  auto enc = encoder("internvl", size_t{64} << 20);
  ASSERT_NE(enc, nullptr);
  auto m = enc->encode(as_bytes(media_file("wide_1100x60.jpg")), nullptr);
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  ASSERT_EQ(m->pieces.size(), 3u);
  EXPECT_EQ(m->pieces[0].text, "<img>");
  EXPECT_EQ(m->pieces[2].text, "</img>");
  ASSERT_EQ(m->pieces[1].kind, MediaPiece::Kind::kChunk);
  EXPECT_GT(m->pieces[1].chunk.n_tokens, 4) << "several tiles in the one chunk";
  EXPECT_EQ(m->pieces[1].chunk.n_tokens % 4, 0);
}

}  // namespace
}  // namespace hearth::scheduler::detail

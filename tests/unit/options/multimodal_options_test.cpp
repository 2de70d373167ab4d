// The projector options: -mm, --no-mmproj, the image token bounds and --media-path are
// stored for start-up; --media-path must name an existing directory, as the reference checks.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/test_paths.h"
#include "unit/options/options_test_util.h"

namespace hearth::server::options {
namespace {

using test::parse;
using test::parse_ok;

TEST(MultimodalOptionsTest, ProjectorOptionsAreStored) {
  ServerArgs defaults = parse_ok({});
  EXPECT_EQ(defaults.mmproj, "");
  EXPECT_TRUE(defaults.mmproj_auto);
  EXPECT_EQ(defaults.image_min_tokens, -1);
  EXPECT_EQ(defaults.image_max_tokens, -1);
  ServerArgs a = parse_ok(
      {"-mm", "p.gguf", "--no-mmproj", "--image-min-tokens", "70", "--image-max-tokens", "300"});
  EXPECT_EQ(a.mmproj, "p.gguf");
  EXPECT_FALSE(a.mmproj_auto);
  EXPECT_EQ(a.image_min_tokens, 70);
  EXPECT_EQ(a.image_max_tokens, 300);
  EXPECT_EQ(parse({"--image-max-tokens", "many"}).action, ParseAction::kError);
}

TEST(MultimodalOptionsTest, MediaPathMustBeADirectory) {
  std::string dir = hearth::test::make_temp_dir("options_media");
  EXPECT_EQ(parse_ok({}).media_path, "");
  EXPECT_EQ(parse_ok({"--media-path", dir}).media_path, dir + "/");
  EXPECT_EQ(parse_ok({"--media-path", dir + "/"}).media_path, dir + "/");
  ParseOutcome missing = parse({"--media-path", dir + "/does-not-exist"});
  EXPECT_EQ(missing.action, ParseAction::kError);
  EXPECT_NE(missing.text.find("not a directory"), std::string::npos) << missing.text;
  std::filesystem::remove_all(dir);
}

// As the reference's presets: the repository (its projector comes with -hf), port 8014,
// the training context, Jinja; later options still override them.
TEST(MultimodalOptionsTest, VisionPresetsSetTheReferencesValues) {
  ServerArgs a = parse_ok({"--vision-gemma-4b-default"});
  EXPECT_EQ(a.hf_repo, "ggml-org/gemma-3-4b-it-qat-GGUF");
  EXPECT_EQ(a.http.port, 8014);
  EXPECT_EQ(a.n_ctx, 0);
  EXPECT_TRUE(a.chat.use_jinja);
  ServerArgs b = parse_ok({"--vision-gemma-12b-default", "--port", "9000"});
  EXPECT_EQ(b.hf_repo, "ggml-org/gemma-3-12b-it-qat-GGUF");
  EXPECT_EQ(b.http.port, 9000);
}

}  // namespace
}  // namespace hearth::server::options

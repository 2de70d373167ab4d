// POST /slots/:id?action=save|restore|erase against the real server.
#include "server/server_fixture.h"

namespace hearth::test {
namespace {

class ServerSlotActions : public StoriesServer {};

TEST_F(ServerSlotActions, SaveEraseRestoreRoundTrip) {
  const std::string dir = make_temp_dir("slots");
  start({"-np", "1", "--slot-save-path", dir});
  const Json request = {{"prompt", "Once upon a time"}, {"n_predict", 8}, {"temperature", 0}};
  int status = 0;
  Json first = post_json(port(), "/completion", request, &status);
  ASSERT_EQ(status, 200);
  const int cached = first["tokens_cached"];

  Json saved = post_json(port(), "/slots/0?action=save", Json{{"filename", "a.bin"}}, &status);
  ASSERT_EQ(status, 200) << saved.dump();
  EXPECT_EQ(saved["id_slot"], 0);
  EXPECT_EQ(saved["filename"], "a.bin");
  EXPECT_EQ(saved["n_saved"], cached);
  EXPECT_GT(saved["n_written"].get<int64_t>(), 0);
  EXPECT_TRUE(saved["timings"].contains("save_ms"));

  Json erased = post_json(port(), "/slots/0?action=erase", Json::object(), &status);
  ASSERT_EQ(status, 200);
  EXPECT_EQ(erased, (Json{{"id_slot", 0}, {"n_erased", cached}}));
  Json slots = parse_or_null(http_request(port(), "GET", "/slots").body);
  EXPECT_EQ(slots[0]["n_prompt_tokens"], 0);

  // Ids beyond the slot count are refused (the reference takes them modulo the slot count;
  // differences.json, slot-id-out-of-range-400) and nothing is restored.
  Json refused = post_json(port(), "/slots/1?action=restore", Json{{"filename", "a.bin"}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(refused["error"]["message"], "Invalid slot ID: 1 is outside 0..0");
  Json restored =
      post_json(port(), "/slots/0?action=restore", Json{{"filename", "a.bin"}}, &status);
  ASSERT_EQ(status, 200) << restored.dump();
  EXPECT_EQ(restored["id_slot"], 0);
  EXPECT_EQ(restored["n_restored"], cached);
  EXPECT_EQ(restored["n_read"], saved["n_written"]);

  // The restored cache serves the same prompt again: all but one prompt token reused.
  Json again = post_json(port(), "/completion", request, &status);
  ASSERT_EQ(status, 200);
  EXPECT_EQ(again["timings"]["cache_n"], 4);
  EXPECT_EQ(again["content"], first["content"]);
}

}  // namespace
}  // namespace hearth::test

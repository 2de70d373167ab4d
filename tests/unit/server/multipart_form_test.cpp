// The multipart/form-data parser (src/server/multipart_form.h): boundaries from the
// Content-Type, parts with their names, filenames and types, the reference's form view, and
// hostile bodies refused with a 400 (never a crash or a hang).
#include "server/multipart_form.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace hearth::server {
namespace {

std::string message_of(const std::optional<ApiError>& err) {
  return err ? err->message : "";
}

TEST(MultipartBoundary, TokenOrQuoted) {
  std::string b;
  EXPECT_FALSE(multipart_boundary("multipart/form-data; boundary=abc123", b));
  EXPECT_EQ(b, "abc123");
  EXPECT_FALSE(multipart_boundary("multipart/form-data; charset=utf-8; boundary=\"a b;c\"", b));
  EXPECT_EQ(b, "a b;c");
  EXPECT_FALSE(multipart_boundary("Multipart/Form-Data;BOUNDARY=x", b));
  EXPECT_EQ(b, "x");
  EXPECT_TRUE(is_multipart_form("multipart/form-data; boundary=x"));
  EXPECT_TRUE(is_multipart_form(" MULTIPART/FORM-DATA"));
  EXPECT_FALSE(is_multipart_form("application/json"));
  EXPECT_FALSE(is_multipart_form("multipart/mixed; boundary=x"));
}

TEST(MultipartBoundary, MissingOrInvalidIsRefused) {
  std::string b;
  EXPECT_EQ(message_of(multipart_boundary("multipart/form-data", b)),
            "Invalid multipart/form-data body: the Content-Type has no boundary");
  EXPECT_TRUE(multipart_boundary("multipart/form-data; boundary=", b));
  EXPECT_TRUE(multipart_boundary("multipart/form-data; boundary=\"\"", b));
  EXPECT_TRUE(multipart_boundary("multipart/form-data; boundary=\"abc", b));
  EXPECT_TRUE(multipart_boundary("multipart/form-data; boundary=" + std::string(71, 'a'), b));
  EXPECT_FALSE(multipart_boundary("multipart/form-data; boundary=" + std::string(70, 'a'), b));
  EXPECT_TRUE(multipart_boundary(std::string("multipart/form-data; boundary=a\x01", 33), b));
}

const char kTwoPartsText[] =
    "preamble to ignore\r\n"
    "--XyZ\r\n"
    "Content-Disposition: form-data; name=\"model\"\r\n"
    "\r\n"
    "whisper-1\r\n"
    "--XyZ  \r\n"
    "content-disposition: form-data; name=\"file\"; filename=\"a \\\"b\\\".wav\"\r\n"
    "Content-Type: audio/wav\r\n"
    "\r\n"
    "RIFF\r\n--Xy\0\r\nbytes\r\n"
    "--XyZ--\r\n"
    "epilogue";
const std::string kTwoParts(kTwoPartsText, sizeof(kTwoPartsText) - 1);

TEST(MultipartParse, PartsNamesFilenamesAndTypes) {
  std::vector<FormPart> parts;
  ASSERT_FALSE(parse_multipart_form(kTwoParts, "XyZ", parts));
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].name, "model");
  EXPECT_EQ(parts[0].filename, "");
  EXPECT_EQ(parts[0].content_type, "");
  EXPECT_EQ(parts[0].data, "whisper-1");
  EXPECT_EQ(parts[1].name, "file");
  EXPECT_EQ(parts[1].filename, "a \"b\".wav");
  EXPECT_EQ(parts[1].content_type, "audio/wav");
  // Binary content, with CRLF and a near-boundary inside, is kept byte for byte.
  EXPECT_EQ(parts[1].data, std::string("RIFF\r\n--Xy\0\r\nbytes", 18));
}

TEST(MultipartParse, EmptyContentAndEmptyForm) {
  std::vector<FormPart> parts;
  ASSERT_FALSE(parse_multipart_form(
      "--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n\r\n--b--", "b", parts));
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].data, "");
  ASSERT_FALSE(parse_multipart_form("--b--\r\n", "b", parts));
  EXPECT_TRUE(parts.empty());
}

TEST(MultipartForm, RepeatedFieldsBecomeArraysAndTheLastFileWins) {
  std::vector<FormPart> parts = {{"a", "", "", "1"},
                                 {"b", "", "", "x"},
                                 {"a", "", "", "2"},
                                 {"a", "", "", "3"},
                                 {"file", "one.wav", "", "first"},
                                 {"file", "two.wav", "", "second"}};
  MultipartForm form = to_form(std::move(parts));
  EXPECT_EQ(form.fields["a"], Json::array({"1", "2", "3"}));
  EXPECT_EQ(form.fields["b"], "x");
  EXPECT_FALSE(form.fields.contains("file"));
  ASSERT_EQ(form.files.size(), 1u);
  EXPECT_EQ(form.files["file"].data, "second");
  EXPECT_EQ(form.files["file"].filename, "two.wav");
}

// Each malformed body, and the words its message must hold.
TEST(MultipartParse, MalformedBodiesAreRefusedByName) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "never found"},
      {"no delimiter at all", "never found"},
      {"--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nvalue", "no closing boundary"},
      {"--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nvalue\r\n--b", "CRLF or '--'"},
      {"--bX\r\n", "CRLF or '--'"},
      {"--b\r\nContent-Disposition: form-data\r\n\r\nv\r\n--b--", "has no name"},
      {"--b\r\nContent-Disposition: form-data; name=\"\"\r\n\r\nv\r\n--b--", "has no name"},
      {"--b\r\nContent-Type: text/plain\r\n\r\nv\r\n--b--", "no Content-Disposition"},
      {"--b\r\nContent-Disposition: attachment; name=\"x\"\r\n\r\nv\r\n--b--", "not form-data"},
      {"--b\r\nContent-Disposition: form-data; name=\"x\r\n\r\nv\r\n--b--", "unterminated"},
      {"--b\r\nno colon here\r\n\r\nv\r\n--b--", "without a name"},
      {"--b\r\nContent-Disposition: form-data; name=\"x\"\r\nv\r\n--b--", "blank line"},
  };
  for (const auto& [body, words] : cases) {
    std::vector<FormPart> parts;
    const std::string message = message_of(parse_multipart_form(body, "b", parts));
    EXPECT_NE(message.find(words), std::string::npos) << body << " -> " << message;
    EXPECT_EQ(message.rfind("Invalid multipart/form-data body: ", 0), 0u) << message;
  }
}

TEST(MultipartParse, LimitsOnPartsAndHeaders) {
  std::string body;
  for (int i = 0; i < 5; ++i)
    body += "--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nv\r\n";
  body += "--b--";
  std::vector<FormPart> parts;
  EXPECT_FALSE(parse_multipart_form(body, "b", parts, {.max_parts = 5, .max_header_bytes = 8192}));
  EXPECT_EQ(parts.size(), 5u);
  EXPECT_NE(
      message_of(parse_multipart_form(body, "b", parts, {.max_parts = 4, .max_header_bytes = 8192}))
          .find("more than 4 parts"),
      std::string::npos);
  const std::string long_header =
      "--b\r\nX-Pad: " + std::string(200, 'p') +
      "\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nv\r\n--b--";
  EXPECT_FALSE(parse_multipart_form(long_header, "b", parts));
  EXPECT_NE(message_of(parse_multipart_form(long_header, "b", parts,
                                            {.max_parts = 10, .max_header_bytes = 100}))
                .find("headers exceed 100 bytes"),
            std::string::npos);
}

// Random mutations of a valid body: every outcome is a parse or a 400, and a parse's parts
// lie inside the body.
TEST(MultipartParse, MutatedBodiesNeverCrash) {
  const std::string& base = kTwoParts;
  std::mt19937 rng(35);
  for (int round = 0; round < 3000; ++round) {
    std::string body = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !body.empty(); ++e) {
      const size_t at = rng() % body.size();
      switch (rng() % 3) {
        case 0:
          body[at] = static_cast<char>(rng() % 256);
          break;
        case 1:
          body.erase(at, 1 + rng() % 8);
          break;
        default:
          body.insert(at, std::string(1 + rng() % 3, "-\r\n\"X"[rng() % 5]));
          break;
      }
    }
    std::vector<FormPart> parts;
    if (auto err = parse_multipart_form(body, "XyZ", parts)) {
      EXPECT_EQ(err->message.rfind("Invalid multipart/form-data body: ", 0), 0u);
    } else {
      size_t total = 0;
      for (const FormPart& p : parts) total += p.data.size() + p.name.size();
      EXPECT_LE(total, body.size());
    }
  }
}

}  // namespace
}  // namespace hearth::server

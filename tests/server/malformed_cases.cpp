// The battery of malformed requests: each must be answered 400, 408, 413 or 431 in the
// error envelope, and the server must serve the next request.
#include <string>
#include <vector>

#include "server/hardening_util.h"

namespace hearth::test {

namespace {

std::string post(const std::string& path, const std::string& body) {
  return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

void add_http_cases(std::vector<MalformedCase>& c) {
  c.push_back({"not http", "THIS IS NOT HTTP\r\n\r\n", 400});
  c.push_back({"bad version", "GET /health HTTP/9.9\r\nHost: x\r\n\r\n", 400});
  c.push_back({"unknown method", "FOO /health HTTP/1.1\r\nHost: x\r\n\r\n", 400});
  c.push_back({"lowercase method", "get /health HTTP/1.1\r\nHost: x\r\n\r\n", 400});
  c.push_back({"space in target", "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", 400});
  c.push_back({"bad content length",
               "POST /completion HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400});
  c.push_back({"negative content length",
               "POST /completion HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", 400});
  c.push_back({"two content lengths",
               "POST /completion HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: "
               "3\r\n\r\n{}",
               400});
  c.push_back({"bad chunk size",
               "POST /completion HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
               400});
  c.push_back({"header without colon", "GET /health HTTP/1.1\r\nHost x\r\n\r\n", 400});
  c.push_back({"control character in header", "GET /health HTTP/1.1\r\nX-A: a\x01b\r\n\r\n", 400});
  c.push_back({"headers too large",
               "GET /health HTTP/1.1\r\nX-Big: " + std::string(70000, 'b') + "\r\n\r\n", 431});
  std::string many;
  for (int i = 0; i < 200; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  c.push_back({"too many headers", "GET /health HTTP/1.1\r\n" + many + "\r\n", 431});
  c.push_back({"body over the limit",
               "POST /completion HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999\r\n\r\n{",
               413});
}

void add_json_cases(std::vector<MalformedCase>& c) {
  const std::string deep = std::string(600, '[') + std::string(600, ']');
  const std::vector<std::pair<std::string, std::string>> bodies = {
      {"truncated json", "{\"prompt\": \"x\", "},
      {"empty body", ""},
      {"not json", "hello"},
      {"nan", "{\"prompt\": \"x\", \"temperature\": NaN}"},
      {"infinity", "{\"prompt\": \"x\", \"temperature\": Infinity}"},
      {"overflowing number", "{\"prompt\": \"x\", \"temperature\": 1e400}"},
      {"invalid utf-8", "{\"prompt\": \"\xff\xfe\xfd\"}"},
      {"nul byte", std::string("{\"prompt\": \"a\0b\"}", 17)},
      {"lone surrogate", "{\"prompt\": \"\\ud800\"}"},
      {"bad escape", "{\"prompt\": \"\\q\"}"},
      {"trailing garbage", "{\"prompt\": \"x\"} x"},
      {"deep nesting", "{\"prompt\": " + deep + "}"},
      {"array body", "[1, 2, 3]"},
      {"string body", "\"prompt\""},
      {"comments", "{\"prompt\": \"x\" /* c */}"},
  };
  for (const auto& [name, body] : bodies) c.push_back({name, post("/completion", body), 400});
}

void add_field_cases(std::vector<MalformedCase>& c) {
  const std::vector<std::pair<std::string, std::string>> bodies = {
      {"missing prompt", R"({"n_predict": 2})"},
      {"empty prompt list", R"({"prompt": []})"},
      {"boolean prompt", R"({"prompt": true})"},
      {"object prompt", R"({"prompt": {"x": 1}})"},
      {"prompt token out of vocabulary", R"({"prompt": [1, 99999]})"},
      {"n_predict string", R"({"prompt": "x", "n_predict": "many"})"},
      {"n_predict below -1", R"({"prompt": "x", "n_predict": -2})"},
      {"stream string", R"({"prompt": "x", "stream": "yes"})"},
      {"stop number", R"({"prompt": "x", "stop": 5})"},
      {"stop element number", R"({"prompt": "x", "stop": [1]})"},
      {"samplers unknown", R"({"prompt": "x", "samplers": ["bogus", 5]})"},
      {"samplers number", R"({"prompt": "x", "samplers": 5})"},
      {"json_schema string", R"({"prompt": "x", "json_schema": "notobject"})"},
      {"json_schema number", R"({"prompt": "x", "json_schema": 5})"},
      {"bad grammar", R"({"prompt": "x", "grammar": "root ::= foo"})"},
      {"grammar number", R"({"prompt": "x", "grammar": 3})"},
      {"lazy grammar without triggers",
       R"({"prompt": "x", "grammar": "root ::= \"a\"", "grammar_lazy": true, "grammar_triggers": []})"},
      {"trigger of unknown type",
       R"({"prompt": "x", "grammar_triggers": [{"type": 9, "value": "a"}]})"},
      {"logit_bias string", R"({"prompt": "x", "logit_bias": "x"})"},
      {"logit_bias out of vocabulary", R"({"prompt": "x", "logit_bias": [[99999, 1]]})"},
      {"logit_bias true", R"({"prompt": "x", "logit_bias": [[1, true]]})"},
      {"response_fields string", R"({"prompt": "x", "response_fields": "content"})"},
      {"stream_options number", R"({"prompt": "x", "stream_options": 1})"},
      {"n_cmpl zero", R"({"prompt": "x", "n_cmpl": 0})"},
      {"n_cmpl over slots", R"({"prompt": "x", "n": 99})"},
      {"id_slot past the slots", R"({"prompt": "x", "id_slot": 99})"},
      {"id_slot string", R"({"prompt": "x", "id_slot": "0"})"},
      {"adaptive_decay out of range", R"({"prompt": "x", "adaptive_decay": 1.5})"},
      {"repeat_penalty zero", R"({"prompt": "x", "repeat_penalty": 0})"},
      {"dry breakers string", R"({"prompt": "x", "dry_sequence_breakers": "none"})"},
      {"response_format type", R"({"prompt": "x", "response_format": {"type": "xml"}})"},
      {"unknown reasoning format", R"({"prompt": "x", "reasoning_format": "nonsense"})"},
      {"chat_parser not applicable", R"({"prompt": "x", "chat_parser": "{}"})"},
      {"message_delimiters object", R"({"prompt": "x", "message_delimiters": {}})"},
      {"too many stop strings", R"({"prompt": "x", "stop": [)" +
                                    [] {
                                      std::string s;
                                      for (int i = 0; i < 200; ++i)
                                        s += (i ? ",\"s" : "\"s") + std::to_string(i) + "\"";
                                      return s;
                                    }() +
                                    "]}"},
      {"prompt over the context", R"({"prompt": [)" +
                                      [] {
                                        std::string s = "1";
                                        for (int i = 0; i < 600; ++i) s += ",403";
                                        return s;
                                      }() +
                                      "]}"},
  };
  for (const auto& [name, body] : bodies) c.push_back({name, post("/completion", body), 400});
}

void add_route_cases(std::vector<MalformedCase>& c) {
  c.push_back({"tokenize number content", post("/tokenize", R"({"content": 5})"), 400});
  c.push_back({"tokenize object content", post("/tokenize", R"({"content": {}})"), 400});
  c.push_back({"tokenize boolean as string",
               post("/tokenize", R"({"content": "a", "add_special": "yes"})"), 400});
  c.push_back({"tokenize bad json", post("/tokenize", "{"), 400});
  c.push_back({"detokenize strings", post("/detokenize", R"({"tokens": ["a"]})"), 400});
  c.push_back({"detokenize string", post("/detokenize", R"({"tokens": "abc"})"), 400});
  c.push_back({"detokenize floats", post("/detokenize", R"({"tokens": [1.5]})"), 400});
  c.push_back({"detokenize null element", post("/detokenize", R"({"tokens": [null]})"), 400});
  c.push_back({"detokenize out of vocabulary", post("/detokenize", R"({"tokens": [600]})"), 400});
  c.push_back(
      {"multimodal prompt without a projector",
       post("/completion", R"({"prompt": {"prompt_string": "x", "multimodal_data": ["AAAA"]}})"),
       400});
  c.push_back({"slot save without filename", post("/slots/0?action=save", "{}"), 400});
  c.push_back(
      {"slot save numeric filename", post("/slots/0?action=save", R"({"filename": 3})"), 400});
  c.push_back(
      {"slot save path traversal", post("/slots/0?action=save", R"({"filename": "../x"})"), 400});
  c.push_back(
      {"slot save past the slots", post("/slots/999?action=save", R"({"filename": "a"})"), 400});
  c.push_back({"slot erase past the slots", post("/slots/4?action=erase", ""), 400});
  c.push_back({"slot bad action", post("/slots/0?action=fly", "{}"), 400});
  c.push_back({"slot bad id", post("/slots/x?action=erase", "{}"), 400});
  c.push_back({"slot save bad json", post("/slots/0?action=save", "{"), 400});
  c.push_back({"apply-template without messages", post("/apply-template", "{}"), 400});
  c.push_back(
      {"apply-template messages string", post("/apply-template", R"({"messages": "hi"})"), 400});
  c.push_back({"apply-template message without role",
               post("/apply-template", R"({"messages": [{"content": "hi"}]})"), 400});
  c.push_back({"apply-template image part",
               post("/apply-template",
                    R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})"),
               400});
  c.push_back(
      {"apply-template tools string",
       post("/apply-template", R"({"messages": [{"role": "user", "content": "x"}], "tools": "x"})"),
       400});
  c.push_back({"lora not an array", post("/lora-adapters", R"({"id": 0})"), 400});
  c.push_back({"lora unknown adapter", post("/lora-adapters", R"([{"id": 0, "scale": 1}])"), 400});
  c.push_back({"lora scale string", post("/lora-adapters", R"([{"id": 0, "scale": "x"}])"), 400});
  c.push_back({"lora entry without id", post("/lora-adapters", R"([{"scale": 1}])"), 400});
  c.push_back({"props bad json", post("/props", "{"), 400});
  c.push_back({"props with a member", post("/props", R"({"n_slots": 9})"), 400});
  c.push_back({"apply-template role number",
               post("/apply-template", R"({"messages": [{"role": 5, "content": "x"}]})"), 400});
}

// What the answers of some cases must say: the field or the problem, in words a client can
// act on.
void add_expected_messages(std::vector<MalformedCase>& cases) {
  const std::vector<std::pair<std::string, std::string>> parts = {
      {"deep nesting", "nested deeper than 512 levels"},
      {"nan", "Invalid JSON in request body: "},
      {"invalid utf-8", "Invalid JSON in request body: "},
      {"missing prompt", "\"prompt\" is required"},
      {"stop number", "Field 'stop'"},
      {"samplers unknown", "Field 'samplers': unknown sampler 'bogus'"},
      {"json_schema string", "Field 'json_schema'"},
      {"logit_bias out of vocabulary", "Field 'logit_bias': token id 99999"},
      {"id_slot past the slots", "Field 'id_slot'"},
      {"too many stop strings", "Field 'stop': at most 128 items"},
      {"tokenize number content", "Field 'content'"},
      {"tokenize boolean as string", "Field 'add_special'"},
      {"detokenize floats", "Field 'tokens'"},
      {"slot save without filename", "\"filename\" is required"},
      {"slot save past the slots", "Invalid slot ID: 999"},
      {"lora unknown adapter", "invalid adapter id 0"},
      {"lora scale string", "'scale' must be a number"},
      {"lora entry without id", "'id' must be an integer"},
      {"props with a member", "Field 'n_slots'"},
      {"apply-template message without role", "Missing 'role'"},
      {"headers too large", "request headers too large"},
      {"unknown method", "unsupported HTTP method"},
      {"body over the limit", "request body too large"},
  };
  for (MalformedCase& c : cases) {
    for (const auto& [name, part] : parts) {
      if (c.name == name) c.message_part = part;
    }
  }
}

}  // namespace

std::vector<MalformedCase> malformed_cases() {
  std::vector<MalformedCase> cases;
  add_http_cases(cases);
  add_json_cases(cases);
  add_field_cases(cases);
  add_route_cases(cases);
  add_expected_messages(cases);
  return cases;
}

}  // namespace hearth::test

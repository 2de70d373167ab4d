// Every metadata value type, scalar and array, written and read back.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "fuzz/gguf_exercise.h"
#include "gguf/file.h"
#include "gguf/writer.h"
#include "raw_gguf.h"

namespace hearth::gguf {
namespace {

template <typename T>
std::vector<uint8_t> array_payload(ValueType element, const std::vector<T>& values) {
  RawGguf p;
  p.u32(static_cast<uint32_t>(element)).u64(values.size());
  std::vector<uint8_t> out = p.bytes();
  for (T v : values) {
    const size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &v, sizeof(T));
  }
  return out;
}

File parse_or_die(const std::vector<uint8_t>& bytes) {
  auto f = File::parse(bytes);
  EXPECT_TRUE(f.is_ok()) << f.status().to_string();
  return std::move(f).value();
}

TEST(GgufValue, ScalarsOfEveryType) {
  Writer w;
  w.set_u8("u8", 200);
  w.set_i8("i8", -100);
  w.set_u16("u16", 60000);
  w.set_i16("i16", -30000);
  w.set_u32("u32", 4000000000u);
  w.set_i32("i32", -2000000000);
  w.set_u64("u64", std::numeric_limits<uint64_t>::max());
  w.set_i64("i64", std::numeric_limits<int64_t>::min());
  w.set_f32("f32", 0.25f);
  w.set_f64("f64", -1e300);
  w.set_bool("bool", true);
  w.set_raw("bool7", 7, {7});  // any non-zero byte is true
  w.set_string("str", std::string_view("a\0b", 3));
  w.set_string("empty", "");
  const auto bytes = w.to_bytes();
  const File f = parse_or_die(bytes);
  ASSERT_EQ(f.metadata().size(), 14u);
  EXPECT_EQ(f.find("u8")->as_uint(), 200u);
  EXPECT_EQ(f.find("i8")->as_int(), -100);
  EXPECT_EQ(f.find("i8")->as_uint(), std::nullopt);
  EXPECT_EQ(f.find("u16")->as_int(), 60000);
  EXPECT_EQ(f.find("i16")->as_int(), -30000);
  EXPECT_EQ(*f.get_u32("u32"), 4000000000u);
  EXPECT_EQ(f.find("i32")->as_int(), -2000000000);
  EXPECT_EQ(f.find("u64")->as_uint(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(f.find("u64")->as_int(), std::nullopt);
  EXPECT_EQ(f.find("i64")->as_int(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(*f.get_f32("f32"), 0.25f);
  EXPECT_EQ(f.find("f64")->as_float(), -1e300);
  EXPECT_EQ(f.find("f64")->as_int(), std::nullopt);
  EXPECT_TRUE(*f.get_bool("bool"));
  EXPECT_TRUE(*f.get_bool("bool7"));
  EXPECT_EQ(*f.get_string("str"), std::string_view("a\0b", 3));
  EXPECT_EQ(*f.get_string("empty"), "");
  EXPECT_EQ(f.find("missing"), nullptr);
  EXPECT_EQ(f.get_u32("missing").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(f.get_u32("i32").status().code(), ErrorCode::kCorruptFile);
  EXPECT_EQ(f.find("u64")->to_display_string(), "18446744073709551615");
  EXPECT_EQ(f.find("str")->to_display_string(), "\"a\\x00b\"");
  uint64_t checksum = 0;
  EXPECT_EQ(fuzz::exercise(f, checksum), "");
  EXPECT_EQ(fuzz::check_rewrite(f), "");
}

TEST(GgufValue, ArraysOfEveryElementType) {
  Writer w;
  w.set_raw("u8", 9, array_payload<uint8_t>(ValueType::kU8, {1, 255}));
  w.set_raw("i8", 9, array_payload<int8_t>(ValueType::kI8, {-1, 127}));
  w.set_raw("u16", 9, array_payload<uint16_t>(ValueType::kU16, {65535}));
  w.set_raw("i16", 9, array_payload<int16_t>(ValueType::kI16, {-32768}));
  w.set_raw("u32", 9, array_payload<uint32_t>(ValueType::kU32, {4000000000u}));
  w.set_i32_array("i32", std::vector<int32_t>{-5, 6});
  w.set_f32_array("f32", std::vector<float>{1.5f, NAN, 1e30f});
  w.set_raw("bool", 9, array_payload<uint8_t>(ValueType::kBool, {0, 1, 9}));
  w.set_raw("u64", 9, array_payload<uint64_t>(ValueType::kU64, {~uint64_t{0}}));
  w.set_raw("i64", 9, array_payload<int64_t>(ValueType::kI64, {-7}));
  w.set_raw("f64", 9, array_payload<double>(ValueType::kF64, {-1e300, 2.5}));
  w.set_string_array("str", {"x", "", "yz"});
  w.set_raw("empty", 9, array_payload<uint32_t>(ValueType::kU32, {}));
  const auto bytes = w.to_bytes();
  const File f = parse_or_die(bytes);
  EXPECT_EQ(f.find("u8")->int_at(1), 255);
  EXPECT_EQ(f.find("i8")->int_at(0), -1);
  EXPECT_EQ(f.find("u16")->int_at(0), 65535);
  EXPECT_EQ(f.find("i16")->int_at(0), -32768);
  EXPECT_EQ(f.find("u32")->int_at(0), 4000000000);
  EXPECT_EQ(f.find("i32")->int_at(1), 6);
  EXPECT_EQ(f.find("f32")->float_at(0), 1.5);
  EXPECT_TRUE(std::isnan(f.find("f32")->float_at(1)));
  EXPECT_EQ(f.find("f32")->int_at(1), 0);  // NaN converts to 0, not undefined behaviour
  EXPECT_EQ(f.find("f32")->int_at(2), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(f.find("bool")->int_at(2), 1);
  EXPECT_EQ(f.find("u64")->float_at(0), 18446744073709551615.0);
  EXPECT_EQ(f.find("i64")->int_at(0), -7);
  EXPECT_EQ(f.find("f64")->int_at(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f.find("f64")->float_at(1), 2.5);
  EXPECT_EQ(f.find("str")->string_at(2), "yz");
  EXPECT_EQ(f.find("empty")->size(), 0u);
  EXPECT_EQ(f.find("u64")->to_display_string(), "[1 x u64] [18446744073709551615]");
  EXPECT_EQ(f.find("bool")->to_display_string(), "[3 x bool] [false, true, true]");
  // Out-of-range and wrong-kind accesses answer 0 / empty instead of reading out of bounds.
  EXPECT_EQ(f.find("u8")->int_at(2), 0);
  EXPECT_EQ(f.find("str")->int_at(0), 0);
  EXPECT_EQ(f.find("str")->string_at(3), "");
  EXPECT_EQ(f.find("u8")->string_at(0), "");
  EXPECT_EQ(f.find("empty")->float_at(0), 0.0);
  // Typed array lookups check the element type.
  EXPECT_TRUE(f.get_array("i32", ValueType::kI32).is_ok());
  EXPECT_EQ(f.get_array("i32", ValueType::kU32).status().code(), ErrorCode::kCorruptFile);
  EXPECT_EQ(f.get_array("nope", ValueType::kU32).status().code(), ErrorCode::kNotFound);
  uint64_t checksum = 0;
  EXPECT_EQ(fuzz::exercise(f, checksum), "");
  EXPECT_EQ(fuzz::check_rewrite(f), "");
}

TEST(GgufValue, ValuesAreViewsIntoTheFile) {
  Writer w;
  w.set_string("s", "hello");
  w.set_string_array("a", {"one", "two"});
  w.set_f32_array("f", std::vector<float>{1, 2});
  const auto bytes = w.to_bytes();
  const File f = parse_or_die(bytes);
  auto inside = [&](const void* p) { return fuzz::within(bytes, p, 1); };
  EXPECT_TRUE(inside(f.find("s")->as_string()->data()));
  EXPECT_TRUE(inside(f.find("a")->string_at(1).data()));
  EXPECT_TRUE(inside(f.find("f")->raw_data()));
  EXPECT_TRUE(inside(f.metadata()[0].key.data()));
}

TEST(GgufValue, SetValueCopiesBetweenFiles) {
  Writer w;
  w.set_i8("i8", -3);
  w.set_f64("f64", 0.125);
  w.set_string_array("a", {"p", "q"});
  const auto bytes = w.to_bytes();
  const File f = parse_or_die(bytes);
  Writer copy;
  for (const auto& kv : f.metadata()) copy.set_value(kv.key, kv.value);
  const auto bytes2 = copy.to_bytes();
  EXPECT_EQ(bytes, bytes2);
}

}  // namespace
}  // namespace hearth::gguf

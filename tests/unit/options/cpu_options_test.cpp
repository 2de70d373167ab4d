// The thread pools' CPU options: masks and ranges parsed as the reference's parse_cpu_mask
// and parse_cpu_range, combined into one CPU set per pool, and strictness, priority, poll
// level and NUMA strategy stored in the scheduler's settings; bad values are refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/options/option_handlers.h"
#include "unit/options/options_test_util.h"

namespace hearth::server::options {
namespace {

using test::parse;
using test::parse_ok;
using Cpus = std::vector<int32_t>;

Cpus mask(std::string_view text) {
  Cpus cpus;
  EXPECT_TRUE(add_cpu_mask(text, cpus).is_ok()) << text;
  return cpus;
}

Cpus range(std::string_view text) {
  Cpus cpus;
  EXPECT_TRUE(add_cpu_range(text, cpus).is_ok()) << text;
  return cpus;
}

TEST(CpuOptions, MaskDigitsAreCpusFromTheRight) {
  EXPECT_EQ(mask("0x1"), Cpus{0});
  EXPECT_EQ(mask("0x5"), (Cpus{0, 2}));
  EXPECT_EQ(mask("f0"), (Cpus{4, 5, 6, 7}));
  EXPECT_EQ(mask("0X10"), Cpus{4});
  EXPECT_EQ(mask("A"), (Cpus{1, 3}));
  EXPECT_EQ(mask("0x0"), Cpus{});
  EXPECT_EQ(mask("1" + std::string(127, '0')), Cpus{508});  // the reference's longest mask
}

TEST(CpuOptions, BadMasksAreRefused) {
  Cpus cpus;
  EXPECT_FALSE(add_cpu_mask("", cpus).is_ok());
  EXPECT_FALSE(add_cpu_mask("0x", cpus).is_ok());
  EXPECT_FALSE(add_cpu_mask("0xg1", cpus).is_ok());
  EXPECT_FALSE(add_cpu_mask("1" + std::string(128, '0'), cpus).is_ok());  // CPU 512
  EXPECT_TRUE(cpus.empty());
}

TEST(CpuOptions, RangesAreInclusiveWithOpenEnds) {
  EXPECT_EQ(range("2-4"), (Cpus{2, 3, 4}));
  EXPECT_EQ(range("-1"), (Cpus{0, 1}));
  EXPECT_EQ(range("510-"), (Cpus{510, 511}));
  EXPECT_EQ(range("3-3"), Cpus{3});
  Cpus cpus;
  EXPECT_FALSE(add_cpu_range("5", cpus).is_ok());
  EXPECT_FALSE(add_cpu_range("4-2", cpus).is_ok());
  EXPECT_FALSE(add_cpu_range("0-512", cpus).is_ok());
  EXPECT_FALSE(add_cpu_range("x-2", cpus).is_ok());
}

TEST(CpuOptions, MaskAndRangeCombineInOnePool) {
  ServerArgs a = parse_ok({"-C", "0x1", "-Cr", "2-3", "-C", "0x2"});
  EXPECT_TRUE(a.cpu.mask_given);
  EXPECT_EQ(a.cpu.cpus, (Cpus{0, 1, 2, 3}));
  EXPECT_FALSE(a.cpu_batch.mask_given);
}

TEST(CpuOptions, EachPoolHasItsOwnOptions) {
  ServerArgs a = parse_ok({"--cpu-strict",
                           "1",
                           "--prio",
                           "-1",
                           "--poll",
                           "0",
                           "-Cb",
                           "0x2",
                           "-Crb",
                           "4-4",
                           "--cpu-strict-batch",
                           "0",
                           "--prio-batch",
                           "2",
                           "--poll-batch",
                           "100",
                           "-Cd",
                           "0x1",
                           "-Crd",
                           "3-3",
                           "--cpu-strict-draft",
                           "1",
                           "--prio-draft",
                           "1",
                           "--poll-draft",
                           "7",
                           "-Cbd",
                           "0x8",
                           "--cpu-strict-batch-draft",
                           "1",
                           "--prio-batch-draft",
                           "3",
                           "--poll-batch-draft",
                           "9"});
  EXPECT_EQ(a.cpu.strict, true);
  EXPECT_EQ(a.cpu.priority, -1);
  EXPECT_EQ(a.cpu.poll, 0);
  EXPECT_FALSE(a.cpu.mask_given);
  EXPECT_EQ(a.cpu_batch.cpus, (Cpus{1, 4}));
  EXPECT_EQ(a.cpu_batch.strict, false);
  EXPECT_EQ(a.cpu_batch.priority, 2);
  EXPECT_EQ(a.cpu_batch.poll, 100);
  EXPECT_EQ(a.cpu_draft.cpus, (Cpus{0, 3}));
  EXPECT_EQ(a.cpu_draft.strict, true);
  EXPECT_EQ(a.cpu_draft.priority, 1);
  EXPECT_EQ(a.cpu_draft.poll, 7);
  EXPECT_EQ(a.cpu_draft_batch.cpus, Cpus{3});
  EXPECT_EQ(a.cpu_draft_batch.strict, true);
  EXPECT_EQ(a.cpu_draft_batch.priority, 3);
  EXPECT_EQ(a.cpu_draft_batch.poll, 9);
}

TEST(CpuOptions, UnsetOptionsStayUnsetForInheritance) {
  ServerArgs a = parse_ok({});
  EXPECT_FALSE(a.cpu.mask_given);
  EXPECT_FALSE(a.cpu.strict.has_value());
  EXPECT_FALSE(a.cpu_batch.priority.has_value());
  EXPECT_FALSE(a.cpu_draft.poll.has_value());
  EXPECT_EQ(a.numa, NumaStrategy::kDisabled);
}

TEST(CpuOptions, PriorityRangesAreTheReferences) {
  EXPECT_EQ(parse({"--prio", "4"}).action, ParseAction::kError);
  EXPECT_EQ(parse({"--prio", "-2"}).action, ParseAction::kError);
  EXPECT_EQ(parse({"--prio-batch", "-1"}).action, ParseAction::kError);
  EXPECT_EQ(parse({"--prio-batch-draft", "-1"}).action, ParseAction::kError);
  EXPECT_EQ(parse({"--cpu-strict", "x"}).action, ParseAction::kError);
  EXPECT_EQ(parse({"--poll", "high"}).action, ParseAction::kError);
}

TEST(CpuOptions, BadMaskIsAnErrorNamingTheOption) {
  ParseOutcome out = parse({"-C", "0xzz"});
  EXPECT_EQ(out.action, ParseAction::kError);
  EXPECT_NE(out.text.find("invalid cpumask"), std::string::npos) << out.text;
  EXPECT_EQ(parse({"-Cr", "7"}).action, ParseAction::kError);
}

TEST(CpuOptions, NumaStrategies) {
  EXPECT_EQ(parse_ok({"--numa", "distribute"}).numa, NumaStrategy::kDistribute);
  EXPECT_EQ(parse_ok({"--numa", ""}).numa, NumaStrategy::kDistribute);
  EXPECT_EQ(parse_ok({"--numa", "isolate"}).numa, NumaStrategy::kIsolate);
  EXPECT_EQ(parse_ok({"--numa", "numactl"}).numa, NumaStrategy::kNumactl);
  EXPECT_EQ(parse_ok({}, {{"LLAMA_ARG_NUMA", "isolate"}}).numa, NumaStrategy::kIsolate);
  EXPECT_EQ(parse({"--numa", "mirror"}).action, ParseAction::kError);
}

}  // namespace
}  // namespace hearth::server::options

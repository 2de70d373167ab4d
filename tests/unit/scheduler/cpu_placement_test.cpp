// Resolving the pools' CPU options: the batch and draft pools inherit what is not given for
// them, a mask is laid out strictly or not and cut to the CPUs the process may use (none of
// them: an error), and a NUMA strategy on several nodes replaces the mask.
#include "scheduler/cpu_placement.h"

#include <gtest/gtest.h>

#include <vector>

namespace hearth::scheduler {
namespace {

using Cpus = std::vector<int>;

CpuEnvironment four_cpus() {
  CpuEnvironment env;
  env.allowed_cpus = {0, 1, 2, 3};
  env.topology.node_cpus = {{0, 1, 2, 3}};
  return env;
}

TEST(CpuPlacement, DefaultsPinNothing) {
  SchedulerSettings s;
  auto p = resolve_placements(s, {.gen = 2, .batch = 2, .draft = 2, .draft_batch = 2}, four_cpus());
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_FALSE(p->gen.pins());
  EXPECT_EQ(p->gen.priority, 0);
  EXPECT_EQ(p->gen.poll, kDefaultPollLevel);
  EXPECT_TRUE(p->gen.places_like(p->batch));
  EXPECT_EQ(p->gen.name, "hearth-gen");
  EXPECT_EQ(p->batch.name, "hearth-batch");
}

TEST(CpuPlacement, BatchAndDraftInheritWhatTheyDoNotSet) {
  SchedulerSettings s;
  s.cpu.mask_given = true;
  s.cpu.cpus = {0, 1};
  s.cpu.strict = true;
  s.cpu.priority = -1;
  s.cpu.poll = 0;
  s.cpu_batch.poll = 80;
  s.cpu_draft_batch.mask_given = true;
  s.cpu_draft_batch.cpus = {3};
  auto p = resolve_placements(s, {.gen = 2, .batch = 2, .draft = 2, .draft_batch = 1}, four_cpus());
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->gen.thread_cpus, (std::vector<Cpus>{{1}, {0}}));
  EXPECT_EQ(p->gen.priority, -1);
  EXPECT_EQ(p->gen.poll, 0);
  EXPECT_EQ(p->batch.thread_cpus, p->gen.thread_cpus);
  EXPECT_EQ(p->batch.priority, -1);
  EXPECT_EQ(p->batch.poll, 80);
  EXPECT_EQ(p->draft.thread_cpus, p->gen.thread_cpus);
  EXPECT_EQ(p->draft_batch.thread_cpus, (std::vector<Cpus>{{3}}));
  EXPECT_EQ(p->draft_batch.poll, 80);  // from the batch pool
}

TEST(CpuPlacement, NoDraftModelLeavesTheDraftPoolsAlone) {
  SchedulerSettings s;
  s.cpu.mask_given = true;
  s.cpu.cpus = {2};
  auto p = resolve_placements(s, {.gen = 1, .batch = 1}, four_cpus());
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->gen.thread_cpus, (std::vector<Cpus>{{2}}));
  EXPECT_FALSE(p->draft.pins());
}

TEST(CpuPlacement, CpusTheProcessMayNotUseAreDropped) {
  SchedulerSettings s;
  s.cpu.mask_given = true;
  s.cpu.cpus = {1, 7};
  auto p = resolve_placements(s, {.gen = 2, .batch = 2}, four_cpus());
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->gen.thread_cpus, (std::vector<Cpus>{{1}, {1}}));
}

TEST(CpuPlacement, MaskOfNoUsableCpuIsAnError) {
  SchedulerSettings s;
  s.cpu_batch.mask_given = true;
  s.cpu_batch.cpus = {6, 7};
  auto p = resolve_placements(s, {.gen = 2, .batch = 2}, four_cpus());
  ASSERT_FALSE(p.is_ok());
  EXPECT_NE(p.status().message().find("batch"), std::string::npos) << p.status().message();
  EXPECT_FALSE(check_cpu_masks(s, four_cpus()).is_ok());
  s.cpu_batch.cpus = {};  // -C 0: names no CPU at all
  EXPECT_FALSE(check_cpu_masks(s, four_cpus()).is_ok());
  s.cpu_batch.cpus = {3};
  EXPECT_TRUE(check_cpu_masks(s, four_cpus()).is_ok());
}

TEST(CpuPlacement, NumaOnSeveralNodesReplacesTheMask) {
  CpuEnvironment env = four_cpus();
  env.topology.node_cpus = {{0, 1}, {2, 3}};
  env.start_node = 1;
  SchedulerSettings s;
  s.cpu.mask_given = true;
  s.cpu.cpus = {0};
  s.numa = NumaStrategy::kIsolate;
  auto p = resolve_placements(s, {.gen = 2, .batch = 2}, env);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->gen.thread_cpus, (std::vector<Cpus>{{2, 3}, {2, 3}}));
  s.numa = NumaStrategy::kNumactl;
  p = resolve_placements(s, {.gen = 1, .batch = 1}, env);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->gen.thread_cpus, (std::vector<Cpus>{{0, 1, 2, 3}}));
}

TEST(CpuPlacement, NumaOnOneNodeKeepsTheMask) {
  SchedulerSettings s;
  s.cpu.mask_given = true;
  s.cpu.cpus = {0};
  s.numa = NumaStrategy::kDistribute;
  auto p = resolve_placements(s, {.gen = 1, .batch = 1}, four_cpus());
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->gen.thread_cpus, (std::vector<Cpus>{{0}}));
}

}  // namespace
}  // namespace hearth::scheduler

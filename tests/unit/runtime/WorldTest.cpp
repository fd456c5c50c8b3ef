//===- WorldTest.cpp - a rank from sinter-run, torchrun, srun or mpirun ---===//
#include "sinter/runtime/World.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

using namespace sinter::runtime;
using ::testing::HasSubstr;

namespace {

sinter::StatusOr<World> worldOf(const std::map<std::string, std::string> &variables) {
  return worldFromEnvironment([&](const char *name) -> const char * {
    auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  });
}

std::string errorOf(const std::map<std::string, std::string> &variables) {
  auto world = worldOf(variables);
  EXPECT_FALSE(world.ok());
  return std::string(world.status().message());
}

} // namespace

TEST(World, NoLauncherIsAWorldOfOne) {
  auto world = worldOf({});
  ASSERT_TRUE(world.ok());
  EXPECT_EQ(world->size, 1);
  EXPECT_EQ(world->rank, 0);
  EXPECT_EQ(world->launcher, "");
}

TEST(World, SinterRunsAgentHostsTheStore) {
  auto world = worldOf({{"RANK", "3"},
                        {"WORLD_SIZE", "4"},
                        {"LOCAL_RANK", "1"},
                        {"LOCAL_WORLD_SIZE", "2"},
                        {"GROUP_RANK", "1"},
                        {"MASTER_ADDR", "10.77.0.1"},
                        {"MASTER_PORT", "29600"},
                        {"SINTER_STORE_HOSTED", "1"},
                        {"SINTER_RUN_ID", "job7"},
                        {"SINTER_RESTART", "2"}});
  ASSERT_TRUE(world.ok()) << world.status();
  EXPECT_EQ(world->launcher, "sinter-run");
  EXPECT_EQ(world->rank, 3);
  EXPECT_EQ(world->size, 4);
  EXPECT_EQ(world->localRank, 1);
  EXPECT_EQ(world->localSize, 2);
  EXPECT_EQ(world->nodeRank, 1);
  EXPECT_EQ(world->masterAddress, "10.77.0.1");
  EXPECT_EQ(world->storePort, 29600);
  EXPECT_EQ(world->runId, "job7");
  EXPECT_EQ(world->restart, 2);
  EXPECT_FALSE(world->hostsStore);
}

TEST(World, UnderTorchrunRankZeroHostsTheStoreBesideTorchrunsOwn) {
  auto world = worldOf({{"RANK", "0"},
                        {"WORLD_SIZE", "2"},
                        {"MASTER_ADDR", "host0"},
                        {"MASTER_PORT", "29500"},
                        {"TORCHELASTIC_RESTART_COUNT", "1"}});
  ASSERT_TRUE(world.ok()) << world.status();
  EXPECT_EQ(world->launcher, "torchrun");
  EXPECT_EQ(world->storePort, 29501);
  EXPECT_TRUE(world->hostsStore);
  EXPECT_EQ(world->restart, 1);
}

TEST(World, Slurm) {
  auto world = worldOf({{"SLURM_PROCID", "5"},
                        {"SLURM_NTASKS", "8"},
                        {"SLURM_LOCALID", "1"},
                        {"SLURM_NODEID", "2"},
                        {"SLURM_TASKS_PER_NODE", "2(x4)"},
                        {"SLURM_JOB_NODELIST", "gpu[07-10],cpu1"},
                        {"SLURM_JOB_ID", "991"}});
  ASSERT_TRUE(world.ok()) << world.status();
  EXPECT_EQ(world->launcher, "srun");
  EXPECT_EQ(world->rank, 5);
  EXPECT_EQ(world->size, 8);
  EXPECT_EQ(world->localRank, 1);
  EXPECT_EQ(world->localSize, 2);
  EXPECT_EQ(world->nodeRank, 2);
  EXPECT_EQ(world->masterAddress, "gpu07");
  EXPECT_EQ(world->storePort, 29500);
  EXPECT_EQ(world->runId, "991");
  EXPECT_FALSE(world->hostsStore);
}

TEST(World, SlurmHostLists) {
  EXPECT_EQ(*firstSlurmHost("node1"), "node1");
  EXPECT_EQ(*firstSlurmHost("node1,node2"), "node1");
  EXPECT_EQ(*firstSlurmHost("n[3,5-7]"), "n3");
  EXPECT_EQ(*firstSlurmHost("rack[2-3]-node[01-04]"), "rack2-node[01-04]")
      << "only the first bracket is expanded";
  EXPECT_FALSE(firstSlurmHost("").ok());
  EXPECT_FALSE(firstSlurmHost("n[x]").ok());
  EXPECT_FALSE(firstSlurmHost("n[1").ok());
}

TEST(World, OpenMpiOnOneMachineNeedsNoMaster) {
  auto world = worldOf({{"OMPI_COMM_WORLD_RANK", "1"},
                        {"OMPI_COMM_WORLD_SIZE", "2"},
                        {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                        {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  ASSERT_TRUE(world.ok()) << world.status();
  EXPECT_EQ(world->launcher, "mpirun");
  EXPECT_EQ(world->masterAddress, "127.0.0.1");
  EXPECT_THAT(errorOf({{"OMPI_COMM_WORLD_RANK", "1"},
                       {"OMPI_COMM_WORLD_SIZE", "4"},
                       {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}),
              HasSubstr("without MASTER_ADDR"));
  auto pmix = worldOf({{"PMIX_RANK", "0"}, {"WORLD_SIZE", "1"}});
  ASSERT_TRUE(pmix.ok()) << pmix.status();
  EXPECT_TRUE(pmix->hostsStore);
}

TEST(World, BadValuesAreNamed) {
  EXPECT_THAT(errorOf({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}),
              HasSubstr("RANK=2 is not below WORLD_SIZE=2"));
  EXPECT_THAT(errorOf({{"RANK", "x"}, {"WORLD_SIZE", "2"}}), HasSubstr("RANK='x' is not a number"));
  EXPECT_THAT(errorOf({{"RANK", "0"}}), HasSubstr("WORLD_SIZE is not set"));
  EXPECT_THAT(errorOf({{"RANK", "0"}, {"WORLD_SIZE", "2"}}), HasSubstr("MASTER_ADDR is not"));
  EXPECT_THAT(errorOf({{"MASTER_PORT", "70000"}}), HasSubstr("MASTER_PORT='70000'"));
  EXPECT_THAT(errorOf({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "-1"}}),
              HasSubstr("SLURM_NTASKS='-1'"));
}

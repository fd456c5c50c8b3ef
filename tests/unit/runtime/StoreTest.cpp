//===- StoreTest.cpp - the rendezvous store: protocol, server, clients ----===//
#include "sinter/runtime/Store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

using namespace sinter::runtime;
using sinter::Status;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

namespace {

std::unique_ptr<StoreServer> startServer() {
  auto server = StoreServer::start("127.0.0.1", 0);
  EXPECT_TRUE(server.ok()) << server.status();
  return std::move(*server);
}

std::unique_ptr<StoreClient> connectTo(const StoreServer &server,
                                       StoreClient::Options options = {}) {
  if (options.timeout == std::chrono::seconds(300))
    options.timeout = 5s;
  auto client = StoreClient::connect("127.0.0.1", server.port(), options);
  EXPECT_TRUE(client.ok()) << client.status();
  return std::move(*client);
}

} // namespace

TEST(StoreProtocol, AMessageReadsBackAsWritten) {
  StoreMessage message{.op = StoreMessage::Op::Wait,
                       .keys = {"a", std::string("b\0c", 3), ""},
                       .value = std::string(1000, 'x'),
                       .number = -1234567890123};
  auto decoded = decodeStoreMessage(encodeStoreMessage(message));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, message);
}

TEST(StoreProtocol, TruncatedLyingAndUnknownMessagesAreRefused) {
  std::string good =
      encodeStoreMessage({.op = StoreMessage::Op::Set, .keys = {"key"}, .value = "v"});
  for (size_t cut = 0; cut < good.size(); ++cut)
    EXPECT_FALSE(decodeStoreMessage(std::string_view(good).substr(0, cut)).ok()) << cut;
  EXPECT_THAT(std::string(decodeStoreMessage(good + "x").status().message()),
              HasSubstr("1 bytes after the message"));
  std::string unknown = good;
  unknown[0] = 17;
  EXPECT_THAT(std::string(decodeStoreMessage(unknown).status().message()),
              HasSubstr("unknown op 17"));
  // A key count far past the bytes given is refused before anything is read.
  std::string lying = good;
  lying[1] = lying[2] = lying[3] = lying[4] = '\xff';
  EXPECT_THAT(std::string(decodeStoreMessage(lying).status().message()), HasSubstr("keys in"));
}

TEST(Store, SetGetAddCheckDelete) {
  auto server = startServer();
  auto client = connectTo(*server);
  ASSERT_TRUE(client->set("k", std::string("v\0w", 3)).ok());
  auto value = client->get("k");
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, std::string("v\0w", 3));
  EXPECT_EQ(*client->add("n", 5), 5);
  EXPECT_EQ(*client->add("n", -2), 3);
  EXPECT_EQ(*client->check({"k", "n"}), true);
  EXPECT_EQ(*client->check({"k", "absent"}), false);
  EXPECT_EQ(*client->remove("k"), true);
  EXPECT_EQ(*client->remove("k"), false);
  EXPECT_EQ(*client->check({"k"}), false);
  // add on a value that is not a number says so.
  ASSERT_TRUE(client->set("text", "abc").ok());
  EXPECT_THAT(std::string(client->add("text", 1).status().message()),
              HasSubstr("is not an integer"));
}

TEST(Store, PrefixesSeparateRuns) {
  auto server = startServer();
  auto first = connectTo(*server, {.prefix = "run/0/"});
  auto second = connectTo(*server, {.prefix = "run/1/"});
  ASSERT_TRUE(first->set("address", "one").ok());
  EXPECT_EQ(*second->check({"address"}), false);
  ASSERT_TRUE(second->set("address", "two").ok());
  EXPECT_EQ(*first->get("address"), "one");
  EXPECT_EQ(*second->get("address"), "two");
}

TEST(Store, AGetWaitsForAnotherClientsSet) {
  auto server = startServer();
  auto reader = connectTo(*server);
  auto writer = connectTo(*server);
  std::thread later([&] {
    std::this_thread::sleep_for(200ms);
    EXPECT_TRUE(writer->set("late", "here").ok());
  });
  auto start = std::chrono::steady_clock::now();
  auto value = reader->get("late", 5s);
  later.join();
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, "here");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
  EXPECT_TRUE(reader->wait({"late"}, 1s).ok());
}

TEST(Store, AWaitTimesOutOnTheServerNamingTheMissingKeys) {
  auto server = startServer();
  auto client = connectTo(*server);
  ASSERT_TRUE(client->set("present", "1").ok());
  auto start = std::chrono::steady_clock::now();
  Status status = client->wait({"present", "missing"}, 300ms);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("waiting for missing"));
  EXPECT_THAT(std::string(status.message()), ::testing::Not(HasSubstr("present,")));
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 3s);
  // The connection is still good afterwards.
  EXPECT_EQ(*client->get("present"), "1");
}

TEST(Store, TheServerKnowsAClientThatDisappeared) {
  auto server = startServer();
  auto stays = connectTo(*server, {.name = "rank 0"});
  {
    auto leaves = connectTo(*server, {.name = "rank 1"});
    ASSERT_TRUE(leaves->set("x", "1").ok());
    EXPECT_EQ(server->connected(), 2);
  }
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (server->departed().empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(server->departed(), std::vector<std::string>{"rank 1"});
  EXPECT_EQ(server->connected(), 1);
  EXPECT_EQ(*stays->get("x"), "1");
}

TEST(Store, AClientLearnsTheServerIsGone) {
  auto server = startServer();
  auto client = connectTo(*server);
  ASSERT_TRUE(client->set("a", "1").ok());
  server.reset();
  Status status = client->set("b", "2");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("rendezvous store at 127.0.0.1:"));
  // And every request after that, without waiting.
  EXPECT_THAT(std::string(client->get("a").status().message()), HasSubstr("lost earlier"));
}

TEST(Store, ConnectingToNoServerFailsAtItsDeadline) {
  int port = 0;
  {
    auto server = startServer();
    port = server->port();
  }
  auto start = std::chrono::steady_clock::now();
  auto client = StoreClient::connect("127.0.0.1", port, {.timeout = 400ms});
  EXPECT_FALSE(client.ok());
  EXPECT_THAT(std::string(client.status().message()), HasSubstr("cannot connect to 127.0.0.1:"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(Store, AFrameOverTheLimitIsAnsweredWithTheReasonAndTheConnectionClosed) {
  auto server = startServer();
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  timeval fiveSeconds{.tv_sec = 5, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &fiveSeconds, sizeof fiveSeconds);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(server->port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address), 0);
  // A header announcing 4 GiB - 1 of payload, past the 64 MiB limit.
  const char header[4] = {'\xff', '\xff', '\xff', '\xff'};
  ASSERT_EQ(::send(fd, header, sizeof header, MSG_NOSIGNAL), 4);
  std::string answer;
  char buffer[4096];
  ssize_t got = 0;
  while ((got = ::recv(fd, buffer, sizeof buffer, 0)) > 0)
    answer.append(buffer, static_cast<size_t>(got));
  ::close(fd);
  // The server said why, then closed the connection (the last recv saw the
  // end of the stream, not the 5 s timeout).
  EXPECT_EQ(got, 0);
  ASSERT_GT(answer.size(), 4u);
  auto reply = decodeStoreMessage(std::string_view(answer).substr(4));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->op, StoreMessage::Op::Error);
  EXPECT_THAT(reply->value, HasSubstr("a frame of 4294967295 bytes is over the limit of 67108864"));
  // Other clients are still served.
  auto client = connectTo(*server);
  EXPECT_TRUE(client->set("after", "1").ok());
}

TEST(Store, ManyThreadsShareOneClient) {
  auto server = startServer();
  auto client = connectTo(*server);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i)
        EXPECT_TRUE(client->add("counter", 1).ok());
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(*client->add("counter", 0), 400);
}

// ConnectionStream's writes as a client sees them: a final response head is held until
// its body (one send for both) or the end of the request (Flush); a 100 Continue and
// anything that does not fit the held bound go out at once, in order. Over a socketpair,
// so what the peer can read after each call is exact (no timing).
#include "controller/server/connection_stream.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace gpufed::server {
namespace {

using std::chrono::steady_clock;

class StreamPair : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    peer_ = fds[1];
    // Large enough that no send here ever waits for the peer to read.
    const int size = 1 << 20;
    ::setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    ::setsockopt(peer_, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    stream_ = std::make_unique<ConnectionStream>(fds[0], nullptr, ConnectionLimits{}, [] { return true; });
  }
  void TearDown() override {
    stream_.reset();
    ::close(peer_);
  }

  // The peer sends `request` (a whole request, or the head of one whose body comes
  // later or never) and the stream reads it, as httplib would.
  void Request(const std::string& request) {
    ASSERT_EQ(::send(peer_, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
    const steady_clock::time_point now = steady_clock::now();
    stream_->BeginRequest(now + std::chrono::seconds(5), now + std::chrono::seconds(5));
    std::string got(request.size(), '\0');
    size_t read = 0;
    while (read < got.size()) {
      const ssize_t n = stream_->read(got.data() + read, got.size() - read);
      ASSERT_GT(n, 0);
      read += static_cast<size_t>(n);
    }
    ASSERT_EQ(got, request);
  }
  void Write(const std::string& data) {
    ASSERT_EQ(stream_->write(data.data(), data.size()), static_cast<ssize_t>(data.size()));
  }
  // Everything the peer can read now, without waiting.
  std::string Readable() {
    std::string out;
    char buffer[65536];
    for (;;) {
      pollfd p{peer_, POLLIN, 0};
      if (::poll(&p, 1, 0) <= 0) return out;
      const ssize_t n = ::recv(peer_, buffer, sizeof buffer, 0);
      if (n <= 0) return out;
      out.append(buffer, static_cast<size_t>(n));
    }
  }

  int peer_ = -1;
  std::unique_ptr<ConnectionStream> stream_;
};

const std::string kGet = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
const std::string kHead = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\n";

TEST_F(StreamPair, AFinalHeadWaitsForItsBodyAndBothLeaveInOneSend) {
  Request(kGet);
  Write(kHead);
  EXPECT_EQ(Readable(), "");  // held
  Write("ok\n");
  EXPECT_EQ(Readable(), kHead + "ok\n");
  EXPECT_TRUE(stream_->Flush());
  EXPECT_EQ(Readable(), "");
  EXPECT_FALSE(stream_->response_closes());
}

TEST_F(StreamPair, AHeadWithoutABodyLeavesAtFlush) {
  Request("HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  Write(kHead);
  EXPECT_EQ(Readable(), "");
  EXPECT_TRUE(stream_->Flush());
  EXPECT_EQ(Readable(), kHead);
  // The next request's response is held afresh.
  Request(kGet);
  Write(kHead);
  EXPECT_EQ(Readable(), "");
  Write("ok\n");
  EXPECT_EQ(Readable(), kHead + "ok\n");
}

TEST_F(StreamPair, AHundredContinueIsNeverHeld) {
  Request("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n");  // its head only
  const std::string go_on = "HTTP/1.1 100 Continue\r\n\r\n";
  Write(go_on);
  EXPECT_EQ(Readable(), go_on);  // the client waits for it before it sends the body
  ASSERT_EQ(::send(peer_, "hi", 2, 0), 2);
  char body[2];
  ASSERT_EQ(stream_->read(body, 2), 2);
  Write(kHead);
  EXPECT_EQ(Readable(), "");
  Write("ok\n");
  EXPECT_EQ(Readable(), kHead + "ok\n");
}

TEST_F(StreamPair, ABodyPastTheHeldBoundFollowsTheHeadInOrder) {
  Request(kGet);
  const std::string body(size_t{200} * 1024, 'b');
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  Write(head);
  Write(body);
  EXPECT_EQ(Readable(), head + body);
  EXPECT_TRUE(stream_->Flush());
}

TEST_F(StreamPair, AResponseToAnUnreadBodyClosesAndLingerSendsItsHeldHead) {
  // The body was announced and never read: the response says it closes the connection.
  Request("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n");
  Write("HTTP/1.1 204 No Content\r\n\r\n");
  EXPECT_EQ(Readable(), "");
  EXPECT_TRUE(stream_->response_closes());
  ::shutdown(peer_, SHUT_WR);  // so Linger's drain ends at once
  stream_->Linger();
  const std::string sent = Readable();
  EXPECT_EQ(sent.rfind("HTTP/1.1 204 No Content\r\n", 0), 0u) << sent;
  EXPECT_NE(sent.find("Connection: close\r\n"), std::string::npos) << sent;
}

}  // namespace
}  // namespace gpufed::server

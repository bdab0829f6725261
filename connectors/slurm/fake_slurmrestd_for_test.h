#pragma once
// A fake slurmrestd for the connector's unit tests: cpp-httplib on 127.0.0.1 (port 0)
// that serves the API versions it is told to offer, in their shapes: node and partition
// lists are the real recordings of tests/fixtures/slurm/<version>/, jobs live in memory
// and are written the way that version writes them (v0.0.38: strings and plain numbers;
// v0.0.40+: state lists, number objects). Its traps are the real ones: 24.11 ignores a
// "gres" field with only a warning, answers a rejected token with 511 (but 200 "DOWN" on
// /ping), and v0.0.40/41 answer every cancel with success.
#include <httplib.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpufed::connectors::slurm::testing {

class FakeSlurmrestd {
 public:
  enum class Mode {
    kOk,
    kCtldDown,       // slurmctld stopped (22.05: 500 errno -1; 24.11: 502 error 1800)
    kUnauthorized,   // HTTP 401, plain text
    kTokenRejected,  // 24.11: 511 error 1007 (ping: 200 "DOWN"); 22.05: 500 errno -1
    kMalformed,      // truncated JSON
    kHtml,           // a proxy's 502 page
    kSlow,           // 1.5 s per reply
  };
  enum class Submit {
    kOk,
    kWarnNoJobId,    // 200, a warning, no job id (24.11 on a value of the wrong type)
    kWarnWithJobId,  // 200, a job id and a warning (24.11 on an unknown field)
  };

  static constexpr int64_t kNow = 1800000000;  // start times of running jobs are near this

  explicit FakeSlurmrestd(std::vector<std::string> offered);
  ~FakeSlurmrestd();

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // What it serves from now on (an upgrade while the connector runs).
  void Offer(std::vector<std::string> versions);
  void set_mode(Mode m) { mode_ = m; }
  void set_submit(Submit s) { submit_ = s; }
  // v0.0.40/41: answer cancels with success without cancelling.
  void set_ignore_cancels(bool ignore) { ignore_cancels_ = ignore; }

  int requests() const { return requests_; }
  int deletes() const { return deletes_; }
  int submits() const { return submits_count_; }
  int openapi_reads() const { return openapi_reads_; }
  size_t job_count();
  std::string job_state(int64_t id);
  nlohmann::json submit(size_t i);
  std::vector<std::string> paths();  // every request's "METHOD /path", in order
  void Forget();                     // Slurm purged its finished jobs (MinJobAge)
  // A running job submitted by someone else (sbatch as `user`), with any name and comment;
  // its id: `id`, or the next one when 0 (a cold-started slurmctld hands ids out again).
  // Jobs submitted through the API run as the X-SLURM-USER-NAME they were sent with.
  int64_t AddJob(const std::string& name, const std::string& comment, const std::string& user, int64_t id = 0);

 private:
  struct Job {
    int64_t id = 0;
    std::string name, comment, user, state, gres, required_nodes;
  };
  bool Offered(const std::string& version);
  nlohmann::json Render(const Job& job, const std::string& version) const;
  void Routes();
  void Handle(const httplib::Request& req, httplib::Response& res);

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<Mode> mode_{Mode::kOk};
  std::atomic<Submit> submit_{Submit::kOk};
  std::atomic<bool> ignore_cancels_{false};
  std::atomic<int> requests_{0};
  std::atomic<int> deletes_{0};
  std::atomic<int> submits_count_{0};
  std::atomic<int> openapi_reads_{0};
  std::mutex mu_;  // guards what follows
  std::vector<std::string> offered_;
  std::vector<Job> jobs_;
  std::vector<nlohmann::json> submit_bodies_;
  std::vector<std::string> paths_;
  int64_t next_id_ = 100;
};

}  // namespace gpufed::connectors::slurm::testing

#include "connectors/slurm/fake_slurmrestd_for_test.h"

#include <chrono>
#include <regex>

#include "connectors/slurm/fixtures_for_test.h"

namespace gpufed::connectors::slurm::testing {
namespace {

using nlohmann::json;

json Num(int64_t n) { return {{"set", true}, {"infinite", false}, {"number", n}}; }

json InvalidJobId(int64_t id) {
  return {{"description", "Unable to query JobId=" + std::to_string(id)},
          {"error_number", 2017},
          {"error", "Invalid job id specified"},
          {"source", "_handle_job_get"}};
}

void Send(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

}  // namespace

FakeSlurmrestd::FakeSlurmrestd(std::vector<std::string> offered) : offered_(std::move(offered)) {
  Routes();
  port_ = server_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  // Bounded: listen_after_bind sets "running" at once unless the socket is broken.
  for (int i = 0; i < 5000 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeSlurmrestd::~FakeSlurmrestd() {
  server_.stop();
  thread_.join();
}

void FakeSlurmrestd::Offer(std::vector<std::string> versions) {
  std::lock_guard<std::mutex> lock(mu_);
  offered_ = std::move(versions);
}

bool FakeSlurmrestd::Offered(const std::string& version) {
  std::lock_guard<std::mutex> lock(mu_);
  return std::find(offered_.begin(), offered_.end(), version) != offered_.end();
}

size_t FakeSlurmrestd::job_count() {
  std::lock_guard<std::mutex> lock(mu_);
  return jobs_.size();
}

std::string FakeSlurmrestd::job_state(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Job& j : jobs_) {
    if (j.id == id) return j.state;
  }
  return "";
}

json FakeSlurmrestd::submit(size_t i) {
  std::lock_guard<std::mutex> lock(mu_);
  return submit_bodies_.at(i);
}

std::vector<std::string> FakeSlurmrestd::paths() {
  std::lock_guard<std::mutex> lock(mu_);
  return paths_;
}

void FakeSlurmrestd::Forget() {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_.clear();
}

int64_t FakeSlurmrestd::AddJob(const std::string& name, const std::string& comment, const std::string& user,
                               int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  Job j;
  j.id = id > 0 ? id : next_id_++;
  j.name = name;
  j.comment = comment;
  j.user = user;
  j.state = "RUNNING";
  jobs_.push_back(j);
  return j.id;
}

json FakeSlurmrestd::Render(const Job& j, const std::string& version) const {
  bool running = j.state == "RUNNING";
  json detail = json::array();
  if (running && !j.gres.empty()) detail.push_back(j.gres + "(IDX:0)");
  if (version == "v0.0.38") {
    return {{"job_id", j.id}, {"name", j.name}, {"comment", j.comment}, {"user_name", j.user}, {"job_state", j.state},
            {"state_reason", "None"}, {"exit_code", j.state == "CANCELLED" ? 15 : 0}, {"nodes", "gpunode1"},
            {"partition", "gpu"}, {"gres_detail", detail}, {"tres_per_node", j.gres.empty() ? "" : "gres:" + j.gres},
            {"required_nodes", j.required_nodes}, {"node_count", 1}, {"cpus", 1}, {"start_time", kNow - 10},
            {"end_time", running ? kNow + 300 : kNow}, {"time_limit", 5}};
  }
  json exit = {{"status", json::array({j.state == "CANCELLED" ? "SIGNALED" : "SUCCESS"})},
               {"return_code", Num(0)},
               {"signal", {{"id", Num(j.state == "CANCELLED" ? 15 : 0)}, {"name", ""}}}};
  return {{"job_id", j.id}, {"name", j.name}, {"comment", j.comment}, {"user_name", j.user},
          {"job_state", json::array({j.state})},
          {"state_reason", "None"}, {"exit_code", exit}, {"nodes", "gpunode1"}, {"partition", "gpu"},
          {"gres_detail", detail}, {"tres_per_node", j.gres.empty() ? "" : "gres/" + j.gres},
          {"required_nodes", j.required_nodes}, {"node_count", Num(1)}, {"cpus", Num(1)},
          {"start_time", Num(kNow - 10)}, {"end_time", Num(running ? kNow + 300 : kNow)}, {"time_limit", Num(5)},
          {"added_by_a_newer_release", {{"anything", true}}}};
}

void FakeSlurmrestd::Routes() {
  server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    ++requests_;
    {
      std::lock_guard<std::mutex> lock(mu_);
      paths_.push_back(req.method + " " + req.path);
    }
    switch (mode_.load()) {
      case Mode::kUnauthorized:
        res.status = 401;
        res.set_content("Authentication failure", "text/plain");
        return httplib::Server::HandlerResponse::Handled;
      case Mode::kMalformed:
        res.set_content("{\"nodes\": [", "application/json");
        return httplib::Server::HandlerResponse::Handled;
      case Mode::kHtml:
        res.status = 502;
        res.set_content("<html><body>Bad Gateway</body></html>", "text/html");
        return httplib::Server::HandlerResponse::Handled;
      case Mode::kSlow:
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        res.set_content("{}", "application/json");
        return httplib::Server::HandlerResponse::Handled;
      default:
        // The body is read after the pre-routing handler: the routes below answer.
        return httplib::Server::HandlerResponse::Unhandled;
    }
  });
  auto handle = [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); };
  server_.Get(".*", handle);
  server_.Post(".*", handle);
  server_.Delete(".*", handle);
}

void FakeSlurmrestd::Handle(const httplib::Request& req, httplib::Response& res) {
  {  // one block, so the early returns read as "answered"
    if (req.path == "/openapi/v3") {
      ++openapi_reads_;
      json paths = json::object();
      std::lock_guard<std::mutex> lock(mu_);
      for (const std::string& v : offered_) {
        for (const char* p : {"ping/", "nodes/", "jobs/", "job/submit", "job/{job_id}"}) paths["/slurm/" + v + "/" + p] = {};
      }
      Send(res, 200, {{"openapi", "3.0.2"}, {"paths", paths}});
      return;
    }
    static const std::regex kPath(R"(^/slurm/(v0\.0\.\d+)/(.*)$)");
    std::smatch m;
    if (!std::regex_match(req.path, m, kPath) || !Offered(m[1])) {
      res.status = 404;
      res.set_content("Unable find requested URL. Please view /openapi/v3 for API reference.", "text/plain");
      return;
    }
    std::string v = m[1], rest = m[2];
    bool old = v == "v0.0.38";
    std::string rec = old ? "v0.0.38" : v;
    if (mode_ == Mode::kCtldDown) {
      Send(res, old ? 500 : 502, Fixture(old ? "v0.0.38" : "v0.0.42", "nodes_slurmctld_down.json"));
      return;
    }
    if (mode_ == Mode::kTokenRejected) {
      if (old) {
        Send(res, 500, {{"errors", {{{"error", "Unspecified error"}, {"errno", -1}}}}});
      } else if (rest == "ping") {
        Send(res, 200, Fixture(rec, "ping_bad_token.json"));
      } else {
        Send(res, 511, Fixture(rec, "nodes_bad_token.json"));
      }
      return;
    }
    std::smatch id_match;
    static const std::regex kJob(R"(^job/(\d+)$)");
    bool job_path = std::regex_match(rest, id_match, kJob);
    int64_t id = job_path ? std::stoll(id_match[1]) : 0;
    std::lock_guard<std::mutex> lock(mu_);
    auto job = std::find_if(jobs_.begin(), jobs_.end(), [&](const Job& j) { return j.id == id; });
    if (req.method == "GET" && (rest == "ping" || rest == "nodes" || rest == "partitions")) {
      Send(res, 200, Fixture(rec, rest == "ping" ? "ping.json" : rest == "nodes" ? "nodes_idle.json" : "partitions.json"));
    } else if (req.method == "GET" && rest == "jobs") {
      json list = json::array();
      for (const Job& j : jobs_) list.push_back(Render(j, v));
      Send(res, 200, {{"errors", json::array()}, {"warnings", json::array()}, {"jobs", list}});
    } else if (req.method == "GET" && job_path) {
      if (job != jobs_.end()) {
        Send(res, 200, {{"errors", json::array()}, {"jobs", json::array({Render(*job, v)})}});
      } else {
        Send(res, old ? 500 : 404, {{"jobs", json::array()}, {"errors", json::array({InvalidJobId(id)})}});
      }
    } else if (req.method == "POST" && rest == "job/submit") {
      ++submits_count_;
      json body = json::parse(req.body, nullptr, false);
      submit_bodies_.push_back(body);
      json spec = body.is_object() && body.contains("job") ? body["job"] : json::object();
      json warnings = json::array();
      if (!old && spec.contains("gres")) {
        warnings.push_back({{"description", "Ignoring unknown field \"gres\" of type string in DATA_PARSER_JOB_DESC_MSG"},
                            {"source", "#/job/gres/"}});
      }
      if (!old && submit_ == Submit::kWarnNoJobId) {
        warnings.push_back({{"description", "Expected OpenAPI type=integer but got OpenAPI type=string"},
                            {"source", "#/job/tasks/"}});
        Send(res, 200, {{"errors", json::array()}, {"warnings", warnings}});
        return;
      }
      if (!old && submit_ == Submit::kWarnWithJobId) {
        warnings.push_back({{"description", "Job submission resulted in non-zero return code: something odd"},
                            {"source", "slurm_submit_batch_job()"}});
      }
      Job j;
      j.id = next_id_++;
      j.name = spec.value("name", "");
      j.comment = spec.value("comment", "");
      j.user = req.get_header_value("X-SLURM-USER-NAME");
      j.state = "RUNNING";
      if (old) {
        j.gres = spec.value("gres", "");
        j.required_nodes = spec.value("nodelist", "");
      } else {
        j.gres = spec.value("tres_per_node", "");
        if (j.gres.rfind("gres/", 0) == 0) j.gres = j.gres.substr(5);
        for (const json& n : spec.value("required_nodes", json::array())) {
          j.required_nodes += (j.required_nodes.empty() ? "" : ",") + n.get<std::string>();
        }
      }
      jobs_.push_back(j);
      json reply = {{"job_id", j.id}, {"step_id", old ? "BATCH" : "batch"}, {"errors", json::array()}};
      if (!old) reply["warnings"] = warnings;
      if (v == "v0.0.40" || v == "v0.0.41") reply["result"] = {{"job_id", j.id}, {"error_code", 0}};
      Send(res, 200, reply);
    } else if (req.method == "DELETE" && job_path) {
      ++deletes_;
      bool silent = v == "v0.0.40" || v == "v0.0.41";
      if (job != jobs_.end() && !(silent && ignore_cancels_)) job->state = "CANCELLED";
      if (silent) {
        Send(res, 200, {{"errors", json::array()}, {"warnings", json::array()}});
      } else if (old) {
        Send(res, job != jobs_.end() ? 200 : 500,
             {{"errors", job != jobs_.end() ? json::array() : json::array({InvalidJobId(id)})}});
      } else {
        json status = json::array();
        if (job == jobs_.end()) {
          status.push_back({{"error", {{"string", "Invalid job id specified"}, {"code", 2017}}},
                            {"step_id", std::to_string(id)}, {"job_id", Num(0)}});
        }
        Send(res, 200, {{"status", status}, {"errors", json::array()}, {"warnings", json::array()}});
      }
    } else {
      res.status = 404;
      res.set_content("Unable find requested URL.", "text/plain");
    }
  }
}

}  // namespace gpufed::connectors::slurm::testing

#include "tests/fake-kube/fake_kube.h"

#include <httplib.h>
#include <openssl/pem.h>

#include <algorithm>
#include <chrono>
#include <ctime>

#include "tests/fake-kube/state.h"

namespace gpufed::testing {
using nlohmann::json;

FakeKube::FakeKube(FakeKubeOptions options) : options_(options), state_(std::make_unique<State>()) {}

FakeKube::~FakeKube() { Stop(); }

Result<std::unique_ptr<FakeKube>> FakeKube::Start(FakeKubeOptions options) {
  if (options.clock == nullptr) return InvalidArgument("FakeKube needs a clock");
  std::unique_ptr<FakeKube> fake(new FakeKube(options));
  fake->state_->epoch = options.epoch;
  fake->state_->job_runtime = options.job_runtime;
  Result<TestCa> ca = GenerateTestCa();
  if (!ca.ok()) return ca.status();
  fake->ca_ = *ca;
  auto read_cert = [](const std::string& pem) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    return x;
  };
  BIO* kbio = BIO_new_mem_buf(fake->ca_.server_key_pem.data(), static_cast<int>(fake->ca_.server_key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(kbio, nullptr, nullptr, nullptr);
  BIO_free(kbio);
  X509* cert = read_cert(fake->ca_.server_cert_pem);
  X509_STORE* store = nullptr;
  if (options.client_certs) {
    store = X509_STORE_new();
    X509* ca_cert = read_cert(fake->ca_.ca_pem);
    X509_STORE_add_cert(store, ca_cert);
    X509_free(ca_cert);
  }
  fake->server_ = std::make_unique<httplib::SSLServer>(cert, key, store);
  X509_free(cert);
  EVP_PKEY_free(key);
  if (!fake->server_->is_valid()) return Internal("fake API server: TLS setup failed");
  // Bounds how long Stop() waits for an idle keep-alive connection a client still holds.
  fake->server_->set_keep_alive_timeout(1);
  FakeKube* self = fake.get();
  auto handler = [self](const httplib::Request& req, httplib::Response& res) {
    std::map<std::string, std::string> query;
    for (const auto& [k, v] : req.params) query[k] = v;
    bool client_cert = false;
    if (req.ssl != nullptr) {
      X509* peer = SSL_get1_peer_certificate(req.ssl);
      client_cert = peer != nullptr && SSL_get_verify_result(req.ssl) == X509_V_OK;
      X509_free(peer);
    }
    int status = 200;
    std::string body;
    std::map<std::string, std::string> headers;
    self->Handle(req.method, req.path, query, req.body, req.get_header_value("Authorization"), client_cert, status, body,
                 headers);
    res.status = status;
    for (const auto& [k, v] : headers) res.set_header(k, v);
    res.set_content(body, "application/json");
  };
  fake->server_->Get(".*", handler);
  fake->server_->Post(".*", handler);
  fake->server_->Delete(".*", handler);
  fake->port_ = fake->server_->bind_to_any_port("127.0.0.1");
  if (fake->port_ <= 0) return Unavailable("fake API server: cannot bind 127.0.0.1");
  fake->thread_ = std::thread([self] { self->server_->listen_after_bind(); });
  // stop() before the accept loop runs would be lost (and join() hang): wait until it runs.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!fake->server_->is_running()) {
    if (std::chrono::steady_clock::now() > deadline) return Internal("fake API server did not start");
    std::this_thread::yield();
  }
  return fake;
}

std::string FakeKube::url() const { return "https://127.0.0.1:" + std::to_string(port_); }

void FakeKube::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

void FakeKube::AddNode(const FakeNode& node) {
  std::lock_guard<std::mutex> lock(mu_);
  state_->AddNode(node, options_.clock->Now());
}

void FakeKube::SetNodeReady(const std::string& name, bool ready) {
  std::lock_guard<std::mutex> lock(mu_);
  state_->SetNodeReady(name, ready, options_.clock->Now());
}

void FakeKube::AddForeignPod(const std::string& ns, const std::string& name, const std::string& node,
                             const std::map<std::string, std::string>& limits) {
  std::lock_guard<std::mutex> lock(mu_);
  state_->AddForeignPod(ns, name, node, limits, options_.clock->Now());
}

void FakeKube::FailNext(int count, int status, const std::string& retry_after) {
  std::lock_guard<std::mutex> lock(mu_);
  state_->fail_count = count;
  state_->fail_status = status;
  state_->fail_retry_after = retry_after;
}

void FakeKube::CompactAfterPages(int pages) {
  std::lock_guard<std::mutex> lock(mu_);
  state_->compact_after_pages = pages;
}

void FakeKube::Forbid(const std::string& verb, const std::string& resource) {
  std::lock_guard<std::mutex> lock(mu_);
  state_->forbidden.insert(verb + " " + resource);
}

void FakeKube::FailPod(const std::string& job, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  state_->FailPodOf(job, reason, options_.clock->Now());
}

void FakeKube::Tick() {
  std::lock_guard<std::mutex> lock(mu_);
  state_->Reconcile(options_.clock->Now());
}

std::vector<json> FakeKube::Jobs() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<json> out;
  for (const auto& [k, j] : state_->jobs) out.push_back(j);
  return out;
}

std::optional<json> FakeKube::Job(const std::string& ns, const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = state_->jobs.find(ns + "/" + name);
  if (it == state_->jobs.end()) return std::nullopt;
  return it->second;
}

std::vector<json> FakeKube::PodsOf(const std::string& job) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<json> out;
  for (const auto& [k, p] : state_->pods) {
    if (p.value("/metadata/labels/job-name"_json_pointer, "") == job) out.push_back(p);
  }
  return out;
}

std::vector<RecordedRequest> FakeKube::Requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_->requests;
}

std::vector<std::string> FakeKube::Violations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_->violations;
}

int64_t FakeKube::resource_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_->rv;
}

void FakeKube::Handle(const std::string& method, const std::string& path,
                      const std::map<std::string, std::string>& query, const std::string& body,
                      const std::string& auth, bool client_cert, int& status, std::string& out,
                      std::map<std::string, std::string>& headers) {
  std::lock_guard<std::mutex> lock(mu_);
  State& s = *state_;
  Duration now = options_.clock->Now();
  headers["Date"] = HttpDate(s.epoch + now.millis() / 1000);
  auto fail = [&](int code, const std::string& message, json details = nullptr) {
    status = code;
    out = StatusBody(code, ReasonFor(code), message, details).dump();
  };
  s.requests.push_back({method, path, query, body, 0});
  RecordedRequest& rec = s.requests.back();
  s.Reconcile(now);

  if (s.fail_count > 0) {
    --s.fail_count;
    if (!s.fail_retry_after.empty()) headers["Retry-After"] = s.fail_retry_after;
    fail(s.fail_status, s.fail_status == 429 ? "Too many requests, please try again later." : "injected failure");
    rec.status = status;
    return;
  }
  bool token_ok = !options_.token.empty() && auth == "Bearer " + options_.token;
  if (!token_ok && !client_cert) {
    fail(401, "Unauthorized");
    rec.status = status;
    return;
  }
  Route r = ParseRoute(method, path);
  if (r.resource.empty()) {
    fail(404, "the server could not find the requested resource");
  } else if (s.forbidden.count(r.verb + " " + r.resource)) {
    fail(403, r.resource + " is forbidden: User \"gpufed\" cannot " + r.verb + " resource \"" + r.resource + "\"");
  } else if (r.verb == "list") {
    s.List(r, query, status, out);
  } else if (r.verb == "create") {
    s.CreateJob(r, query, body, now, status, out, headers);
  } else if (r.verb == "get") {
    auto it = s.jobs.find(r.ns + "/" + r.name);
    if (it == s.jobs.end()) fail(404, "jobs.batch \"" + r.name + "\" not found", {{"name", r.name}, {"group", "batch"}, {"kind", "jobs"}});
    else out = it->second.dump();
  } else if (r.verb == "delete") {
    s.DeleteJob(r, query, body, now, status, out);
  } else {
    fail(405, "method not allowed");
  }
  rec.status = status;
}

}  // namespace gpufed::testing

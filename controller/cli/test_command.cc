// gpufed test PATH: run a repository's PolicyTests, in the style of `go test`.
#include <fstream>
#include <iostream>

#include "controller/cli/commands.h"
#include "controller/common/text.h"
#include "policies/engine/activation.h"

namespace gpufed::cli {
namespace {

struct TestCommandOptions {
  std::vector<std::string> paths;
  std::string junit;
  std::string run;
  bool coverage = false;
  bool verbose = false;
};

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

bool WriteJunit(const std::string& path, const policy::TestReport& report) {
  std::ofstream out(path);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites tests=\"" << report.cases.size() << "\" failures=\"" << report.failed << "\">\n";
  out << "  <testsuite name=\"gpufed-policy-tests\" tests=\"" << report.cases.size() << "\" failures=\""
      << report.failed << "\">\n";
  for (const policy::CaseResult& c : report.cases) {
    out << "    <testcase classname=\"" << XmlEscape(c.test) << "\" name=\"" << XmlEscape(c.name) << "\" file=\""
        << XmlEscape(c.location.file) << "\" line=\"" << c.location.line << "\"";
    if (c.passed) {
      out << "/>\n";
      continue;
    }
    out << ">\n      <failure message=\""
        << XmlEscape(c.hook_errors.empty() ? "expected " + c.expected + ", got " + c.actual
                                           : "hook error: " + c.hook_errors.front())
        << "\">" << XmlEscape(Join(c.explanation, "\n")) << "</failure>\n    </testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
  return static_cast<bool>(out);
}

void PrintCoverage(const policy::Revision& revision) {
  std::cout << "\ncoverage: YAML rules\n";
  for (const policy::RuleCoverage& r : revision.tests.rules) {
    std::cout << "  " << (r.matched > 0 ? "covered    " : "NOT COVERED") << "  " << r.policy << "/" << r.rule
              << "  matched in " << r.matched << " case(s), denied in " << r.denied << "\n";
  }
  std::cout << "coverage: Lua lines\n";
  for (const policy::HookSet::FileCoverage& f : revision.hooks->Coverage()) {
    std::vector<std::string> missed;
    int hit = 0;
    for (int line : f.executable) {
      if (f.covered.count(line)) {
        ++hit;
      } else {
        missed.push_back(std::to_string(line));
      }
    }
    double pct = f.executable.empty() ? 100.0 : 100.0 * hit / f.executable.size();
    char text[64];
    std::snprintf(text, sizeof text, "%5.1f%%", pct);
    std::cout << "  " << text << "  " << f.policy << " " << f.file << " (" << hit << "/" << f.executable.size()
              << " lines)" << (missed.empty() ? "" : "; not run: " + Join(missed, ",")) << "\n";
  }
}

int RunTests(const TestCommandOptions& options, const connectors::ConnectorRegistry* registry) {
  policy::Candidate candidate = policy::PrepareRevision(options.paths, registry, policy::TestGate::kSkip);
  if (!candidate.revision) {
    for (const std::string& p : candidate.problems) std::cout << p << "\n";
    std::cout << "FAIL: the policy repository does not load\n";
    return 1;
  }
  policy::Revision& revision = *candidate.revision;
  policy::TestOptions test_options;
  if (!options.run.empty()) {
    try {
      test_options.run = std::regex(options.run);
    } catch (const std::regex_error& e) {
      std::cerr << "gpufed test: --run: invalid regular expression: " << e.what() << "\n";
      return 2;
    }
  }
  if (options.coverage) revision.hooks->EnableCoverage(true);
  revision.tests = policy::RunPolicyTests(revision.config, revision.hooks.get(), test_options);
  for (const policy::CaseResult& c : revision.tests.cases) {
    std::string where = c.location.file + ":" + std::to_string(c.location.line);
    if (c.passed) {
      if (options.verbose) std::cout << "--- PASS: " << c.full_name() << " (" << where << ")\n";
      continue;
    }
    std::cout << "--- FAIL: " << c.full_name() << " (" << where << ")\n";
    if (!c.error.empty()) {
      std::cout << "    error:    " << c.error << "\n";  // its `given` could not be set up
      continue;
    }
    for (const std::string& e : c.hook_errors) std::cout << "    hook error: " << e << "\n";
    std::cout << "    expected: " << c.expected << "\n";
    std::cout << "    actual:   " << c.actual << "\n";
    std::cout << "    explanation:\n";
    for (const std::string& line : c.explanation) std::cout << "      " << line << "\n";
  }
  if (options.coverage) PrintCoverage(revision);
  if (!options.junit.empty() && !WriteJunit(options.junit, revision.tests)) {
    std::cerr << "gpufed test: cannot write " << options.junit << "\n";
    return 1;
  }
  std::cout << (revision.tests.failed ? "FAIL" : "ok") << "  revision " << revision.config.revision << "\n";
  std::cout << revision.tests.passed << " passed, " << revision.tests.failed << " failed\n";
  return revision.tests.failed ? 1 : 0;
}

}  // namespace

void AddTestCommand(CLI::App& app, int* exit_code, const connectors::ConnectorRegistry* registry) {
  auto options = std::make_shared<TestCommandOptions>();
  CLI::App* cmd = app.add_subcommand("test", "Run the PolicyTests of a policy repository (exit 1 on any failure)");
  cmd->add_option("paths", options->paths, "Policy repository directories or files")->required();
  cmd->add_option("--junit", options->junit, "Also write JUnit XML to this file");
  cmd->add_option("--run", options->run, "Only cases whose TEST/CASE name matches this regular expression");
  cmd->add_flag("--coverage", options->coverage, "Report which YAML rules and Lua lines the cases exercised");
  cmd->add_flag("-v,--verbose", options->verbose, "Also list passing cases");
  cmd->callback([options, exit_code, registry] { *exit_code = RunTests(*options, registry); });
}

}  // namespace gpufed::cli

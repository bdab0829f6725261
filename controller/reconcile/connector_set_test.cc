#include "controller/reconcile/connector_set.h"

#include <gtest/gtest.h>

namespace gpufed::reconcile {
namespace {

// A connector that says which declaration made it.
class Tagged : public connectors::Connector {
 public:
  explicit Tagged(int serial) : serial_(serial) {}
  Result<connectors::Observation> Observe(const connectors::CallContext&) override { return connectors::Observation{}; }
  Result<connectors::ApplyOutcome> Apply(const connectors::Action&, const connectors::CallContext&) override {
    return connectors::ApplyOutcome{};
  }
  int serial() const { return serial_; }

 private:
  int serial_;
};

model::Cluster Declared(const std::string& name, const std::string& endpoint = "", int line = 1) {
  model::Cluster c;
  c.metadata.name = name;
  c.metadata.location.file = "clusters.yaml";
  c.metadata.location.line = line;
  if (!endpoint.empty()) c.connector.Set("endpoint", endpoint);
  return c;
}

struct Counting {
  int made = 0;
  std::set<std::string> refuse;
  ConnectorSet::Maker maker() {
    return [this](const model::Cluster& c) -> Result<std::unique_ptr<connectors::Connector>> {
      if (refuse.count(c.metadata.name)) return InvalidArgument("cluster " + c.metadata.name + ": token file missing");
      return std::unique_ptr<connectors::Connector>(std::make_unique<Tagged>(++made));
    };
  }
};

int SerialOf(const ConnectorSet& set, const std::string& name) {
  auto* t = dynamic_cast<Tagged*>(set.Find(name));
  return t == nullptr ? 0 : t->serial();
}

std::vector<std::string> Summary(const std::vector<ConnectorSet::Change>& changes) {
  std::vector<std::string> out;
  out.reserve(changes.size());
  for (const auto& c : changes) out.push_back(c.cluster + ":" + ConnectorSet::ChangeKindName(c.kind));
  return out;
}

std::vector<ConnectorSet::Change> Follow(ConnectorSet& set, const std::vector<model::Cluster>& wanted,
                                         Counting& maker) {
  Result<ConnectorSet::Prepared> p = set.Prepare(wanted, maker.maker());
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return set.Commit(std::move(p).value());
}

TEST(ConnectorSet, AddsReplacesOnlyWhatChangedAndKeepsRemovedClustersUntilIdle) {
  ConnectorSet set;
  Counting maker;
  EXPECT_EQ(Summary(Follow(set, {Declared("a"), Declared("b")}, maker)),
            (std::vector<std::string>{"a:added", "b:added"}));
  ASSERT_EQ(SerialOf(set, "a"), 1);

  // The same declarations, written elsewhere in the repository: nothing is made again.
  EXPECT_TRUE(Follow(set, {Declared("b", "", 40), Declared("a", "", 7)}, maker).empty());
  EXPECT_EQ(maker.made, 2);

  // b's endpoint changes, c is new, a is removed.
  EXPECT_EQ(Summary(Follow(set, {Declared("b", "https://slurm:6820"), Declared("c")}, maker)),
            (std::vector<std::string>{"a:removed", "b:replaced", "c:added"}));
  EXPECT_EQ(SerialOf(set, "b"), 3);
  EXPECT_TRUE(set.retiring("a"));
  ASSERT_NE(set.Find("a"), nullptr) << "a removed cluster keeps its connector while work may run there";
  EXPECT_EQ(set.DeclarationOf("b")->connector.Find("endpoint")->value, "https://slurm:6820");

  // Work still runs on a: it stays; once it is idle it retires, once.
  EXPECT_TRUE(set.RetireIdle({"a"}).empty());
  EXPECT_EQ(Summary(set.RetireIdle({"b"})), (std::vector<std::string>{"a:retired"}));
  EXPECT_EQ(set.Find("a"), nullptr);
  EXPECT_TRUE(set.RetireIdle({}).empty());
  EXPECT_EQ(set.Names(), (std::vector<std::string>{"b", "c"}));
}

TEST(ConnectorSet, ARetiringClusterDeclaredAgainReturnsWithItsConnector) {
  ConnectorSet set;
  Counting maker;
  Follow(set, {Declared("a")}, maker);
  EXPECT_EQ(Summary(Follow(set, {}, maker)), (std::vector<std::string>{"a:removed"}));
  EXPECT_TRUE(Follow(set, {}, maker).empty()) << "removed once, reported once";
  EXPECT_EQ(Summary(Follow(set, {Declared("a")}, maker)), (std::vector<std::string>{"a:returned"}));
  EXPECT_FALSE(set.retiring("a"));
  EXPECT_EQ(SerialOf(set, "a"), 1);
  EXPECT_TRUE(set.RetireIdle({}).empty());
}

TEST(ConnectorSet, AConnectorThatCannotBeMadeChangesNothing) {
  ConnectorSet set;
  Counting maker;
  Follow(set, {Declared("a")}, maker);
  maker.refuse = {"b", "c"};
  Result<ConnectorSet::Prepared> p =
      set.Prepare({Declared("a", "changed"), Declared("b"), Declared("c")}, maker.maker());
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("cluster b: token file missing"), std::string::npos) << p.status().ToString();
  EXPECT_NE(p.status().message().find("cluster c: token file missing"), std::string::npos) << p.status().ToString();
  EXPECT_EQ(SerialOf(set, "a"), 1) << "the old connector still serves";
  EXPECT_EQ(set.Names(), (std::vector<std::string>{"a"}));
  EXPECT_EQ(set.DeclarationOf("a")->connector.Find("endpoint"), nullptr);
}

}  // namespace
}  // namespace gpufed::reconcile

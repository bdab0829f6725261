#include "connectors/kubernetes/kubeconfig.h"

#include "connectors/kubernetes/kubernetes_connector.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace gpufed::connectors::kubernetes {
namespace {

// base64("CA PEM") etc.; the parser does not interpret PEM, it only decodes.
constexpr const char* kConfig = R"(
apiVersion: v1
kind: Config
current-context: aws
clusters:
  - name: eks
    cluster: {server: "https://eks.example:443", certificate-authority-data: "Q0EgUEVN"}
  - name: gke
    cluster: {server: "https://gke.example", certificate-authority: "certs/ca.crt"}
users:
  - name: robot
    user: {token: "s3cr3t-token"}
  - name: cert-user
    user: {client-certificate-data: "Q0VSVA==", client-key-data: "S0VZ"}
  - name: file-user
    user: {tokenFile: "tokens/gke", client-certificate: "/abs/cert.pem", client-key: "key.pem"}
  - name: exec-user
    user: {exec: {command: aws, args: [eks, get-token]}}
contexts:
  - name: aws
    context: {cluster: eks, user: robot, namespace: ml}
  - name: certs
    context: {cluster: eks, user: cert-user}
  - name: gcp
    context: {cluster: gke, user: file-user}
  - name: exec
    context: {cluster: eks, user: exec-user}
)";

TEST(Kubeconfig, UsesCurrentContextWithBearerTokenAndCaData) {
  Result<Credentials> c = ParseKubeconfig(kConfig, "", "/cfg");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->context, "aws");
  EXPECT_EQ(c->server, "https://eks.example:443");
  EXPECT_EQ(c->ca.pem, "CA PEM");
  EXPECT_EQ(c->token, "s3cr3t-token");
  EXPECT_EQ(c->ns, "ml");
}

TEST(Kubeconfig, ReadsClientCertificateAndKeyData) {
  Result<Credentials> c = ParseKubeconfig(kConfig, "certs", "/cfg");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->client_cert.pem, "CERT");
  EXPECT_EQ(c->client_key.pem, "KEY");
  EXPECT_TRUE(c->token.empty());
}

TEST(Kubeconfig, ResolvesRelativeFilesAgainstTheKubeconfigFolder) {
  Result<Credentials> c = ParseKubeconfig(kConfig, "gcp", "/cfg");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->ca.file, "/cfg/certs/ca.crt");
  EXPECT_EQ(c->token_file, "/cfg/tokens/gke");
  EXPECT_EQ(c->client_cert.file, "/abs/cert.pem");
  EXPECT_EQ(c->client_key.file, "/cfg/key.pem");
}

TEST(Kubeconfig, RefusesExecPluginsWithAPrecondition) {
  EXPECT_EQ(ParseKubeconfig(kConfig, "exec", "").status().code(), StatusCode::kFailedPrecondition);
}

// The kubeconfig with `insecure-skip-tls-verify` written as `value`.
std::string WithInsecureSkipTlsVerify(const std::string& value) {
  return "current-context: x\n"
         "clusters: [{name: c, cluster: {server: \"https://x\", insecure-skip-tls-verify: " +
         value +
         "}}]\n"
         "users: [{name: u, user: {token: t}}]\n"
         "contexts: [{name: x, context: {cluster: c, user: u}}]\n";
}

TEST(Kubeconfig, RefusesInsecureSkipTlsVerify) {
  Result<Credentials> c = ParseKubeconfig(WithInsecureSkipTlsVerify("true"), "", "");
  EXPECT_EQ(c.status().code(), StatusCode::kFailedPrecondition);
}

// Any value but a false one is refused: YAML 1.1's "yes" and "on", and a value gpufed
// cannot read, since ignoring it could mean not verifying what the file asks to skip.
TEST(Kubeconfig, RefusesInsecureSkipTlsVerifyWrittenAnyWayButFalse) {
  for (const char* value : {"yes", "On", "\"true\"", "maybe", "[true]", "1"}) {
    EXPECT_EQ(ParseKubeconfig(WithInsecureSkipTlsVerify(value), "", "").status().code(),
              StatusCode::kFailedPrecondition)
        << value;
  }
  for (const char* value : {"false", "no", "off", "~", ""}) {
    EXPECT_TRUE(ParseKubeconfig(WithInsecureSkipTlsVerify(value), "", "").ok()) << value;
  }
}

TEST(Kubeconfig, RefusesAPlainHttpServerNamingTheCluster) {
  for (const char* server : {"http://127.0.0.1:8080", "http://api.example", "HTTP://api.example", "api.example:6443"}) {
    std::string text = std::string(R"(
current-context: x
clusters: [{name: c, cluster: {server: ")") +
                       server + R"("}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
)";
    Result<Credentials> c = ParseKubeconfig(text, "", "");
    EXPECT_EQ(c.status().code(), StatusCode::kFailedPrecondition) << server;
    EXPECT_NE(c.status().message().find("cluster c server"), std::string::npos) << c.status().message();
  }
  EXPECT_TRUE(RequireHttps("https://api.example:6443", "x").ok());
  Status endpoint = RequireHttps("http://127.0.0.1:6443", "cluster gpu-cloud: connector.endpoint");
  EXPECT_EQ(endpoint.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(endpoint.message().find("cluster gpu-cloud: connector.endpoint is http://127.0.0.1:6443"),
            std::string::npos)
      << endpoint.message();
}

TEST(OptionsFromCluster, RefusesAPlainHttpEndpointWithABearerTokenNamingClusterAndField) {
  model::Cluster cluster;
  cluster.metadata.name = "gpu-cloud";
  cluster.connector.type = "kubernetes";
  cluster.connector.Set("endpoint", "http://127.0.0.1:6443");
  cluster.connector.Set("tokenEnv", "KUBE_TOKEN");
  auto env = [](const std::string& name) { return name == "KUBE_TOKEN" ? std::string("s3cr3t-token") : ""; };
  Result<KubernetesOptions> o = OptionsFromCluster(cluster, {}, env);
  ASSERT_EQ(o.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(o.status().message().find("cluster gpu-cloud: connector.endpoint is http://127.0.0.1:6443"),
            std::string::npos)
      << o.status().message();
  EXPECT_EQ(o.status().message().find("s3cr3t"), std::string::npos);
  cluster.connector.Set("endpoint", "https://127.0.0.1:6443");
  EXPECT_TRUE(OptionsFromCluster(cluster, {}, env).ok());
}

TEST(Kubeconfig, UnknownContextIsInvalidArgument) {
  EXPECT_EQ(ParseKubeconfig(kConfig, "nope", "").status().code(), StatusCode::kInvalidArgument);
}

TEST(Kubeconfig, MalformedYamlIsInvalidArgumentWithItsPosition) {
  Result<Credentials> c = ParseKubeconfig("current-context: x\nclusters: [\n", "", "");
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("line 3"), std::string::npos) << c.status().message();
  EXPECT_EQ(ParseKubeconfig("a: 1\n---\nb: 2\n", "", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseKubeconfig("[not, a, mapping]\n", "", "").status().code(), StatusCode::kInvalidArgument);
}

TEST(Kubeconfig, MissingFileIsNotFound) {
  EXPECT_EQ(LoadKubeconfig("/nonexistent/kubeconfig", "").status().code(), StatusCode::kNotFound);
}

// A Cluster's `kubeconfig:` comes from a Git commit: a file that is not one (a device, a
// folder) or is far too large is refused before it is read whole.
TEST(Kubeconfig, AFileTooLargeOrNotAFileIsRefusedBeforeItIsRead) {
  const std::filesystem::path big =
      std::filesystem::temp_directory_path() / ("gpufed-kubeconfig-" + std::to_string(::getpid()));
  {
    std::ofstream out(big, std::ios::binary);
    out << kConfig << "\n# " << std::string((size_t{16} << 20) + 1, 'x') << "\n";
  }
  Result<Credentials> huge = LoadKubeconfig(big.string(), "");
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(huge.status().message().find("kubeconfig " + big.string()), std::string::npos) << huge.status().message();
  std::filesystem::remove(big);
  EXPECT_EQ(LoadKubeconfig("/dev/zero", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadKubeconfig("/tmp", "").status().code(), StatusCode::kInvalidArgument);
}

TEST(Kubeconfig, DescribeNeverShowsSecrets) {
  Result<Credentials> c = ParseKubeconfig(kConfig, "aws", "");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->Describe().find("s3cr3t"), std::string::npos);
  Result<Credentials> k = ParseKubeconfig(kConfig, "certs", "");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->Describe().find("KEY"), std::string::npos);
}

TEST(InCluster, ReadsServiceAccountFiles) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("gpufed-sa-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "token") << "tok\n";
  std::ofstream(dir / "namespace") << "gpufed\n";
  Result<Credentials> c = InClusterCredentials("10.0.0.1", "443", dir.string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://10.0.0.1:443");
  EXPECT_EQ(c->token_file, (dir / "token").string());
  EXPECT_EQ(c->ca.file, (dir / "ca.crt").string());
  EXPECT_EQ(c->ns, "gpufed");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(InClusterCredentials("", "", dir.string()).status().code(), StatusCode::kFailedPrecondition);
}

TEST(Base64, DecodesWithAndWithoutPadding) {
  EXPECT_EQ(*DecodeBase64("aGVsbG8="), "hello");
  EXPECT_EQ(*DecodeBase64("aGVsbG8"), "hello");
  EXPECT_EQ(DecodeBase64("a$b").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpufed::connectors::kubernetes

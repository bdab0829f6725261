#!/usr/bin/env python3
"""promtool on the files in deploy/prometheus, one check per ctest test:

  check-rules   promtool check rules --lint-fatal alerts.yaml   (parses, templates, no duplicates)
  test-rules    promtool test rules alerts_test.yaml            (the alerts' unit tests)
  check-config  promtool check config on prometheus.yml, copied with alerts.yaml into
                WORK_DIR and its credentials_file pointed at a token file there (promtool
                requires the file to exist)

usage: promtool_test.py MODE SOURCE_DIR WORK_DIR"""
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import promlib  # noqa: E402


def run(args, cwd):
    print("$ " + " ".join(args), flush=True)
    r = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=60)
    sys.stdout.write(r.stdout + r.stderr)
    return r.returncode


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    mode, source_dir, work_dir = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    promtool = promlib.require_promtool()
    deploy = os.path.join(source_dir, "deploy", "prometheus")
    if mode == "check-rules":
        sys.exit(run([promtool, "check", "rules", "--lint-fatal", "alerts.yaml"], deploy))
    if mode == "test-rules":
        sys.exit(run([promtool, "test", "rules", "alerts_test.yaml"], deploy))
    if mode == "check-config":
        shutil.rmtree(work_dir, ignore_errors=True)
        os.makedirs(work_dir)
        token = os.path.join(work_dir, "gpufed-metrics.token")
        with open(token, "w") as f:
            f.write(promlib.new_token() + "\n")
        with open(os.path.join(deploy, "prometheus.yml")) as f:
            config = f.read()
        old = "credentials_file: /etc/prometheus/secrets/gpufed-metrics.token"
        if config.count(old) != 1:
            promlib.fail(f"prometheus.yml no longer has exactly one `{old}`; update this test")
        with open(os.path.join(work_dir, "prometheus.yml"), "w") as f:
            f.write(config.replace(old, "credentials_file: " + token))
        shutil.copy(os.path.join(deploy, "alerts.yaml"), work_dir)
        sys.exit(run([promtool, "check", "config", "--lint-fatal", "prometheus.yml"], work_dir))
    sys.exit(__doc__)


if __name__ == "__main__":
    main()

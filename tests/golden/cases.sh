# The golden cases: name and gpufed arguments (relative to the repository root).
golden_cases=(
  "quickstart_plan.txt|plan --config examples/quickstart"
  "quickstart_plan.json|plan --config examples/quickstart --output json"
  "quickstart_validate.txt|validate examples/quickstart"
)
golden_cases+=("quickstart_test.txt|test examples/quickstart --coverage")

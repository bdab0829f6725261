#include "controller/cli/cli.h"

#include <iostream>

#include "controller/cli/commands.h"

namespace gpufed::cli {

int Main(int argc, char** argv, const connectors::ConnectorRegistry* registry, const BuildInfo& build) {
  CLI::App app{"gpufed: policy-as-config federation controller for hybrid GPU fleets"};
  app.require_subcommand(1);
  int exit_code = 0;
  AddVersionCommand(app, build);
  AddValidateCommand(app, &exit_code, registry);
  AddPlanCommand(app, &exit_code, registry);
  AddTestCommand(app, &exit_code, registry);
  AddDocsCommand(app, &exit_code, registry);
  AddAuditCommand(app, &exit_code, registry);
  AddRunCommand(app, &exit_code, registry, build);
  AddStateCommand(app, &exit_code);
  AddSubmitCommand(app, &exit_code);
  AddGetCommand(app, &exit_code);
  AddCancelCommand(app, &exit_code);
  AddExplainCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  return exit_code;
}

}  // namespace gpufed::cli

"""The review page (`jury review`): a local web app beside the command line, which only the CLI imports."""

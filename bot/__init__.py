"""Chat adapters for the Askbase engine: the CLI, the console, the Slack app, the scheduler worker."""

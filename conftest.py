# Shared pytest fixtures live in plugin modules, one per area.
pytest_plugins = ["tests.fixtures.runner", "tests.fixtures.web"]

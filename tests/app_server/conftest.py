"""The shared checks of the app-server flow get pytest's assertion messages."""

import pytest

pytest.register_assert_rewrite("app_server_checks", "app_server_schema")

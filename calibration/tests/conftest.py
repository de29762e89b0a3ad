"""pytest rewrites the asserts of the shared helpers too, so that a failing one shows its values."""

import pytest

pytest.register_assert_rewrite("calibration_test_support")

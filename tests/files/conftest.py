from tests.files.fresh_database import fresh_database  # noqa: F401 - a database of the test's own

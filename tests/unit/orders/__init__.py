"""Unit tests of the order machinery every kind shares (plugins/module_utils/orders): the secret template."""

"""Unit tests of the KeystoneUser pure core (plugins/module_utils/keystoneuser), one per spec row."""

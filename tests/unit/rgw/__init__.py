"""Unit tests of the RGW edge (plugins/module_utils/rgw): signing, encoding, errors, redaction, readiness."""

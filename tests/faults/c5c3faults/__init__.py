"""The fault matrix of the KeystoneUser pass (``make faults``): real faults on a real stack, an invariant observer
that samples throughout, and the report in docs/reliability.md. See docs/testing.md ("The fault matrix")."""

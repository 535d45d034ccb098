#!/usr/bin/env bash
# Runs a self-contained check beside the main command, so that a 2-core machine spends the main command's waits
# (integration tests mostly wait for controllers) on the check: make test runs ansible-test sanity this way.
# The check runs nice'd with its output held in a file and printed after the main command; the exit status is
# the main command's, or the check's when only the check failed.
#   usage: alongside.sh "<check command>" <main command> [args...]
set -uo pipefail
check="$1"; shift
log="$(mktemp "${TMPDIR:-/tmp}/alongside.XXXXXX")"
trap 'rm -f "$log"' EXIT
start=$(date +%s)
( nice -n 10 bash -c "$check" >"$log" 2>&1 ) &
checker=$!
"$@"
main=$?
wait "$checker"
checked=$?
echo "---- beside it: $check (exit $checked; main command took $(( $(date +%s) - start )) s) ----"
cat "$log"
if [ "$main" -ne 0 ]; then exit "$main"; fi
exit "$checked"

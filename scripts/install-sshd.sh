#!/usr/bin/env bash
# The SSH tests start a real OpenSSH server on 127.0.0.1, and `tpuwizard run` copies a folder
# with rsync over it where both ends have rsync. Install what is missing when we can (root with
# apt-get); otherwise those tests are skipped (or take the tar path) with the reason.
# Idempotent: with everything present it installs nothing and touches nothing.
set -u
missing=()
if ! { [ -x /usr/sbin/sshd ] || command -v sshd >/dev/null 2>&1; }; then
  missing+=(openssh-server openssh-client)
fi
if ! command -v rsync >/dev/null 2>&1; then
  missing+=(rsync)
fi
if [ "${#missing[@]}" = "0" ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing ${missing[*]} for the SSH and sync tests..."
  if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends "${missing[@]}" >/dev/null; then
    exit 0
  fi
fi
echo "Not installed and could not be: ${missing[*]}. The SSH tests will be skipped and the"
echo "sync tests that need rsync on both ends will be skipped."
exit 0

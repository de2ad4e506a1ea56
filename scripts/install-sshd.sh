#!/usr/bin/env bash
# The SSH tests start a real OpenSSH server on 127.0.0.1. Install it when it is missing and we
# can (root with apt-get); otherwise those tests are skipped with the reason.
set -u
if [ -x /usr/sbin/sshd ] || command -v sshd >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing openssh-server for the SSH tests..."
  if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends openssh-server openssh-client >/dev/null; then
    exit 0
  fi
fi
echo "openssh-server is not installed and could not be: the SSH tests will be skipped."
exit 0

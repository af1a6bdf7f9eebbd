#!/usr/bin/env bash
# Whether the SSH login has the rights reprobench needs on this host. Runs as the login itself (never
# through sudo), on every host, before anything on any host changes: every host's claim waits for all of
# these checks (components/host-access.ts HostRights). Two rights:
#   root's    every other host script runs as root: the login is root, or (SUDO=1) it may run
#             `sudo -n -- bash -s` — exactly what the scripts run — as root, with no password and no terminal
#   Docker    the login itself can talk to dockerd: the Docker provider runs `docker system dial-stdio` as
#             the login over SSH, where sudo cannot help (the docker group, or root)
# Every missing right is named in one message (exit 1). Otherwise prints one line (also the refresh
# probe): login=<user> root=<login|sudo> docker=ok.
# Inputs (env):
#   HOST_NAME  the host's name in the stack (the message names it)
#   SUDO       1 = hosts[].ssh.sudo is set: root's rights come through sudo
set -euo pipefail
: "${HOST_NAME:?}"
SUDO=${SUDO:-0}
user=$(id -un)
missing=()

if [ "$SUDO" = 1 ]; then
  root_via=sudo
  if ! command -v sudo >/dev/null; then
    missing+=("root's rights: sudo is not installed, so $user cannot act as root (install sudo and give $user NOPASSWD sudo, or log in as root)")
  elif ! said=$(printf 'id -u\n' | sudo -n -- bash -s 2>&1); then
    said=$(tail -n 1 <<<"$said")
    case "$said" in
      *"password is required"*)
        # sudo -n says this both when a rule asks for a password and when there is no rule at all.
        admin_group=$(id -nG | tr ' ' '\n' | grep -Ex 'sudo|wheel|admin' | head -n 1 || true)
        if [ -n "$admin_group" ]; then
          why="sudo asks $user for a password (it is in the $admin_group group, whose rule wants one)"
        else
          why="$user has no sudo rule that needs no password (none at all, or one that asks for a password)"
        fi
        missing+=("root's rights: $why; reprobench runs without a terminal and needs NOPASSWD sudo: add '$user ALL=(ALL) NOPASSWD: ALL' in /etc/sudoers.d/, or log in as root") ;;
      *tty*)
        missing+=("root's rights: sudo wants a terminal on this host (Defaults requiretty); reprobench runs without one: add 'Defaults:$user !requiretty' in /etc/sudoers.d/ (sudo said: $said)") ;;
      *)
        missing+=("root's rights: $user may not run 'sudo -n -- bash -s' as root (sudo said: $said); give $user NOPASSWD sudo, or log in as root") ;;
    esac
  elif [ "$said" != 0 ]; then
    missing+=("root's rights: 'sudo -n -- bash -s' runs as uid $said, not root; give $user NOPASSWD sudo to root, or log in as root")
  fi
elif [ "$(id -u)" = 0 ]; then
  root_via=login
else
  root_via=none
  missing+=("root's rights: the login $user is not root and hosts[].ssh.sudo is not set (set it when $user has NOPASSWD sudo, or log in as root)")
fi

if ! command -v docker >/dev/null; then
  missing+=("Docker: $user finds no docker CLI (PATH=$PATH); the Docker provider runs 'docker system dial-stdio' as the login")
elif ! said=$(docker version --format '{{.Server.Version}}' </dev/null 2>&1); then
  socket=/var/run/docker.sock
  group=$(stat -c %G "$socket" 2>/dev/null || echo docker)
  if grep -qi "permission denied" <<<"$said"; then
    missing+=("Docker: $user may not use the Docker socket $socket (owned by group $group; $user is in: $(id -nG "$user")). The Docker provider dials it as the login, where sudo cannot help: add $user to the group (usermod -aG $group $user)")
  else
    missing+=("Docker: the engine does not answer to $user: $(tail -n 1 <<<"$said")")
  fi
fi

if [ "${#missing[@]}" -gt 0 ]; then
  {
    echo "host $HOST_NAME ($(hostname)): the SSH login $user lacks what reprobench needs there, so nothing was changed on any host:"
    printf '  - %s\n' "${missing[@]}"
  } >&2
  exit 1
fi
echo "login=$user root=$root_via docker=ok"

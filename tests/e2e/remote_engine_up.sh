#!/bin/sh
# A second docker engine on this machine with a file system of its own, as an
# engine on another host would be, reached only over ssh on the loopback:
# a privileged podman container running Debian's dockerd and sshd (this
# host's /usr bound read-only, its own /etc, /root, /tmp and /var/lib/docker),
# the host network so its sshd listens on 127.0.0.1:PORT. No registry: the
# test image is copied in with `docker save | docker load` over ssh.
#
#   remote_engine_up.sh WORK PORT NAME IMAGE BIND...
#
# WORK gets etc/, root/, the client's key and known_hosts, and bin/ssh (the
# client ssh with this config: -F, since ssh reads ~/.ssh from the account's
# passwd home whatever HOME says). Each BIND is a host path bound at the same
# path (np-exec's binary directory, the shared storage). Prints nothing on
# success; exits non-zero with the reason on stderr.
set -eu
work=$1 port=$2 name=$3 image=$4
shift 4
mkdir -p "$work/etc/ssh" "$work/root/.ssh" "$work/bin"
cp /etc/ld.so.cache "$work/etc/"
printf 'root:x:0:0:root:/root:/bin/sh\nsshd:x:100:65534::/run/sshd:/usr/sbin/nologin\n' >"$work/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$work/etc/group"
rm -f "$work/etc/ssh/host_key" "$work/etc/ssh/host_key.pub" "$work/client_key" "$work/client_key.pub"
ssh-keygen -q -t ed25519 -N '' -f "$work/etc/ssh/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$work/client_key"
cp "$work/client_key.pub" "$work/root/.ssh/authorized_keys"
chmod 700 "$work/root" "$work/root/.ssh"
chmod 600 "$work/root/.ssh/authorized_keys"
cat >"$work/etc/ssh/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey /etc/ssh/host_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile /run/sshd.pid
CONF
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$work/etc/ssh/host_key.pub")" >"$work/known_hosts"
cat >"$work/ssh_config" <<CONF
Host *
  IdentityFile $work/client_key
  IdentitiesOnly yes
  UserKnownHostsFile $work/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
CONF
printf '#!/bin/sh\nexec /usr/bin/ssh -F %s/ssh_config "$@"\n' "$work" >"$work/bin/ssh"
chmod 755 "$work/bin/ssh"
binds=""
for b in "$@"; do binds="$binds -v $b:$b"; done
# shellcheck disable=SC2086
podman run -d --name "$name" --privileged --network host -v /usr:/usr:ro \
  -v "$work/etc:/etc" -v "$work/root:/root" $binds "$image" /bin/sh -c \
  'mkdir -p /run/sshd /var/run /var/lib/docker; /usr/sbin/sshd -f /etc/ssh/sshd_config -E /tmp/sshd.log; exec /usr/sbin/dockerd --iptables=false --ip6tables=false --bridge=none --storage-driver=vfs >/tmp/dockerd.log 2>&1' >/dev/null
remote="ssh://root@127.0.0.1:$port"
i=0
until PATH="$work/bin:$PATH" DOCKER_HOST=$remote docker version >/dev/null 2>&1; do
  i=$((i + 1))
  if [ $i -gt 60 ]; then
    echo "the remote engine did not answer over ssh" >&2
    podman logs "$name" >&2 || true
    exit 1
  fi
  sleep 0.5
done
docker save "$image" | PATH="$work/bin:$PATH" DOCKER_HOST=$remote docker load >/dev/null
